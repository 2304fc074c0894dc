#!/usr/bin/env bash
# check-postgres-exporter.sh — run Debian's postgres_exporter
# (prometheus-postgres-exporter 0.11, default collectors) against lockd
# under pgbench load, scraping it every second, and check what a
# Prometheus user would: every scrape has pg_up 1 and
# pg_exporter_last_scrape_error 0, the exporter logs no query error,
# pg_stat_database's xact_commit grows by at least pgbench's transaction
# count, and the lock counts by mode are there. e2e's
# TestPostgresExporter is the short version CI runs.
#
# Usage (from anywhere in the repository):
#
#   scripts/check-postgres-exporter.sh
#   DURATION=60 CLIENTS=16 scripts/check-postgres-exporter.sh
#
# Environment:
#   DURATION   seconds of pgbench load (default 20)
#   CLIENTS    pgbench clients (default 8)
#   SCALE      pgbench scale (default 5)
#   LOCKD_BIN  use this lockd binary instead of building one
#   EXPORTER   the exporter binary (default prometheus-postgres-exporter)
#   KEEP=1     keep the temporary directory (logs, scrapes); kept on failure
# Exit status: 0 all checks passed, 1 a check failed, 2 setup error.
set -uo pipefail

DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-8}
SCALE=${SCALE:-5}
EXPORTER=${EXPORTER:-prometheus-postgres-exporter}
me=check-postgres-exporter.sh
repo=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/lib/postgresql/15/bin:$PATH"
for bin in pgbench psql pg_isready curl "$EXPORTER"; do
	command -v "$bin" >/dev/null || { echo "$me: $bin not found on PATH (apt-get install prometheus-postgres-exporter postgresql-client-15 curl)" >&2; exit 2; }
done
. "$repo/scripts/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/check-exporter.XXXXXX")
pids=()
failed=0
cleanup() {
	local i
	# the exporter first: lockd's smart shutdown waits for its sessions
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
	if [ "${KEEP:-0}" = 1 ] || [ "$failed" != 0 ]; then echo "$me: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failed=1; }

lockd=${LOCKD_BIN:-}
if [ -z "$lockd" ]; then
	lockd="$work/lockd"
	(cd "$repo" && go build -o "$lockd" ./cmd/lockd) || exit 2
fi
port=$(free_port)
"$lockd" -D "$work/data" -p "$port" -c metrics_listen_address= >"$work/lockd.log" 2>&1 &
pids+=($!)
wait_ready "$port" || exit 2
conn=(-h 127.0.0.1 -p "$port" -U postgres)
pgbench "${conn[@]}" -i -q -s "$SCALE" postgres >"$work/init.log" 2>&1 || { echo "$me: pgbench -i failed"; cat "$work/init.log"; exit 2; }

eport=$(free_port)
DATA_SOURCE_NAME="postgresql://postgres@127.0.0.1:$port/postgres?sslmode=disable" \
	"$EXPORTER" --web.listen-address="127.0.0.1:$eport" >"$work/exporter.log" 2>&1 &
pids+=($!)
url="http://127.0.0.1:$eport/metrics"
for _ in $(seq 100); do curl -sf "$url" >/dev/null && break; sleep 0.1; done

value() { # value FILE METRIC [LABEL]
	grep -E "^$2(\{|$| )" "$1" | grep -F -- "${3:-}" | head -1 | awk '{print $NF}'
}
curl -sf "$url" >"$work/scrape-0.txt" || { echo "$me: the exporter does not answer"; exit 2; }
commits0=$(value "$work/scrape-0.txt" pg_stat_database_xact_commit 'datname="postgres"')

pgbench "${conn[@]}" -c "$CLIENTS" -j 2 -T "$DURATION" postgres >"$work/pgbench.log" 2>&1 &
bench=$!
n=0
while kill -0 "$bench" 2>/dev/null; do
	sleep 1
	n=$((n + 1))
	curl -sf "$url" >"$work/scrape-$n.txt" || fail "scrape $n: no answer"
done
wait "$bench" || fail "pgbench failed: $(tail -3 "$work/pgbench.log")"
curl -sf "$url" >"$work/scrape-final.txt"

bad=0
for f in "$work"/scrape-*.txt; do
	[ "$(value "$f" pg_up)" = 1 ] || { fail "$(basename "$f"): pg_up $(value "$f" pg_up)"; bad=1; }
	[ "$(value "$f" pg_exporter_last_scrape_error)" = 0 ] || { fail "$(basename "$f"): pg_exporter_last_scrape_error $(value "$f" pg_exporter_last_scrape_error)"; bad=1; }
done
[ "$bad" = 0 ] && echo "PASS: $((n + 2)) scrapes, each with pg_up 1 and pg_exporter_last_scrape_error 0"

if grep -E 'level=error|Error running query' "$work/exporter.log"; then fail "the exporter logged errors"; else echo "PASS: no errors in the exporter's log"; fi

processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/pgbench.log")
commits1=$(value "$work/scrape-final.txt" pg_stat_database_xact_commit 'datname="postgres"')
grew=$(awk -v a="$commits0" -v b="$commits1" 'BEGIN { printf "%.0f", b - a }')
if [ -n "$processed" ] && [ "$grew" -ge "$processed" ]; then
	echo "PASS: xact_commit grew by $grew, pgbench processed $processed transactions"
else
	fail "xact_commit grew by $grew, pgbench processed ${processed:-?}"
fi

modes=$(cat "$work"/scrape-*.txt | grep -E '^pg_locks_count\{datname="postgres"' | awk '$NF > 0' | sed 's/.*mode="\([a-z]*\)".*/\1/' | sort -u | tr '\n' ' ')
if echo "$modes" | grep -q rowexclusivelock; then echo "PASS: lock counts by mode seen under load: $modes"; else fail "no row exclusive locks seen in pg_locks_count (modes with counts: $modes)"; fi

exit "$failed"
