#!/bin/bash
# measure tansu CPU while idle, with and without a worker
cd /work/main
eval "$(scripts/stack env)"
export HERALD_KAFKA_BROKERS HERALD_REDIS_URL
kpid=$(cat .herald/run/kafka.pid)
tick() { awk '{print $14+$15}' /proc/$1/stat; }
/tmp/herald-base topics create >/dev/null 2>&1 || /tmp/herald-base topics create
a=$(tick $kpid); sleep 10; b=$(tick $kpid); echo "no worker: $(( b-a )) ticks/10s"
/tmp/herald-base worker --roles planner,fanout > /tmp/idle-worker.log 2>&1 & wp=$!
sleep 5
a=$(tick $kpid); wa=$(tick $wp); sleep 10; b=$(tick $kpid); wb=$(tick $wp); echo "worker idle: broker $(( b-a )) ticks/10s, worker $(( wb-wa ))"
kill $wp; wait $wp
