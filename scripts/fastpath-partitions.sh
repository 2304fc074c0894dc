#!/usr/bin/env bash
# fastpath-partitions.sh — the 2024 "scalability bottlenecks with (many)
# partitions" experiment: a query touching every partition of a
# 100-partition table takes 201 relation locks (parent, partitions, their
# primary keys); with 16 fast-path slots per backend, 185 of them go to the
# shared lock table and its partition LWLocks. Runs the same pgbench
# script against lockd with fastpath_lock_slots = 16 and then 1024 (raised
# with ALTER SYSTEM + pg_reload_conf while the server runs; new sessions
# take the new value) and against a real PostgreSQL 15 (16 slots), one
# after the other, sampling pg_locks during each run and lockd's fast-path
# counters from /metrics.
#
# Not run in CI. Usage (from anywhere in the repository):
#
#   scripts/fastpath-partitions.sh
#   DURATION=30 CLIENTS=16 PARTITIONS=100 SCALE=1 scripts/fastpath-partitions.sh
#
# Environment:
#   DURATION    seconds per pgbench run (default 20)
#   CLIENTS     pgbench -c (default 8); THREADS pgbench -j (default 2)
#   PARTITIONS  pgbench -i --partitions (default 100); SCALE pgbench -i -s (default 1)
#   MODE        pgbench -M (default prepared)
#   INIT_STEPS  pgbench -i -I (default dtgvp); "dtp" leaves the tables empty, so
#               the script's cost is planning and locking rather than scanning
#   SCRIPT      the pgbench script (default "select count(*) from pgbench_accounts;")
#   PGBIN, PG_OS_USER, LOCKD_BIN, KEEP as in compare-pg.sh
set -euo pipefail

DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
PARTITIONS=${PARTITIONS:-100}
SCALE=${SCALE:-1}
MODE=${MODE:-prepared}
SCRIPT=${SCRIPT:-select count(*) from pgbench_accounts;}
INIT_STEPS=${INIT_STEPS:-dtgvp}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}

repo=$(cd "$(dirname "$0")/.." && pwd)
for bin in pgbench psql pg_isready curl; do
	command -v "$bin" >/dev/null || { echo "fastpath-partitions.sh: $bin not found on PATH" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/fastpath-partitions.XXXXXX")
chmod 711 "$work"
lockd_pid=""
pg_started=""
. "$repo/scripts/lib.sh"
cleanup() {
	local rc=$?
	set +e
	[ -n "$lockd_pid" ] && kill -INT "$lockd_pid" 2>/dev/null && wait "$lockd_pid" 2>/dev/null
	[ -n "$pg_started" ] && stop_pg "$work/pg"
	if [ "${KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then echo "fastpath-partitions.sh: logs kept in $work" >&2; else rm -rf "$work"; fi
	exit "$rc"
}
trap cleanup EXIT
q() { PGCONNECT_TIMEOUT=5 psql -X -At -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2"; }

if [ -n "${LOCKD_BIN:-}" ]; then cp "$LOCKD_BIN" "$work/lockd"; else (cd "$repo" && go build -o "$work/lockd" ./cmd/lockd); fi
lport=$(free_port)
mport=$(free_port)
# fastpath_lock_slots is set with ALTER SYSTEM, not -c: a command-line
# setting outranks postgresql.auto.conf, so the reload below could not
# change it
"$work/lockd" -D "$work/lockd-data" -p "$lport" -c metrics_listen_address="127.0.0.1:$mport" >"$work/lockd.log" 2>&1 &
lockd_pid=$!
wait_ready "$lport"

pport=$(free_port)
pg_started=1
start_pg "$work/pg" "$pport"

printf '%s\n' "$SCRIPT" >"$work/bench.sql"
chmod 644 "$work/bench.sql"
for port in "$lport" "$pport"; do
	pgbench -i -q -I "$INIT_STEPS" -s "$SCALE" --partitions="$PARTITIONS" -h 127.0.0.1 -p "$port" -U postgres postgres >>"$work/init.log" 2>&1
done

# fast-path counters summed over lockd's backends
metric() { curl -s "127.0.0.1:$mport/metrics" | awk -v n="$1" '$1 ~ "^"n"({|$)" { s += $2 } END { printf "%.0f", s }'; }

# run <label> <port>: pgbench plus a pg_locks sample halfway through
run() {
	local label=$1 port=$2 out sample hits0 falls0 hits falls
	if [ "$port" = "$lport" ]; then hits0=$(metric lockd_fastpath_hits_total); falls0=$(metric lockd_fastpath_fallbacks_total); fi
	PGCONNECT_TIMEOUT=5 pgbench -n -f "$work/bench.sql" -M "$MODE" -c "$CLIENTS" -j "$THREADS" -T "$DURATION" \
		-h 127.0.0.1 -p "$port" -U postgres postgres >"$work/$label.out" 2>&1 &
	local bpid=$!
	sleep $((DURATION / 2))
	# per client backend: relation locks in the fast path and in the shared table
	sample=$(q "$port" "select min(f), max(f), min(s), max(s), count(*) from (
		select pid, count(*) filter (where fastpath) f, count(*) filter (where not fastpath) s
		from pg_locks where locktype = 'relation' and pid <> pg_backend_pid() group by pid) x")
	wait "$bpid"
	out=$(cat "$work/$label.out")
	grep -q '^number of failed transactions: 0 ' <<<"$out" || { echo "$label: pgbench failed" >&2; echo "$out" >&2; exit 1; }
	local tps
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")
	local ratio="—"
	if [ "$port" = "$lport" ]; then
		hits=$(( $(metric lockd_fastpath_hits_total) - hits0 ))
		falls=$(( $(metric lockd_fastpath_fallbacks_total) - falls0 ))
		ratio=$(awk -v h="$hits" -v f="$falls" 'BEGIN { if (h + f) printf "%.3f", h / (h + f); else print "—" }')
	fi
	IFS='|' read -r fmin fmax smin smax nb <<<"$sample"
	printf '| %s | %.0f | %s–%s | %s–%s | %s | %s |\n' "$label" "$tps" "$fmin" "$fmax" "$smin" "$smax" "$nb" "$ratio"
}

echo
echo "script: \`$SCRIPT\` on pgbench -i -I $INIT_STEPS -s $SCALE --partitions=$PARTITIONS; pgbench -n -M $MODE -c $CLIENTS -j $THREADS -T $DURATION;" \
	"$("$work/lockd" version) vs PostgreSQL $(q "$pport" 'show server_version'); $(nproc) CPUs"
echo
echo "| server | tps | fast-path relation locks per backend | shared-table relation locks per backend | backends sampled | lockd fast-path hit ratio |"
echo "|---|---:|---:|---:|---:|---:|"
slots() {
	q "$lport" "alter system set fastpath_lock_slots = $1" >/dev/null
	q "$lport" "select pg_reload_conf()" >/dev/null
	sleep 1
	[ "$(q "$lport" 'show fastpath_lock_slots')" = "$1" ] || { echo "fastpath_lock_slots did not change to $1" >&2; exit 1; }
}
slots 16
run "lockd, fastpath_lock_slots = 16" "$lport"
slots 1024
run "lockd, fastpath_lock_slots = 1024" "$lport"
run "PostgreSQL 15 (16 slots)" "$pport"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
