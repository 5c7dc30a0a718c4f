#!/usr/bin/env bash
# What an idle Herald worker costs the broker: CPU ticks of the broker process over 10 s with
# no worker, then with `herald worker` idling (roles from HERALD_ROLES, default all three).
# Every consumer keeps fetching while idle, so the broker's cost grows with the fetch rate.
#
#   scripts/stack run -- bench/probes/idle-broker-cost.sh
#   HERALD_ROLES=fanout HERALD_TASK_FETCH_WAIT_MS=10 scripts/stack run -- bench/probes/idle-broker-cost.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
herald=.build/release/herald
[ -x "$herald" ] || { echo "build first: swift build -c release" >&2; exit 1; }
port=${HERALD_KAFKA_BROKERS##*:}
broker=$(ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
[ -n "$broker" ] || { echo "no broker listening on $port (run under scripts/stack run)" >&2; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$broker/stat"; }
hz=$(getconf CLK_TCK)
"$herald" topics create >/dev/null
t0=$(ticks); sleep 10; t1=$(ticks)
echo "broker CPU, no worker:            $(( (t1 - t0) * 100 / hz / 10 )) % of a core"
"$herald" worker >/tmp/idle-broker-cost-worker.log 2>&1 &
worker=$!
trap 'kill -INT $worker 2>/dev/null; wait $worker 2>/dev/null || true' EXIT
sleep 15   # joins and the first rebalances
t0=$(ticks); sleep 10; t1=$(ticks)
echo "broker CPU, idle worker (${HERALD_ROLES:-planner,fanout,indexer}): $(( (t1 - t0) * 100 / hz / 10 )) % of a core"
