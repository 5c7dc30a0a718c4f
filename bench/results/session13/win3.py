import sys, re, collections
name = sys.argv[1]; label = sys.argv[2] if len(sys.argv) > 2 else 'broadcast'
nth = int(sys.argv[3]) if len(sys.argv) > 3 else 1
RUNS='/tmp/s13'
t0 = t1 = None
for line in open(f'{RUNS}/{name}.log'):
    ts, _, rest = line.partition(' ')
    if f'{label}: publishing' in rest:
        nth -= 1
        if nth == 0: t0 = float(ts)
    m = re.search(r'committed in ([\d.]+) s', rest)
    if t0 is not None and t1 is None and m and f'{label}:' in rest: t1 = t0 + float(m.group(1))
first = {}; last = {}; st0 = st1 = None; ts0 = ts1 = None
for line in open(f'{RUNS}/{name}.s3'):
    p = line.rstrip('\n').split('\t'); t = float(p[0])
    if t < t0 - 0.05 or t > t1 + 0.05: continue
    if p[1] == 'STAT':
        v = list(map(int, p[2].split()))
        if st0 is None: st0, ts0 = v, t
        st1, ts1 = v, t
        continue
    k = (p[1], p[2]); v = int(p[3])
    if k not in first: first[k] = v
    last[k] = v
d = [b - a for a, b in zip(st0, st1)]
names = 'user nice system idle iowait irq softirq steal'.split()
print(f'{name}: window {t1-t0:.2f}s, stat span {ts1-ts0:.2f}s:', ' '.join(f'{n}={x/100:.2f}' for n, x in zip(names, d)))
busy = sum(d[i] for i in (0,1,2,5,6,7))
procs = sorted(((last[k]-first[k], k) for k in last), reverse=True)
tot = sum(x for x, _ in procs)
print(f'busy {busy/100:.2f} s, sum of processes {tot/100:.2f} s, unattributed {(busy-tot)/100:.2f} s')
for x, k in procs[:12]:
    if x: print(f'  {x/100:6.2f}  {k[0]:>7} {k[1]}')
