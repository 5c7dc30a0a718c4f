import json,sys
for f in sys.argv[1:]:
  d=json.load(open(f))
  for c in [d.get('ceiling'),d.get('ceilingAfter')]:
    if not c: continue
    u=c['cpu'];n=c['records']
    print(f[-9:-5],'ceil',n,round(c['observedPerSecond']),' '.join(f'{k}={u[k]/n*1e6:.2f}' for k in ['benchmark','benchmarkLibrdkafka','broker','machine']), 'cores',round(u['machine']/u['wallSeconds'],2),'probe',round(u['hostProbeMilliseconds'],2))
  for x in d['fanouts']:
    if x['population']!=1000000: continue
    u=x['cpu'];n=x['expected']
    print(f[-9:-5],x['label'][:12],n,round(x['deliveriesPerSecond']),round(x.get('ratioToCeiling') or 0,2),' '.join(f'{k}={u[k]/n*1e6:.2f}' for k in ['workers','workersLibrdkafka','broker','redis','benchmark','machine']),'cores',round(u['machine']/u['wallSeconds'],2),'probe',round(u['hostProbeMilliseconds'],2))
