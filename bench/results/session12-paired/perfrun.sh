#!/bin/bash
# usage: perfrun.sh <name> <binary> [bench args]: run2.sh, and `perf record` the bench-spawned worker
# for 1.6 s once the 1M broadcast is published (-> $RUNS/<name>.perf)
name=$1; bin=$(realpath "$2"); shift 2
here=$(cd "$(dirname "$0")" && pwd); RUNS=${RUNS:-/tmp/s12}; mkdir -p "$RUNS"
( while ! grep -q 'broadcast: publishing' "$RUNS/$name.log" 2>/dev/null; do sleep 0.05; done
  p=$(pgrep -f ' worker --roles' | head -1)
  perf record -F 1999 -g -p "$p" -o "$RUNS/$name.perf" -- sleep 1.6 >/dev/null 2>&1 ) &
RUNS=$RUNS "$here/../session11-paired/run2.sh" "$name" "$bin" "$@"
wait
