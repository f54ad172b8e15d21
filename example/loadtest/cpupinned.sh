#!/usr/bin/env bash
# cpupinned.sh measures what pinned.sh measures, the example server (in
# memory, logging to a file, /metrics on) against the bare handler, each
# pinned to CPU 0 with the load tool on CPU 1, but reports each server's
# CPU time per request beside its requests/s: the load tool reads the
# servers' /proc/PID/stat before and after each measurement window
# (-server-pid, -baseline-pid), so that its own setup (logging in,
# filling the clusters) is not counted. On a machine other work shares,
# the CPU a request costs moves far less than the requests a second do:
# "cpu ratio" (bare's CPU per request over hds's) is what the throughput
# ratio of an idle machine comes to when the server's core is the
# bottleneck.
#
#   bash example/loadtest/cpupinned.sh [ROUNDS [OPS]]
#   bash example/loadtest/cpupinned.sh 5 get,list100
#
# Needs taskset (util-linux), Linux's /proc and two CPUs. Run from the
# module root.
set -euo pipefail
rounds=${1:-5}
ops=${2:-get,list100}
dir=$(mktemp -d -t hds-cpupinned.XXXXXX)
secret=pinned-load-secret-0123456789abcdef
addr=127.0.0.1:18280
base_addr=127.0.0.1:18281

database_url=memory:
metrics_addr=127.0.0.1:18282
log="$dir/hds.log"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
. "$(dirname "$0")/servers.sh"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 1 "$dir/loadtest" -url "http://$addr" -baseline-url "http://$base_addr" \
	-server-pid "$hds_pid" -baseline-pid "$bare_pid" \
	-rounds "$rounds" -ops "$ops" -big 1000 -duration 3s
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
