import json,glob,sys
for n in sys.argv[1:]:
    for f in glob.glob(f'/tmp/s13/res-{n}/*.json'):
        r=json.load(open(f))
        for k in ('ceiling','ceilingAfter'):
            c=r.get(k)
            if not c: continue
            cpu=c['cpu']; recs=c['records']
            print(n,k, int(c['observedPerSecond']), 'wall',round(cpu['wallSeconds'],2),'broker',round(cpu['broker'],2),'us/rec %.2f'%(cpu['broker']/recs*1e6),'bench',round(cpu['benchmark'],2),'machine',round(cpu['machine'],2),'probe',cpu['hostProbeMilliseconds'], 'others', round(cpu['machine']-cpu['broker']-cpu['benchmark'],2))
