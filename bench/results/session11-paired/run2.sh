#!/bin/bash
# usage: run2.sh <name> <binary> [bench args...]; sampled, timestamped log
name=$1; bin=$2; shift 2
cd /work/main
python3 /tmp/s11/sampler2.py /tmp/s11/$name.tsv & sp=$!
/tmp/s11/c/probe3 /tmp/s11/$name.c.tsv & cp=$!
scripts/stack run -- $bin bench --registrations 1000000 --skip-memory --skip-micro --skip-latency --results /tmp/s11/res-$name "$@" 2>&1 | while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done > /tmp/s11/$name.log
kill $sp $cp
pkill -f 'herald-.* worker' 2>/dev/null
python3 /tmp/s11summ.py $name
