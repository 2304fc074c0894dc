#!/usr/bin/env bash
# gen-pg-settings.sh — regenerate guc/pg15_settings.go, the table of every
# PostgreSQL 15 setting lockd accepts, from a real PostgreSQL 15: starts a
# throwaway server, dumps the facts pg_settings reports (name, type, unit,
# range, boot value, context, category, enum values, short description,
# flags) into guc/testdata/pg15_settings.tsv and runs the generator
# (guc/gen_pgsettings.go) on it. Not run in CI; commit both files.
#
# Environment:
#   PGBIN      PostgreSQL server binaries (default /usr/lib/postgresql/15/bin)
#   PG_OS_USER unprivileged user that runs PostgreSQL when this script runs
#              as root (default pgbench_cmp; created if missing)
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}
export PGBIN PG_OS_USER PATH="$PGBIN:$PATH"
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib.sh"

tmp=$(mktemp -d)
trap 'stop_pg "$tmp/pg"; rm -rf "$tmp"' EXIT
port=$(free_port)
start_pg "$tmp/pg" "$port"
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -c "\copy (
	select name, vartype, coalesce(unit, ''), coalesce(min_val, ''), coalesce(max_val, ''), boot_val,
	       context, category, coalesce(array_to_string(enumvals, ','), ''), short_desc,
	       coalesce(array_to_string(pg_settings_get_flags(name), ','), '')
	from pg_settings order by name) to '$tmp/settings.tsv'"
cp "$tmp/settings.tsv" "$repo/guc/testdata/pg15_settings.tsv"
cd "$repo/guc"
go run gen_pgsettings.go
echo "wrote guc/testdata/pg15_settings.tsv and guc/pg15_settings.go ($(wc -l <testdata/pg15_settings.tsv) settings)"
