#!/bin/bash
# usage (under scripts/stack run): ceil-props.sh <name> <props file or -> [records]
set -u
name=$1; props=$2; recs=${3:-1000000}
bin=${HERALD_BIN:-/tmp/herald-base}
cd /work/main
port=${HERALD_KAFKA_BROKERS##*:}
broker=$(ss -ltnpH "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
[ "$props" != - ] && export HERALD_KAFKA_CONFIG_FILE=$props
read -r ut0 st0 mf0 < <(awk '{print $14, $15, $10}' /proc/$broker/stat)
$bin bench --skip-broadcast --skip-micro --skip-latency --skip-memory --ceiling-records $recs --results /tmp/s13/res-$name > /tmp/s13/$name.log 2>&1
read -r ut1 st1 mf1 < <(awk '{print $14, $15, $10}' /proc/$broker/stat)
echo "$name $props broker user $(( ut1-ut0 )) sys $(( st1-st0 )) ticks, minflt $(( mf1-mf0 ))" >> /tmp/s13/props.txt
