#!/usr/bin/env bash
# wal-per-tx.sh — bytes of write-ahead log per pgbench transaction on lockd
# and on PostgreSQL 15, each on fresh `pgbench -i` data: a checkpoint, a
# warm-up run, then pg_current_wal_lsn() before and after a timed run.
# Both servers with DESIGN.md's settings and synchronous_commit=off (lockd
# also max_wal_size=4GB, checkpoint_timeout=30min, so no checkpoint falls
# inside the run).
#
# Not run in CI. Usage (from anywhere in the repository):
#
#   scripts/wal-per-tx.sh
#   BUILTIN=simple-update DURATION=20 scripts/wal-per-tx.sh
#
# Environment: BUILTIN (tpcb-like), MODE (prepared), SCALE (10), CLIENTS (8),
# DURATION (10 s), WARMUP (5 s), PGBIN, PG_OS_USER, LOCKD_BIN (a lockd
# binary; default: built from this tree), KEEP=1.
set -euo pipefail

BUILTIN=${BUILTIN:-tpcb-like} MODE=${MODE:-prepared} SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-8} DURATION=${DURATION:-10} WARMUP=${WARMUP:-5}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/wal-per-tx.XXXXXX")
chmod 711 "$work"
lockd_pid=""
trap 'stop_pair "$work"' EXIT
PAIR_LOCKD_OPTS="-c synchronous_commit=off -c max_wal_size=4GB -c checkpoint_timeout=30min" start_pair "$work"

q() { psql -h 127.0.0.1 -p "$1" -U postgres -qAtc "$2" postgres; }
echo "pgbench -b $BUILTIN -M $MODE -c $CLIENTS, ${DURATION} s after a ${WARMUP} s warm-up, scale $SCALE, fresh data"
echo
echo "| server | transactions | WAL bytes | bytes per transaction |"
echo "|---|---:|---:|---:|"
for s in "lockd $lport" "PostgreSQL 15 $pport"; do
	name=${s% *} port=${s##* }
	pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$port" -U postgres postgres >/dev/null 2>&1
	q "$port" checkpoint >/dev/null
	pgbench -n -M "$MODE" -b "$BUILTIN" -c "$CLIENTS" -j 2 -T "$WARMUP" -h 127.0.0.1 -p "$port" -U postgres postgres >/dev/null 2>&1
	l0=$(q "$port" "select pg_current_wal_lsn()")
	n=$(pgbench -n -M "$MODE" -b "$BUILTIN" -c "$CLIENTS" -j 2 -T "$DURATION" -h 127.0.0.1 -p "$port" -U postgres postgres 2>&1 |
		awk '/actually processed/ { split($NF, a, "/"); print a[1] }')
	l1=$(q "$port" "select pg_current_wal_lsn()")
	b=$(q "$port" "select pg_wal_lsn_diff('$l1', '$l0')::bigint")
	echo "| $name | $n | $b | $((b / n)) |"
done
