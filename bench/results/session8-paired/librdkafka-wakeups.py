# Usage: python3 librdkafka-wakeups.py <worker log or bench stderr>...  (runs with statistics.interval.ms set)
# Prints, per librdkafka client, the broker threads' wake-ups and requests between its first and last statistics document.
import sys, json, collections
docs=collections.defaultdict(list)
for path in sys.argv[1:]:
    for line in open(path, errors='replace'):
        i=line.find('librdkafka.statistics=')
        if i<0: continue
        j=line.index('{',i)
        dec=json.JSONDecoder()
        try: d,_=dec.raw_decode(line[j:])
        except Exception as e: continue
        docs[d['name']].append(d)
for name,ds in sorted(docs.items()):
    if len(ds)<2: continue
    a,b=ds[0],ds[-1]
    secs=(b['ts']-a['ts'])/1e6
    txm=b.get('txmsgs',0)-a.get('txmsgs',0)
    rxm=b.get('rxmsgs',0)-a.get('rxmsgs',0)
    if txm==0 and rxm==0: continue
    print(f"{name} {b['type']} {secs:.1f}s txmsgs {txm} rxmsgs {rxm}")
    for bn,bb in b['brokers'].items():
        ba=a['brokers'].get(bn,{})
        w=bb['wakeups']-ba.get('wakeups',0); tx=bb['tx']-ba.get('tx',0)
        if w==0 and tx==0: continue
        reqs={k:v-ba.get('req',{}).get(k,0) for k,v in bb.get('req',{}).items() if v-ba.get('req',{}).get(k,0)>0}
        print(f"  {bn[:40]} wakeups {w} ({w/max(secs,1e-9):.0f}/s) requests {tx} {reqs} int_latency avg {bb['int_latency']['avg']}us rtt avg {bb['rtt']['avg']}us")
    for tn,t in b.get('topics',{}).items():
        bs=t.get('batchsize',{}); bc=t.get('batchcnt',{})
        if bs.get('cnt',0): print(f"  topic {tn[-30:]} batchsize avg {bs['avg']} p50 {bs['p50']} cnt {bs['cnt']} batchcnt avg {bc['avg']}")
