#!/bin/bash
# usage: run2.sh <name> <binary> [bench args...]   (HERALD_* variables pass through)
# One quick 1M run with sampler2.py and probe3 alongside; everything goes to $RUNS (/tmp/s11):
# <name>.log (timestamped bench output), <name>.tsv (+ .probe), <name>.c.tsv, res-<name>/<run>.json
set -u
name=$1; bin=$(realpath "$2"); shift 2
here=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-/tmp/s11}
mkdir -p "$RUNS"
[ -x "$RUNS/probe3" ] || gcc -O2 -o "$RUNS/probe3" "$here/probe3.c"
cd "$here/../../.."
python3 "$here/sampler2.py" "$RUNS/$name.tsv" & sp=$!
"$RUNS/probe3" "$RUNS/$name.c.tsv" & cp=$!
scripts/stack run -- "$bin" bench --registrations 1000000 --skip-memory --skip-micro --skip-latency --results "$RUNS/res-$name" "$@" 2>&1 \
  | while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done > "$RUNS/$name.log"
kill $sp $cp
grep -F '| broadcast R=1,000,000' "$RUNS/$name.log" | cut -d' ' -f2-
