import json,sys
for f in sys.argv[1:]:
    r=json.load(open(f)); rid=r['runId'].replace('bench-','')
    c1=r['ceiling']; c2=r['ceilingAfter']
    fo={ (p['label'],p['population']):p for p in r['fanouts']}
    b=fo[('broadcast',1000000)]; l=fo[('broadcast + targeted events',1000000)]
    def cpu(p):
        c=p['cpu']; return '%.1f (%.1f) / %.1f / %.1f / %.2f / %.2f'%(c['workers'],c['workersLibrdkafka'],c['broker'],c['redis'],c['benchmark'],(c['machine']-c['workers']-c['broker']-c['redis']-c['benchmark']))
    lat={x['label']:x for x in r['latency']}
    mem={m['population']:max(m['peakRSSBytes']) for m in r['memory']}
    ref=max(c1['observedPerSecond'],c2['observedPerSecond'])
    refc = c1 if c1['observedPerSecond']==ref else c2
    print(f"| `{rid}` | {int(c1['observedPerSecond']):,} / {int(c2['observedPerSecond']):,} | **{b['seconds']:.2f} s**, {b['ratioToCeiling']:.2f} x | {l['seconds']:.2f} s, {l['ratioToCeiling']:.2f} x | {cpu(b)} | {b['cpu']['hostProbeMilliseconds']:.2f} / {refc['cpu']['hostProbeMilliseconds']:.2f} ms | **{lat['idle']['p99Milliseconds']:.1f} ms** | **{lat['during-broadcast']['p99Milliseconds']:.1f} ms** | {mem[100000]/1048576:.0f} / {mem[1000000]/1048576:.0f} MB | {b.get('committedDeliveries')} {b['observed']} |")
