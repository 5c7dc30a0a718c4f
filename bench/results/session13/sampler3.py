import os, sys, time
# every 0.1 s: /proc/stat cpu line, and every process's utime+stime (ticks) with its comm
out = open(sys.argv[1], 'w')
while True:
    t = time.time()
    cpu = open('/proc/stat').readline().split()[1:]
    out.write(f'{t:.3f}\tSTAT\t' + ' '.join(cpu) + '\n')
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: s = open(f'/proc/{pid}/stat').read()
        except Exception: continue
        r = s.rfind(')'); comm = s[s.find('(')+1:r]; f = s[r+2:].split()
        out.write(f'{t:.3f}\t{pid}\t{comm}\t{int(f[11])+int(f[12])}\n')
    out.flush()
    time.sleep(0.1)
