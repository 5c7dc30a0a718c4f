#!/bin/bash
# A quick bench (no latency, memory or micro phases) under a system-wide perf record.
# usage (from the repository root): bench/results/session15/perfall.sh <herald binary> <out dir> [Hz, default 299]
# Then: perf script -F pid,tid,comm,time,ip,sym,dso -i <out>/perf.data > <out>/samples.txt
#       python3 bench/results/session15/profile.py <out>/samples.txt --timeline    (pick the windows)
#       python3 bench/results/session15/profile.py <out>/samples.txt <start> <end> ...
# At 299 Hz perf itself did not show in the run (ratio 1.00 in 8373); per-process recording
# (-p) with call graphs took most of a core and halved the broadcast.
bin=$1; out=$2; hz=${3:-299}; mkdir -p "$out"
scripts/stack run -- "$bin" bench --skip-latency --skip-memory --skip-micro --results "$out" > "$out/bench.out" 2>&1 &
bench=$!
until pgrep -f "$bin worker" > /dev/null; do sleep 0.2; done
echo "worker=$(pgrep -f "$bin worker" | head -1)" > "$out/pids"
perf record -F "$hz" -g -a -o "$out/perf.data" > "$out/perf.out" 2>&1 &
wait $bench
pkill -INT -x perf
sleep 2
