#!/usr/bin/env bash
# librdkafka 2.16 crashes (SIGSEGV in rd_kafka_metadata_update_op -> strcmp(NULL)) when a topic
# is deleted while a closed but not yet destroyed consumer of it still exists. No Herald code:
# two assign-only read_committed consumers like the bench's reader, a producer, an admin client.
#
#   scripts/stack run -- bench/probes/librdkafka-topic-deleted-under-consumer.sh 20 alive      # delete, then destroy
#   scripts/stack run -- bench/probes/librdkafka-topic-deleted-under-consumer.sh 20 destroyed  # destroy, then delete
#
# Measured here (Tansu 0.6.0): alive 9 crashes in 20 runs and 3 in 10, destroyed 0 in 20 and 0 in 6.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-20}; mode=${2:-alive}
bin=$(mktemp -d)/repro
cc -O1 -g bench/probes/librdkafka-topic-deleted-under-consumer.c -o "$bin" $(pkg-config --cflags --libs rdkafka)
crashes=0; ok=0; other=0
for i in $(seq 1 "$runs"); do
  rc=0; timeout 60 "$bin" "$HERALD_KAFKA_BROKERS" "repro-$mode-$i-$RANDOM" "$mode" >/dev/null 2>&1 || rc=$?
  case $rc in 0) ok=$((ok + 1)) ;; 139) crashes=$((crashes + 1)) ;; *) other=$((other + 1)) ;; esac
done
echo "mode=$mode runs=$runs segfaults=$crashes ok=$ok other=$other"
