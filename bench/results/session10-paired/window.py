import sys, collections, re
path, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
first = {}; last = {}
for line in open(path):
    t, kind, pid, tid, comm, ticks = line.rstrip('\n').split('\t')
    t = float(t); ticks = int(ticks)
    if t < t0 - 0.2 or t > t1 + 0.2: continue
    k = (kind, pid, tid, comm)
    if k not in first: first[k] = ticks
    last[k] = ticks
agg = collections.Counter()
for k in last:
    kind, pid, tid, comm = k
    c = re.sub(r'\d+$', '#', comm)
    agg[(kind, c)] += last[k] - first[k]
tot = collections.Counter()
for (kind, c), v in sorted(agg.items()):
    if v: print(f'{kind:7} {c:20} {v/100:6.2f}')
    tot[kind] += v
print({k: v/100 for k, v in tot.items()})
