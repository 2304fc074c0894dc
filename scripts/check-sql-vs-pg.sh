#!/usr/bin/env bash
# check-sql-vs-pg.sh — run the SQL scripts of e2e/testdata/sql against a
# real PostgreSQL 15 on this machine and diff its transcripts against the
# expected outputs (.out files) that the e2e test holds lockd to.
#
# Not run in CI. Usage (from anywhere in the repository):
#
#   scripts/check-sql-vs-pg.sh            # every script
#   scripts/check-sql-vs-pg.sh joins dml  # some scripts
#
# Each script runs in a fresh database. PostgreSQL's LOCATION lines (its
# source file and line, which lockd does not send) are dropped before the
# comparison; everything else must match or be a difference listed in
# docs/sql-compat.md. Exit status 1 when any transcript differs.
#
# Environment:
#   PGBIN      PostgreSQL server binaries (default /usr/lib/postgresql/15/bin)
#   PG_OS_USER unprivileged user that runs PostgreSQL when this script runs
#              as root (default pgbench_cmp; created if missing)
#   KEEP=1     keep the temporary directory (logs, transcripts)
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}
repo=$(cd "$(dirname "$0")/.." && pwd)
dir="$repo/e2e/testdata/sql"

for bin in psql pg_isready; do
	command -v "$bin" >/dev/null || { echo "check-sql-vs-pg.sh: $bin not found on PATH" >&2; exit 1; }
done
for bin in initdb pg_ctl postgres; do
	[ -x "$PGBIN/$bin" ] || { echo "check-sql-vs-pg.sh: $PGBIN/$bin not found (set PGBIN)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/check-sql.XXXXXX")
chmod 711 "$work"
pg_started=""
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
	if [ -n "$pg_started" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "check-sql-vs-pg.sh: transcripts kept in $work" >&2
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT

if [ "$(id -u)" = 0 ] && ! id "$PG_OS_USER" >/dev/null 2>&1; then
	useradd -m "$PG_OS_USER"
fi
mkdir -p "$work/pg"
[ "$(id -u)" = 0 ] && chown "$PG_OS_USER" "$work/pg"
# the same locale and time zone lockd uses: bytewise (C) collation, UTC
as_pg "$PGBIN/initdb" -D "$work/pg/data" -U postgres -A trust --no-sync --locale=C -E UTF8 >"$work/initdb.log" 2>&1
port=$((20000 + RANDOM % 40000))
as_pg "$PGBIN/pg_ctl" -D "$work/pg/data" -l "$work/pg/postgres.log" -w \
	-o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$work/pg -c TimeZone=UTC" start >/dev/null
pg_started=1

scripts=("$@")
if [ ${#scripts[@]} = 0 ]; then
	for f in "$dir"/*.sql; do scripts+=("$(basename "$f" .sql)"); done
fi
status=0
for name in "${scripts[@]}"; do
	psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "drop database if exists t_$name" -c "create database t_$name" >/dev/null
	(cd "$dir" && env -u PGTZ LC_ALL=C PAGER= psql -X -h 127.0.0.1 -p "$port" -U postgres -d "t_$name" -a -v ON_ERROR_STOP=0 -f "$name.sql" >"$work/$name.pg.out" 2>&1) || true
	grep -v '^LOCATION:  ' "$work/$name.pg.out" >"$work/$name.pg"
	if diff -u --label "$name.out (lockd)" --label "$name (PostgreSQL 15)" "$dir/$name.out" "$work/$name.pg" >"$work/$name.diff"; then
		echo "PASS  $name"
	else
		echo "DIFF  $name ($(grep -c '^[-+][^-+]' "$work/$name.diff") lines)"
		cat "$work/$name.diff"
		status=1
	fi
done
exit "$status"
