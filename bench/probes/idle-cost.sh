#!/usr/bin/env bash
# What an idle Herald costs: CPU of `herald worker` (default roles), `herald api`, the broker and
# Redis over SECONDS (default 60) after a 90 s warm-up with nothing to do, and the worker's
# busiest threads (which show whether Swift code or librdkafka's broker threads spend it).
#
#   scripts/stack run -- bench/probes/idle-cost.sh [HERALD_BINARY] [SECONDS]
#   HERALD_PLANNER_FETCH_WAIT_MS=500 HERALD_TASK_FETCH_WAIT_MS=500 scripts/stack run -- bench/probes/idle-cost.sh
#
# HERALD_BINARY defaults to .build/release/herald (swift build -c release --product herald).
set -euo pipefail
cd "$(dirname "$0")/../.."
herald="$(realpath "${1:-.build/release/herald}")"
seconds="${2:-60}"
[ -x "$herald" ] || { echo "build first: swift build -c release --product herald" >&2; exit 1; }
[ -n "${HERALD_KAFKA_BROKERS:-}" ] && [ -n "${HERALD_REDIS_URL:-}" ] || { echo "run under scripts/stack run" >&2; exit 1; }
pid_on() { ss -ltnpH "sport = :${1##*:}" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
broker="$(pid_on "$HERALD_KAFKA_BROKERS")"
redis="$(pid_on "$HERALD_REDIS_URL")"
work="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export HERALD_POLICIES="Full:listen+send+manage:full-key-for-the-idle-cost-probe-00001"
export HERALD_ID_SECRET="id-secret-for-the-idle-cost-probe-000001"
export HERALD_API_PORT="$(free_port)" HERALD_METRICS_PORT="$(free_port)" HERALD_LOG_LEVEL=notice
export HERALD_TOPIC_PREFIX="idle-$$.herald." HERALD_REDIS_PREFIX="idle-$$"
(cd "$work" && "$herald" topics create >topics.log 2>&1)
(cd "$work" && exec "$herald" worker >worker.log 2>&1) &
worker=$!
(cd "$work" && exec "$herald" api >api.log 2>&1) &
api=$!
trap 'kill -TERM $worker $api 2>/dev/null; wait $worker $api 2>/dev/null || true; rm -rf "$work"' EXIT
sleep "${HERALD_IDLE_WARMUP:-90}"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
threads() { for t in /proc/"$1"/task/*; do echo "$(basename "$t"):$(tr ' ' '_' <"$t/comm") $(awk '{print $14 + $15}' "$t/stat")"; done | sort; }
declare -A before
for pid in $worker $api $broker $redis; do before[$pid]=$(ticks "$pid"); done
threads "$worker" >"$work/threads-0"
sleep "$seconds"
threads "$worker" >"$work/threads-1"
hz=$(getconf CLK_TCK)
for entry in "herald worker:$worker" "herald api:$api" "broker:$broker" "redis:$redis"; do
  pid=${entry##*:}
  awk -v name="${entry%:*}" -v d="$(($(ticks "$pid") - before[$pid]))" -v hz="$hz" -v s="$seconds" \
    'BEGIN { printf "%-14s %6.2f %% of a core\n", name, d * 100 / hz / s }'
done
echo "busiest worker threads (CPU ticks of 1/$hz s over $seconds s):"
join "$work/threads-0" "$work/threads-1" | awk '{d = $3 - $2; if (d > 0) print d, $1}' | sort -rn | head -"${HERALD_IDLE_THREADS:-8}"
