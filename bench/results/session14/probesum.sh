#!/bin/bash
# probesum.sh <logdir>: lane time split for the broadcast and expression tasks
grep -h 'probe task' $1/*.log | python3 -c "
import sys,re
rows=[{k:int(v) for k,v in re.findall(r'(\w+)=(\d+)',l)} for l in sys.stdin]
b=rows[64:96]; e=rows[96:128]
for name,ch in [('broadcast',b),('expression',e)]:
    t=sum(r['totalMs'] for r in ch); f=sum(r['fullMs'] for r in ch); p=sum(r['fullPolls'] for r in ch)
    print(' ',name,'tasks',len(ch),'lane ms',t,'queue-full ms',f,'(%d%%)'%(100*f/max(t,1)),'other ms',t-f,'polls',p)
"
