# Usage: python3 stats.py <logs>... : per librdkafka client, per statistics interval: msgs, bytes, requests by type
import sys, json, collections
docs=collections.defaultdict(list)
for path in sys.argv[1:]:
    for line in open(path, errors='replace'):
        i=line.find('librdkafka.statistics=')
        if i<0: continue
        j=line.index('{',i)
        try: d,_=json.JSONDecoder().raw_decode(line[j:])
        except Exception: continue
        docs[d['name']].append(d)
def brok(d):
    tx=txb=0; req=collections.Counter()
    for bn,b in d['brokers'].items():
        tx+=b['tx']; txb+=b['txbytes']
        for k,v in b.get('req',{}).items(): req[k]+=v
    return tx,txb,req
for name,ds in sorted(docs.items()):
    ds.sort(key=lambda d:d['ts'])
    for a,b in zip(ds,ds[1:]):
        txm=b.get('txmsgs',0)-a.get('txmsgs',0); txmb=b.get('txmsg_bytes',0)-a.get('txmsg_bytes',0)
        rxm=b.get('rxmsgs',0)-a.get('rxmsgs',0)
        ta,tba,ra=brok(a); tb,tbb,rb=brok(b)
        req={k:v-ra.get(k,0) for k,v in rb.items() if v-ra.get(k,0)>0}
        if txm==0 and rxm==0 and sum(req.values())<20: continue
        print(f"{b['time']} {name[:38]:38} {b['type'][:4]} txm {txm:7d} msgB/rec {txmb/max(txm,1):6.0f} wireB/rec {(tbb-tba)/max(txm,1):6.0f} rxm {rxm:7d} reqs {tb-ta:5d} {dict(sorted(req.items()))}")
