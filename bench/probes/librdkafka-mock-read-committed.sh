#!/usr/bin/env bash
# Builds and runs librdkafka-mock-read-committed.c against the librdkafka Herald loads
# (scripts/bootstrap installs 2.16 in /usr/local/lib on Debian 12). Exit 0: the mock cluster
# filters aborted transactions for read_committed consumers; 2: it does not.
set -euo pipefail
cd "$(dirname "$0")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cc -O1 -o "$out/probe" librdkafka-mock-read-committed.c -L/usr/local/lib -lrdkafka
"$out/probe"
