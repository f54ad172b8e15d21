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

go build -o "$dir/hds" ./example
go build -o "$dir/loadtest" ./example/loadtest
cat > "$dir/hds.json" <<JSON
{
  "addr": "$addr",
  "database_url": "${HDS_PINNED_DATABASE_URL:-memory:}",
  "security": {"jwt_secret": "$secret"},
  "rate_limit": {"per_hour": 1000000000000, "per_minute": 1000000000000},
  "users": [{"username": "load", "password": "load-password"}],
  "limits": {"max_records_per_cluster": 0},
  "console": {"enabled": false},
  "metrics": {"addr": "127.0.0.1:18082"}
}
JSON

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

taskset -c 0 "$dir/hds" -config "$dir/hds.json" > "$dir/stdout" 2> "$log" &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$dir/stdout" 2>/dev/null && break; sleep 0.1; done
taskset -c 0 "$dir/loadtest" -url "http://$addr" -secret "$secret" -serve-baseline "$base_addr" \
	-ops "$ops" -big 1000 > "$dir/baseline.out" 2>&1 &
pids+=($!)
for _ in $(seq 300); do grep -q listening "$dir/baseline.out" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$dir/baseline.out" || { cat "$dir/baseline.out" >&2; exit 1; }
echo "server log: $log; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 1 "$dir/loadtest" -url "http://$addr" -baseline-url "http://$base_addr" \
	-rounds "$rounds" -ops "$ops" -big 1000 -duration 2s
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); server log lines: $(wc -l < "$log")"
