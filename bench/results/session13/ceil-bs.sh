#!/bin/bash
# usage (under scripts/stack run): ceil-bs.sh <name> <batch.size or 0 for default> [records]
set -u
name=$1; bs=$2; recs=${3:-2000000}
bin=${HERALD_BIN:-/tmp/herald-base}
cd /work/main
port=${HERALD_KAFKA_BROKERS##*:}
broker=$(ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
if [ "$bs" != 0 ]; then printf 'batch.size=%s\n' "$bs" > /tmp/s13/$name.props; export HERALD_KAFKA_CONFIG_FILE=/tmp/s13/$name.props; fi
read -r ut0 st0 mf0 < <(awk '{print $14, $15, $10}' /proc/$broker/stat)
$bin bench --skip-broadcast --skip-micro --skip-latency --skip-memory --ceiling-records $recs --results /tmp/s13/res-$name > /tmp/s13/$name.log 2>&1
read -r ut1 st1 mf1 < <(awk '{print $14, $15, $10}' /proc/$broker/stat)
echo "$name bs=$bs broker user $(( ut1-ut0 )) sys $(( st1-st0 )) ticks, minflt $(( mf1-mf0 ))" >> /tmp/s13/bs.txt
