import sys, statistics
import os
RUNS = os.environ.get('RUNS', '/tmp/s11')  # where run2.sh wrote <name>.log, <name>.tsv, <name>.tsv.probe, <name>.c.tsv
def window(name, sp, ep):
    t0 = t1 = None
    for line in open(f'{RUNS}/{name}.log'):
        ts, _, rest = line.partition(' ')
        if t0 is None and sp in rest: t0 = float(ts)
        if t0 is not None and t1 is None and ep in rest: t1 = float(ts)
    return t0, t1
for name in sys.argv[1:]:
    py = [tuple(map(float, l.split())) for l in open(f'{RUNS}/{name}.tsv.probe')]
    cc = [tuple(map(float, l.split())) for l in open(f'{RUNS}/{name}.c.tsv')]
    out = []
    for label, sp, ep in [('ceil', 'herald bench', 'transactional: '), ('seed', 'seeding (bulk) 0', 'seeded'), ('bcast', 'broadcast: publishing', 'broadcast: 1,000,000 deliveries'), ('after', 'again after', 'idempotent')]:
        a, b = window(name, sp, ep)
        if not (a and b): out.append(f'{label} -'); continue
        p = statistics.median([m for t, m in py if a <= t <= b] or [0])
        cs = [r for r in cc if a <= r[0] <= b]
        med = [statistics.median([r[i] for r in cs]) if cs else 0 for i in (1, 2, 3)]
        out.append(f'{label} py {p:.2f} alu {med[0]:.2f} 256k {med[1]:.2f} 8M {med[2]:.2f}')
    print(name, ' | '.join(out))
