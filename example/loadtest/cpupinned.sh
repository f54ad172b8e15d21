#!/usr/bin/env bash
# cpupinned.sh measures what pinned.sh measures, the example server (in
# memory, logging to a file, /metrics on) against the bare handler, each
# pinned to CPU 0 with the load tool on CPU 1, but reports each server's
# CPU time per request (from /proc/PID/stat) beside its requests/s. On a
# machine other work shares, the CPU a request costs moves far less than
# the requests a second do: "cpu ratio" (bare's CPU per request over
# hds's) is what the throughput ratio of an idle machine comes to when
# the server's core is the bottleneck. One line per operation and round.
#
#   bash example/loadtest/cpupinned.sh [ROUNDS [OPS]]
#   bash example/loadtest/cpupinned.sh 3 get,list100
#
# Needs taskset (util-linux), Linux's /proc and two CPUs. Run from the
# module root.
set -euo pipefail
rounds=${1:-3}
ops=${2:-get,list100}
dir=$(mktemp -d -t hds-cpupinned.XXXXXX)
secret=pinned-load-secret-0123456789abcdef
addr=127.0.0.1:18280
base_addr=127.0.0.1:18281
secs=3

database_url=memory:
metrics_addr=127.0.0.1:18282
log="$dir/hds.log"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
. "$(dirname "$0")/servers.sh"

ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, in ticks
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
	for op in ${ops//,/ }; do
		h0=$(cpu $hds_pid); b0=$(cpu $bare_pid)
		out=$(taskset -c 1 "$dir/loadtest" -url "http://$addr" -baseline-url "http://$base_addr" \
			-rounds 1 -ops "$op" -big 1000 -duration ${secs}s 2>&1)
		h1=$(cpu $hds_pid); b1=$(cpu $bare_pid)
		echo "$out" | awk -v round="$round" -v op="$op" -v secs=$secs -v ticks="$ticks" \
			-v hc=$((h1 - h0)) -v bc=$((b1 - b0)) '
			/^round 1  hds/ { h = $5 }
			/^round 1  baseline/ { b = $5 }
			END {
				hu = hc * 1e6 / ticks / (h * secs); bu = bc * 1e6 / ticks / (b * secs)
				printf "round %d %-8s hds %6.0f req/s %6.1f us CPU/req  bare %6.0f req/s %6.1f us CPU/req  cpu ratio %.2f  req/s ratio %.2f\n",
					round, op, h, hu, b, bu, bu / hu, h / b
			}'
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
