import sys, collections, re
import os
RUNS = os.environ.get('RUNS', '/tmp/s11')  # where run2.sh wrote <name>.log, <name>.tsv, <name>.tsv.probe, <name>.c.tsv
# usage: window2.py <name> [start-pattern] [end-pattern]
name = sys.argv[1]
sp = sys.argv[2] if len(sys.argv) > 2 else 'broadcast: publishing'
ep = sys.argv[3] if len(sys.argv) > 3 else 'broadcast: 1,000,000 deliveries'
t0 = t1 = None
for line in open(f'{RUNS}/{name}.log'):
    ts, _, rest = line.partition(' ')
    if t0 is None and sp in rest: t0 = float(ts)
    if t0 is not None and t1 is None and ep in rest: t1 = float(ts)
first = {}; last = {}
for line in open(f'{RUNS}/{name}.tsv'):
    t, kind, pid, tid, comm, ut, st, mf, run, wait, sl = line.rstrip('\n').split('\t')
    t = float(t)
    if t < t0 - 0.1 or t > t1 + 0.1: continue
    k = (kind, pid, tid, comm)
    v = (int(ut), int(st), int(mf), int(run), int(wait), int(sl))
    if k not in first: first[k] = v
    last[k] = v
agg = collections.defaultdict(lambda: [0]*6)
for k in last:
    kind, pid, tid, comm = k
    c = re.sub(r'\d+$', '#', comm)
    d = [b - a for a, b in zip(first[k], last[k])]
    for i in range(6): agg[(kind, c)][i] += d[i]
print(f'{name}: window {t1-t0:.2f}s')
print(f"{'kind':7} {'threads':18} {'user':>6} {'sys':>6} {'minflt':>8} {'run s':>7} {'wait s':>7} {'slices':>8}")
tot = collections.defaultdict(lambda: [0]*6)
for (kind, c), v in sorted(agg.items()):
    if v[3] < 5e6: continue
    print(f'{kind:7} {c:18} {v[0]/100:6.2f} {v[1]/100:6.2f} {v[2]:8d} {v[3]/1e9:7.2f} {v[4]/1e9:7.2f} {v[5]:8d}')
    for i in range(6): tot[kind][i] += v[i]
for kind, v in tot.items():
    print(f'{kind:7} {"TOTAL":18} {v[0]/100:6.2f} {v[1]/100:6.2f} {v[2]:8d} {v[3]/1e9:7.2f} {v[4]/1e9:7.2f} {v[5]:8d}')
