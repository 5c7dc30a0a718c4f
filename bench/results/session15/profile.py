#!/usr/bin/env python3
"""Where the machine's CPU went in a time window of a system-wide `perf record -a -g`.

usage: perf script -F pid,tid,comm,time,ip,sym,dso -i perf.data > samples.txt
       profile.py samples.txt --timeline
       profile.py samples.txt <start> <end> [<start> <end> ...]

`--timeline` prints the samples of every party per 0.2 s, which is how the windows are
found: the worker busy with the broker is the fan-out; the bench process busy with the broker
(and no worker) is a ceiling or the count after a fan-out's clock stopped.

Each window (perf timestamps, seconds) is summarized separately: samples per process
(the broker is `tokio-rt-worker`, Redis `redis-server`/`bio_*`, Herald's processes by pid)
and, inside the busiest Herald process, what its threads ran, by leaf frame.
"""
import collections
import re
import sys


def samples(path):
    header = re.compile(r"^\s*(\S.*?)\s+(\d+)/(\d+)\s+([0-9.]+):\s*$")
    current = None
    for line in open(path, errors="replace"):
        match = header.match(line)
        if match:
            if current:
                yield current
            comm, pid, tid, time = match.groups()
            current = {"comm": comm, "pid": int(pid), "tid": int(tid), "time": float(time), "frames": []}
        elif current is not None and line.strip():
            parts = line.strip().split(" ", 1)
            if len(parts) == 2:
                rest = parts[1]
                dso = rest[rest.rfind("(") + 1:-1] if rest.endswith(")") else ""
                sym = rest[:rest.rfind("(")].strip() if "(" in rest else rest
                current["frames"].append((sym, dso))
    if current:
        yield current


def party(sample):
    comm = sample["comm"]
    if sample["pid"] == 0:
        return "idle"
    if comm.startswith("tokio-rt"):
        return "broker"
    if comm.startswith("redis") or comm.startswith("bio_") or comm.startswith("jemalloc"):
        return "redis"
    return "pid %d" % sample["pid"]


def category(sample):
    frames = sample["frames"]
    if not frames:
        return "unknown"
    sym, dso = frames[0]
    dsos = [d for _, d in frames]
    rdk_thread = sample["comm"].startswith("rdk:")
    prefix = "librdkafka thread: " if rdk_thread else "caller thread: "
    if "LZ4" in sym:
        kind = "LZ4"
    elif "kallsyms" in dso:
        kind = "kernel"
    elif re.search(r"(^|_)(int_)?(malloc|free|cfree|realloc|calloc)", sym) and "libc" in dso:
        kind = "malloc/free"
    elif "libc" in dso and ("memmove" in sym or "memcpy" in sym or "memset" in sym):
        kind = "memmove/memcpy"
    elif "librdkafka" in dso:
        kind = "librdkafka"
    elif "hiredis" in dso:
        kind = "hiredis"
    elif "libc" in dso or "vdso" in dso:
        kind = "libc (locks, clock, compares)"
    else:
        kind = "Herald and Swift runtime"
    return prefix + kind


def main():
    path = sys.argv[1]
    if sys.argv[2:] == ["--timeline"]:
        buckets = collections.defaultdict(collections.Counter)
        for sample in samples(path):
            buckets[int(sample["time"] * 5) / 5][party(sample)] += 1
        for start in sorted(buckets):
            counts = buckets[start]
            print("%.1f  %s" % (start, "  ".join("%s %d" % item for item in counts.most_common())))
        return
    windows = [(float(a), float(b)) for a, b in zip(sys.argv[2::2], sys.argv[3::2])]
    all_samples = list(samples(path))
    for start, end in windows:
        inside = [s for s in all_samples if start <= s["time"] < end]
        parties = collections.Counter(party(s) for s in inside)
        total = sum(parties.values())
        print("window %.1f-%.1f s: %d samples" % (start, end, total))
        for name, count in parties.most_common():
            print("  %-24s %5d  %5.1f %%" % (name, count, 100.0 * count / total))
        busiest = next((name for name, _ in parties.most_common() if name.startswith("pid ")), None)
        if busiest is None:
            continue
        mine = [s for s in inside if party(s) == busiest]
        kinds = collections.Counter(category(s) for s in mine)
        print("  inside %s (%d samples):" % (busiest, len(mine)))
        for name, count in sorted(kinds.items()):
            print("    %-52s %5d  %5.1f %%" % (name, count, 100.0 * count / len(mine)))


if __name__ == "__main__":
    main()
