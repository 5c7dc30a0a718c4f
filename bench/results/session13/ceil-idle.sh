#!/bin/bash
# usage: ceil-idle.sh <name> <with-worker 0|1> [records]   (run under scripts/stack run)
set -u
name=$1; withw=$2; recs=${3:-2000000}
bin=${HERALD_BIN:-/tmp/herald-base}
cd /work/main
port=${HERALD_KAFKA_BROKERS##*:}
broker=$(ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
$bin topics create >/dev/null
if [ "$withw" = 1 ]; then $bin worker > /tmp/s13/$name.worker.log 2>&1 & w=$!; sleep 15; fi
$bin bench --skip-broadcast --skip-micro --skip-latency --skip-memory --ceiling-records $recs --results /tmp/s13/res-$name > /tmp/s13/$name.log 2>&1
if [ "$withw" = 1 ]; then kill -INT $w; wait $w; fi
python3 - "$name" <<'PY'
import json,glob,sys
n=sys.argv[1]
f=glob.glob(f'/tmp/s13/res-{n}/*.json')[0]
c=json.load(open(f))['ceiling']; cpu=c['cpu']
print(n, int(c['observedPerSecond']), 'wall',round(cpu['wallSeconds'],2),'broker',round(cpu['broker'],2),'bench',round(cpu['benchmark'],2),'machine',round(cpu['machine'],2),'probe',cpu['hostProbeMilliseconds'], 'others', round(cpu['machine']-cpu['broker']-cpu['benchmark'],2))
PY
