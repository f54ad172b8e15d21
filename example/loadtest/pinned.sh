#!/usr/bin/env bash
# pinned.sh measures the example server as a user runs it (in-memory
# store, logging to a file, /metrics on: section 28's observer
# installed) against the bare handler, each in its own process pinned
# to CPU 0, with the load tool pinned to CPU 1, in interleaved rounds
# (median of the per-round ratios).
#
#   bash example/loadtest/pinned.sh [ROUNDS [OPS [LOGFILE]]]
#   bash example/loadtest/pinned.sh 8 get,list100 /tmp/hds.log
#
# HDS_PINNED_DATABASE_URL picks another store (sqlite:$dir/hds.db, say).
# Needs taskset (util-linux) and two CPUs. Run from the module root.
set -euo pipefail
rounds=${1:-8}
ops=${2:-get,list100}
log=${3:-$(mktemp -t hds-pinned-log.XXXXXX)}
dir=$(mktemp -d -t hds-pinned.XXXXXX)
secret=pinned-load-secret-0123456789abcdef
addr=127.0.0.1:18080
base_addr=127.0.0.1:18081

database_url=${HDS_PINNED_DATABASE_URL:-memory:}
metrics_addr=127.0.0.1:18082
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
. "$(dirname "$0")/servers.sh"
echo "server log: $log; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 1 "$dir/loadtest" -url "http://$addr" -baseline-url "http://$base_addr" \
	-rounds "$rounds" -ops "$ops" -big 1000 -duration 2s
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); server log lines: $(wc -l < "$log")"
