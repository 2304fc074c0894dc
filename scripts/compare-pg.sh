#!/usr/bin/env bash
# compare-pg.sh — pgbench the same custom script against lockd and a real
# PostgreSQL 15 on this machine, side by side, and print a markdown table.
#
# Not run in CI. Usage (from anywhere in the repository):
#
#   scripts/compare-pg.sh
#   DURATION=30 CLIENTS=16 scripts/compare-pg.sh
#   SCRIPT=$'\\set x random(1, 1000)\nSELECT :x + 1;' scripts/compare-pg.sh
#
# Environment:
#   DURATION   seconds per pgbench run (default 10)
#   CLIENTS    pgbench -c (default 8)
#   THREADS    pgbench -j (default 2)
#   SCRIPT     pgbench script text (default "SELECT 1;")
#   BUILTIN    a pgbench builtin script instead (tpcb-like, simple-update, select-only)
#   SCALE      run pgbench -i -s SCALE on both servers first
#   PG_OPTS    extra PostgreSQL options, e.g. "-c synchronous_commit=off"
#   LOCKD_OPTS extra lockd options, e.g. "-c relation_extension_mode=single"
#   SETUP_SQL  SQL run once on each server before the runs (psql -f)
#   RESET_SQL  SQL run on the server before each pgbench run
#              In SCRIPT, SETUP_SQL and RESET_SQL, @DIR@ stands for a
#              directory the server itself can write (for COPY ... TO/FROM
#              server-side files).
#   CLIENTS    may be a list ("1 2 4 8 16"): one row per mode and client count
#   REPORT_SQL SQL run on lockd after the runs; its output is printed
#   MODES      query modes (default "simple extended prepared")
#   WARMUP     seconds of unrecorded warm-up per server (default 2; 0 = none)
#   ROUNDS     runs per server for each row (default 1), in ABBA order
#              (A B B A A B ...); the table shows the medians
#   PGBIN      PostgreSQL server binaries (default /usr/lib/postgresql/15/bin)
#   PG_OS_USER unprivileged user that runs PostgreSQL when this script runs
#              as root (default pgbench_cmp; created if missing)
#   LOCKD_BIN  use this lockd binary instead of building one
#   KEEP=1     keep the temporary directory (logs, data) after the run
#
# For each mode the two servers run one after the other (the order alternates
# from mode to mode), never at the same time: pgbench and the server under test
# share the machine's cores.
set -euo pipefail

DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
SCRIPT=${SCRIPT:-SELECT 1;}
MODES=${MODES:-simple extended prepared}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-1}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}

repo=$(cd "$(dirname "$0")/.." && pwd)
for bin in pgbench pg_isready go; do
	command -v "$bin" >/dev/null || { echo "compare-pg.sh: $bin not found on PATH" >&2; exit 1; }
done
for bin in initdb pg_ctl postgres; do
	[ -x "$PGBIN/$bin" ] || { echo "compare-pg.sh: $PGBIN/$bin not found (set PGBIN)" >&2; exit 1; }
done

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-pg.XXXXXX")
chmod 711 "$work"
lockd_pid=""
pg_started=""

# as_pg runs a command as the PostgreSQL OS user (PostgreSQL refuses root).
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$PG_OS_USER" -- "$@"
	else
		"$@"
	fi
}

