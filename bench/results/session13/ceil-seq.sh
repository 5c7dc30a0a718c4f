#!/bin/bash
# usage (under scripts/stack run): ceil-seq.sh <prefix> <count> [records] : ceilings back to back on one broker
set -u
pre=$1; n=$2; recs=${3:-1000000}
bin=${HERALD_BIN:-/tmp/herald-base}
cd /work/main
port=${HERALD_KAFKA_BROKERS##*:}
broker=$(ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
for i in $(seq 1 $n); do
  name=$pre$i
  read -r ut0 st0 mf0 < <(awk '{print $14, $15, $10}' /proc/$broker/stat)
  $bin bench --skip-broadcast --skip-micro --skip-latency --skip-memory --ceiling-records $recs --results /tmp/s13/res-$name > /tmp/s13/$name.log 2>&1
  read -r ut1 st1 mf1 < <(awk '{print $14, $15, $10}' /proc/$broker/stat)
  echo "$name broker user $(( ut1-ut0 )) sys $(( st1-st0 )) ticks, minflt $(( mf1-mf0 )), rss $(awk '/VmRSS/{print $2}' /proc/$broker/status) kB" >> /tmp/s13/seq.txt
done
