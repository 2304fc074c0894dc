#!/usr/bin/env bash
# auth-flood.sh — wrong passwords in a loop against a lockd that asks
# every connection for a SCRAM-SHA-256 password, while another session
# runs `select 1` without pause: its latency (pgbench's per-transaction
# log, percentiles during and after the flood), the server's goroutines
# and resident memory before and after, and how many failures were
# logged. Not run in CI (server's TestWrongPasswordFlood runs a short
# version).
#
#   scripts/auth-flood.sh                 # 1,000 attempts
#   ATTEMPTS=200 scripts/auth-flood.sh
#
# Environment: ATTEMPTS (1000), LOCKD_BIN (a lockd binary; default: built
# from this tree), KEEP=1 keeps the work directory.
set -euo pipefail
ATTEMPTS=${ATTEMPTS:-1000}
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/auth-flood.XXXXXX")
lockd_pid=""
cleanup() {
	set +e
	[ -n "$lockd_pid" ] && kill -INT "$lockd_pid" && wait "$lockd_pid"
	[ "${KEEP:-0}" = 1 ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${LOCKD_BIN:-}" ]; then cp "$LOCKD_BIN" "$work/lockd"; else (cd "$repo" && go build -o "$work/lockd" ./cmd/lockd); fi
echo 'secret-pw' >"$work/pw"
printf 'host all all 127.0.0.1/32 scram-sha-256\n' >"$work/pg_hba.conf"
port=$(free_port)
mport=$(free_port)
"$work/lockd" -D "$work/data" -p "$port" --pwfile "$work/pw" -c hba_file="$work/pg_hba.conf" \
	-c metrics_listen_address="127.0.0.1:$mport" >"$work/lockd.log" 2>&1 &
lockd_pid=$!
export PGPASSWORD=secret-pw
wait_ready "$port"

metric() { curl -s "http://127.0.0.1:$mport/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
percentiles() { # pgbench log files -> p50 p99 max in ms
	cat "$@" | awk '{ print $3 / 1000 }' | sort -g |
		awk '{ v[NR] = $1 } END { printf "p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d transactions)\n", v[int(NR * 0.5)], v[int(NR * 0.99)], v[NR], NR }'
}
echo 'select 1;' >"$work/q.sql"
run_select() { # seconds prefix
	(cd "$work" && pgbench -n -h 127.0.0.1 -p "$port" -U postgres -c 1 -T "$1" -f q.sql -l --log-prefix="$2" postgres >/dev/null 2>&1)
}

g0=$(metric go_goroutines)
m0=$(metric process_resident_memory_bytes)
run_select 5 before
# the flood, and the select session beside it for as long as it lasts
(for _ in $(seq "$ATTEMPTS"); do
	PGPASSWORD=wrong psql -X -q -h 127.0.0.1 -p "$port" -U postgres -c 'select 1' postgres >/dev/null 2>&1 || true
done; touch "$work/flood.done") &
flood=$!
start=$(date +%s.%N)
(cd "$work" && while [ ! -e flood.done ]; do
	pgbench -n -h 127.0.0.1 -p "$port" -U postgres -c 1 -T 5 -f q.sql -l --log-prefix=during postgres >/dev/null 2>&1
done)
wait "$flood"
secs=$(echo "$(date +%s.%N) - $start" | bc)
run_select 5 after
sleep 1
g1=$(metric go_goroutines)
m1=$(metric process_resident_memory_bytes)
logged=$(grep -c 'password authentication failed for user' "$work/lockd.log" || true)

echo "$ATTEMPTS wrong passwords in ${secs%.*} s; failures logged: $logged"
echo "select 1 before: $(percentiles "$work"/before.*)"
echo "select 1 during: $(percentiles "$work"/during.*)"
echo "select 1 after:  $(percentiles "$work"/after.*)"
awk -v g0="$g0" -v g1="$g1" -v m0="$m0" -v m1="$m1" 'BEGIN { printf "goroutines: %d before, %d after; resident memory: %.0f MB before, %.0f MB after\n", g0, g1, m0 / 1048576, m1 / 1048576 }'
