# servers.sh is sourced by pinned.sh and cpupinned.sh: it builds the
# example server and the load tool into $dir, writes the server's
# configuration (in-memory store unless $database_url says otherwise,
# /metrics on) and starts the example server and the bare handler, each
# pinned to CPU 0, setting hds_pid and bare_pid. The caller sets dir,
# secret, addr, base_addr, metrics_addr, database_url, log and ops, and
# kills "${pids[@]}" on exit.
go build -o "$dir/hds" ./example
go build -o "$dir/loadtest" ./example/loadtest
cat > "$dir/hds.json" <<JSON
{
  "addr": "$addr",
  "database_url": "$database_url",
  "security": {"jwt_secret": "$secret"},
  "rate_limit": {"per_hour": 1000000000000, "per_minute": 1000000000000},
  "users": [{"username": "load", "password": "load-password"}],
  "limits": {"max_records_per_cluster": 0},
  "console": {"enabled": false},
  "metrics": {"addr": "$metrics_addr"}
}
JSON

taskset -c 0 "$dir/hds" -config "$dir/hds.json" > "$dir/stdout" 2> "$log" &
hds_pid=$!
pids+=($hds_pid)
for _ in $(seq 100); do grep -q listening "$dir/stdout" 2>/dev/null && break; sleep 0.1; done
taskset -c 0 "$dir/loadtest" -url "http://$addr" -secret "$secret" -serve-baseline "$base_addr" \
	-ops "$ops" -big 1000 > "$dir/baseline.out" 2>&1 &
bare_pid=$!
pids+=($bare_pid)
for _ in $(seq 300); do grep -q listening "$dir/baseline.out" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$dir/baseline.out" || { cat "$dir/baseline.out" >&2; exit 1; }
