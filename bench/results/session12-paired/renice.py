# usage: renice.py <nice>: sets every thread of every bench-spawned worker to <nice>, once per thread
import os, sys, time
# renice each thread of every bench-spawned worker (cmdline contains ' worker --roles') once, to argv[1]
n = int(sys.argv[1]); done = set()
while True:
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: cmd = open(f'/proc/{pid}/cmdline','rb').read().replace(b'\0', b' ')
        except Exception: continue
        if b' worker --roles' not in cmd: continue
        try: tids = os.listdir(f'/proc/{pid}/task')
        except Exception: continue
        for t in tids:
            if t in done: continue
            try: os.setpriority(os.PRIO_PROCESS, int(t), n); done.add(t)
            except Exception: pass
    time.sleep(0.1)
