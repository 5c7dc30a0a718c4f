import os, sys, time
# samples per-thread CPU ticks of herald/tansu/redis processes every 0.2 s
out = open(sys.argv[1], 'w')
def procs():
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try:
            cmd = open(f'/proc/{pid}/cmdline','rb').read().replace(b'\0',b' ').decode(errors='replace')
        except Exception: continue
        if 'herald' in cmd or 'tansu' in cmd or 'redis-server' in cmd:
            if 'sampler.py' in cmd or 'stack' in cmd.split(' ')[0]: continue
            yield pid, cmd
while True:
    t = time.time()
    for pid, cmd in list(procs()):
        kind = 'worker' if ' worker' in cmd else ('bench' if ' bench' in cmd else ('tansu' if 'tansu' in cmd else ('redis' if 'redis' in cmd else 'other')))
        try: tids = os.listdir(f'/proc/{pid}/task')
        except Exception: continue
        for tid in tids:
            try: s = open(f'/proc/{pid}/task/{tid}/stat').read()
            except Exception: continue
            r = s.rfind(')'); comm = s[s.find('(')+1:r]; f = s[r+2:].split()
            out.write(f'{t:.3f}\t{kind}\t{pid}\t{tid}\t{comm}\t{int(f[11])+int(f[12])}\n')
    out.flush()
    time.sleep(0.2)
