#!/bin/bash
# usage: perfbench.sh <name> <binary> [bench args]: as perfrun.sh, for the bench process itself
name=$1; bin=$(realpath "$2"); shift 2
here=$(cd "$(dirname "$0")" && pwd); RUNS=${RUNS:-/tmp/s12}; mkdir -p "$RUNS"
( while ! grep -q 'broadcast: publishing' "$RUNS/$name.log" 2>/dev/null; do sleep 0.05; done
  p=$(pgrep -f "^$bin bench" | head -1)
  perf record -F 2999 -g -p "$p" -o "$RUNS/$name.perf" -- sleep 1.6 >/dev/null 2>&1 ) &
RUNS=$RUNS "$here/../session11-paired/run2.sh" "$name" "$bin" "$@"
wait
