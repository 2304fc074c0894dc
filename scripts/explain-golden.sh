#!/usr/bin/env bash
# explain-golden.sh — write e2e/testdata/explain/*.out from a live
# PostgreSQL 15: each .sql there is run by psql (-a, so every statement is
# echoed with its result) against a fresh database of a throwaway
# PostgreSQL started as an unprivileged user, with the C locale and UTC
# that lockd uses. e2e's TestExplainGolden holds lockd's transcripts of
# the same scripts to these files, so the plans lockd shows are
# PostgreSQL's, never pasted by hand.
#
# Usage (from anywhere in the repository):
#
#   scripts/explain-golden.sh          # every script
#   scripts/explain-golden.sh plans    # some
#
# Environment:
#   PGBIN      PostgreSQL server binaries (default /usr/lib/postgresql/15/bin)
#   PG_OS_USER unprivileged user that runs PostgreSQL when this script runs
#              as root (default pgbench_cmp; created if missing)
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}
repo=$(cd "$(dirname "$0")/.." && pwd)
dir="$repo/e2e/testdata/explain"
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/explain-golden.XXXXXX")
chmod 711 "$work"
trap 'stop_pg "$work/pg"; rm -rf "$work"' EXIT
port=$(free_port)
mkdir -p "$work/pg"
if [ "$(id -u)" = 0 ] && ! id "$PG_OS_USER" >/dev/null 2>&1; then useradd -m "$PG_OS_USER"; fi
[ "$(id -u)" = 0 ] && chown "$PG_OS_USER" "$work/pg"
as_pg "$PGBIN/initdb" -D "$work/pg/data" -U postgres -A trust --no-sync --locale=C -E UTF8 >"$work/initdb.log" 2>&1
as_pg "$PGBIN/pg_ctl" -D "$work/pg/data" -l "$work/pg/postgres.log" -w \
	-o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$work/pg -c TimeZone=UTC" start >/dev/null
wait_ready "$port"

scripts=("$@")
if [ ${#scripts[@]} = 0 ]; then
	for f in "$dir"/*.sql; do scripts+=("$(basename "$f" .sql)"); done
fi
for name in "${scripts[@]}"; do
	psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "drop database if exists g_$name" -c "create database g_$name" >/dev/null 2>&1
	(cd "$dir" && env -u PGTZ LC_ALL=C PAGER= psql -X -h 127.0.0.1 -p "$port" -U postgres -d "g_$name" -a -v ON_ERROR_STOP=0 -f "$name.sql" 2>&1) |
		grep -v '^LOCATION:  ' >"$dir/$name.out"
	echo "wrote e2e/testdata/explain/$name.out ($(as_pg "$PGBIN/postgres" --version))"
done
