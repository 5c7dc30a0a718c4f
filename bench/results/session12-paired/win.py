# usage: RUNS=/tmp/s12 win.py <name> [label]: each thread group's CPU between the publish of the
# 1M broadcast and the moment its clock stopped (publish + the committed seconds), from run2.sh's files
import sys, collections, re, os
RUNS = os.environ.get('RUNS', '/tmp/s12')
name = sys.argv[1]
label = sys.argv[2] if len(sys.argv) > 2 else 'broadcast'
t0 = t1 = None
for line in open(f'{RUNS}/{name}.log'):
    ts, _, rest = line.partition(' ')
    if t0 is None and f'{label}: publishing' in rest: t0 = float(ts)
    m = re.search(r'committed in ([\d.]+) s', rest)
    if t0 is not None and t1 is None and m and f'{label}:' in rest: t1 = t0 + float(m.group(1))
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