cleanup() {
	local rc=$?
	set +e
	if [ -n "$lockd_pid" ] && kill -0 "$lockd_pid" 2>/dev/null; then
		kill -INT "$lockd_pid"
		for _ in $(seq 50); do kill -0 "$lockd_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$lockd_pid" 2>/dev/null
		wait "$lockd_pid" 2>/dev/null
	fi
	if [ -n "$pg_started" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1 ||
			as_pg "$PGBIN/pg_ctl" -D "$work/pg/data" -m immediate -w stop >/dev/null 2>&1
	fi
	if [ "${KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then
		echo "compare-pg.sh: logs and data kept in $work" >&2
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port prints a loopback TCP port nobody listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

wait_ready() { # host port what
	for _ in $(seq 100); do
		pg_isready -q -h "$1" -p "$2" -U postgres -d postgres && return 0
		sleep 0.1
	done
	echo "compare-pg.sh: $3 did not start on port $2" >&2
	return 1
}

# --- lockd -----------------------------------------------------------------
if [ -n "${LOCKD_BIN:-}" ]; then
	cp "$LOCKD_BIN" "$work/lockd"
else
	echo "building lockd ..." >&2
	(cd "$repo" && go build -o "$work/lockd" ./cmd/lockd)
fi
lockd_port=$(free_port)
# shellcheck disable=SC2086 # LOCKD_OPTS is a list of options
"$work/lockd" -D "$work/lockd-data" -p "$lockd_port" -c listen_addresses=127.0.0.1 -c metrics_listen_address= ${LOCKD_OPTS:-} >"$work/lockd.log" 2>&1 &
lockd_pid=$!
wait_ready 127.0.0.1 "$lockd_port" lockd

# --- PostgreSQL ---------------------------------------------------------------
if [ "$(id -u)" = 0 ] && ! id "$PG_OS_USER" >/dev/null 2>&1; then
	useradd -m "$PG_OS_USER"
fi
mkdir -p "$work/pg"
[ "$(id -u)" = 0 ] && chown "$PG_OS_USER" "$work/pg"
echo "initdb ..." >&2
as_pg "$PGBIN/initdb" -D "$work/pg/data" -U postgres -A trust --no-sync >"$work/initdb.log" 2>&1
pg_port=$(free_port)
while [ "$pg_port" = "$lockd_port" ]; do pg_port=$(free_port); done
as_pg "$PGBIN/pg_ctl" -D "$work/pg/data" -l "$work/pg/postgres.log" -w \
	-o "-c listen_addresses=127.0.0.1 -p $pg_port -c unix_socket_directories=$work/pg -c max_connections=100 ${PG_OPTS:-}" \
	start >/dev/null
pg_started=1
wait_ready 127.0.0.1 "$pg_port" PostgreSQL

# --- runs ----------------------------------------------------------------------
# per-server directories the servers can write, for @DIR@
mkdir -p "$work/lockd-files" "$work/pg/files"
[ "$(id -u)" = 0 ] && chown "$PG_OS_USER" "$work/pg/files"
dir_of() { if [ "$1" = "$lockd_port" ]; then echo "$work/lockd-files"; else echo "$work/pg/files"; fi; }
subst() { sed "s|@DIR@|$2|g" <<<"$1"; }
for port in "$lockd_port" "$pg_port"; do
	subst "$SCRIPT" "$(dir_of "$port")" >"$work/bench-$port.sql"
	chmod 644 "$work/bench-$port.sql"
done
cp "$work/bench-$lockd_port.sql" "$work/bench.sql"
run_sql() { # port sql
	[ -n "$2" ] || return 0
	subst "$2" "$(dir_of "$1")" | PGCONNECT_TIMEOUT=5 psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d postgres >>"$work/setup.log" 2>&1 ||
		{ echo "compare-pg.sh: setup SQL failed on port $1:" >&2; tail -5 "$work/setup.log" >&2; exit 1; }
}
for port in "$lockd_port" "$pg_port"; do run_sql "$port" "${SETUP_SQL:-}"; done

if [ -n "${SCALE:-}" ]; then
	for port in "$lockd_port" "$pg_port"; do
		echo "pgbench -i -s $SCALE on port $port ..." >&2
		PGCONNECT_TIMEOUT=5 pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$port" -U postgres postgres >>"$work/init.log" 2>&1 ||
			{ echo "compare-pg.sh: pgbench -i failed on port $port" >&2; cat "$work/init.log" >&2; exit 1; }
	done
fi
bench() { # port mode seconds [clients] -> prints tps
	local out script_args clients=${4:-${CLIENTS%% *}} threads=$THREADS
	if [ -n "${BUILTIN:-}" ]; then
		script_args=(-b "$BUILTIN")
	else
		script_args=(-f "$work/bench-$1.sql")
	fi
	[ "$threads" -gt "$clients" ] && threads=$clients
	run_sql "$1" "${RESET_SQL:-}"
	out=$(PGCONNECT_TIMEOUT=5 pgbench -n -h 127.0.0.1 -p "$1" -U postgres "${script_args[@]}" -M "$2" \
		-c "$clients" -j "$threads" -T "$3" postgres 2>&1) || {
		echo "compare-pg.sh: pgbench failed against port $1 (-M $2):" >&2
		echo "$out" >&2
		return 1
	}
	echo "$out" >>"$work/pgbench.log"
	if ! grep -q '^number of failed transactions: 0 ' <<<"$out"; then
		echo "compare-pg.sh: failed transactions against port $1 (-M $2):" >&2
		echo "$out" >&2
		return 1
	fi
	sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out"
}

if [ "$WARMUP" != 0 ]; then
	echo "warm-up ${WARMUP}s each ..." >&2
	bench "$lockd_port" simple "$WARMUP" >/dev/null
	bench "$pg_port" simple "$WARMUP" >/dev/null
fi

lockd_version=$("$work/lockd" version)
pg_version=$(psql -X -At -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c 'SHOW server_version')
echo
what="\`$(tr '\n' ' ' <"$work/bench.sql" | sed 's/ *$//')\`"
[ -n "${BUILTIN:-}" ] && what="builtin $BUILTIN, scale ${SCALE:-1}"
echo "script: $what, pgbench -n -c ($CLIENTS) -j $THREADS -T $DURATION; lockd options: ${LOCKD_OPTS:-none}; PostgreSQL options: ${PG_OPTS:-none};" \
	"$lockd_version vs PostgreSQL $pg_version; $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))"
echo
[ "$ROUNDS" -gt 1 ] && echo "medians of $ROUNDS runs per server, ABBA order" && echo
echo "| mode | clients | lockd tps | PostgreSQL tps | ratio (lockd/PG) |"
echo "|---|---:|---:|---:|---:|"
i=0
for mode in $MODES; do
	for clients in $CLIENTS; do
		echo "-M $mode -c $clients ..." >&2
		# ABBA: run k goes to the first server when k mod 4 is 0 or 3;
		# which server is first alternates from row to row
		ls=() ps=()
		for k in $(seq 0 $((2 * ROUNDS - 1))); do
			first=$(((k % 4 == 0 || k % 4 == 3) ? 1 : 0))
			if [ $(((first + i) % 2)) = 1 ]; then
				ls+=("$(bench "$lockd_port" "$mode" "$DURATION" "$clients")")
			else
				ps+=("$(bench "$pg_port" "$mode" "$DURATION" "$clients")")
			fi
		done
		i=$((i + 1))
		l=$(printf '%s\n' "${ls[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		p=$(printf '%s\n' "${ps[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		echo "-M $mode -c $clients: lockd ${ls[*]}; PostgreSQL ${ps[*]}" >>"$work/runs.log"
		awk -v m="$mode" -v c="$clients" -v l="$l" -v p="$p" 'BEGIN { printf "| %s | %s | %.0f | %.0f | %.2f |\n", m, c, l, p, l / p }'
	done
done
if [ -n "${REPORT_SQL:-}" ]; then
	echo
	echo '```'
	PGCONNECT_TIMEOUT=5 psql -X -h 127.0.0.1 -p "$lockd_port" -U postgres -d postgres -c "$REPORT_SQL"
	echo '```'
fi
if [ "$ROUNDS" -gt 1 ]; then
	echo
	echo '```'
	cat "$work/runs.log"
	echo '```'
fi
echo
echo "load average at start: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg) (anything else running on the machine skews the figures)"
