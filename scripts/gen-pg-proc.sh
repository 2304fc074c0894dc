#!/usr/bin/env bash
# gen-pg-proc.sh — regenerate sql/catalog/pg15_proc.tsv, the
# pg_proc entries lockd serves: PostgreSQL 15's rows (OID, kind, volatility,
# argument and result types, the signatures psql's \df prints and the
# definitions \sf prints) for the function names lockd can call
# (sql/sysviews/gen_pgproc.go lists them). Starts a throwaway PostgreSQL
# 15 as scripts/lib.sh does. Not run in CI; commit the file.
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
chmod 755 "$tmp"
trap 'stop_pg "$tmp/pg"; rm -rf "$tmp"' EXIT
(cd "$repo/sql/sysviews" && go run gen_pgproc.go) >"$tmp/names.txt"
port=$(free_port)
start_pg "$tmp/pg" "$port"
psql=("$PGBIN/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
"${psql[@]}" -c "create table lockd_names (name text)" -c "\copy lockd_names from '$tmp/names.txt'"
"${psql[@]}" -c "\copy (
	select p.oid, p.proname, p.prolang, p.procost, p.prorows, p.provariadic, p.prokind, p.prosecdef,
	       p.proleakproof, p.proisstrict, p.proretset, p.provolatile, p.proparallel, p.pronargs,
	       p.pronargdefaults, p.prorettype, p.proargtypes::text, coalesce(p.proallargtypes::text, ''),
	       coalesce(p.proargmodes::text, ''), coalesce(p.proargnames::text, ''), p.prosrc,
	       pg_get_function_result(p.oid), pg_get_function_arguments(p.oid),
	       pg_get_function_identity_arguments(p.oid),
	       case when p.prokind = 'a' then '' else pg_get_functiondef(p.oid) end
	from pg_proc p join lockd_names n on n.name = p.proname
	where p.pronamespace = 'pg_catalog'::regnamespace
	order by p.oid) to '$tmp/proc.tsv'"
cp "$tmp/proc.tsv" "$repo/sql/catalog/pg15_proc.tsv"
echo "wrote sql/catalog/pg15_proc.tsv ($(wc -l <"$tmp/proc.tsv") functions)"
