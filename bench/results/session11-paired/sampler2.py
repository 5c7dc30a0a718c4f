import os, sys, time
# per-thread utime, stime, minflt, schedstat(run ns, wait ns, slices) of herald/tansu/redis every 0.2 s
out = open(sys.argv[1], 'w')
probe = open(sys.argv[1] + '.probe', 'w')
def procs():
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: cmd = open(f'/proc/{pid}/cmdline','rb').read().replace(b'\0',b' ').decode(errors='replace')
        except Exception: continue
        if 'herald' in cmd or 'tansu' in cmd or 'redis-server' in cmd:
            if 'sampler' in cmd or 'stack' in cmd.split(' ')[0]: continue
            yield pid, cmd
while True:
    t = time.time()
    for pid, cmd in list(procs()):
        kind = 'worker' if ' worker' in cmd else ('bench' if ' bench' in cmd else ('tansu' if 'tansu' in cmd else ('redis' if 'redis' in cmd else 'other')))
        try: tids = os.listdir(f'/proc/{pid}/task')
        except Exception: continue
        for tid in tids:
            try:
                s = open(f'/proc/{pid}/task/{tid}/stat').read()
                ss = open(f'/proc/{pid}/task/{tid}/schedstat').read().split()
            except Exception: continue
            r = s.rfind(')'); comm = s[s.find('(')+1:r]; f = s[r+2:].split()
            out.write(f'{t:.3f}\t{kind}\t{pid}\t{tid}\t{comm}\t{f[11]}\t{f[12]}\t{f[7]}\t{ss[0]}\t{ss[1]}\t{ss[2]}\n')
    out.flush()
    c0 = time.thread_time(); x = 0
    for i in range(20000): x += i * i
    probe.write(f'{t:.3f}\t{(time.thread_time() - c0) * 1e3:.3f}\n'); probe.flush()
    time.sleep(0.2)
