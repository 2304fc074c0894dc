#!/usr/bin/env bash
# planner-vs-pg.sh — the single queries of the planner issue on
# pgbench_accounts (scale 10) and its branches and tellers, timed on lockd
# and on PostgreSQL 15 side by side, with both plans. For each query each
# server runs it for RUN_SECONDS with one pgbench client, ROUNDS times in ABBA
# order; the table gives the median latency and the ratio.
#
# Not run in CI. Usage (from anywhere in the repository):
#
#   scripts/planner-vs-pg.sh              # table on stdout
#   PLANS=1 scripts/planner-vs-pg.sh      # and each query's two plans
#
# Environment: SCALE (10), ROUNDS (5), RUN_SECONDS (3), PGBIN, PG_OS_USER,
# LOCKD_BIN (a lockd binary; default: built from this tree), KEEP=1.
set -euo pipefail

SCALE=${SCALE:-10}
ROUNDS=${ROUNDS:-5}
SECONDS_EACH=${RUN_SECONDS:-3}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/planner-vs-pg.XXXXXX")
chmod 711 "$work"
lockd_pid=""
trap 'stop_pair "$work"' EXIT

start_pair "$work"
for port in "$lport" "$pport"; do
	pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$port" -U postgres postgres >>"$work/init.log" 2>&1
	psql -X -q -h 127.0.0.1 -p "$port" -U postgres -c "vacuum analyze" postgres
done

queries=(
	"point lookup|select abalance from pgbench_accounts where aid = 500000"
	"between range|select * from pgbench_accounts where aid between 100 and 110"
	"IN list|select * from pgbench_accounts where aid in (1, 2, 3)"
	"min|select min(aid) from pgbench_accounts"
	"max|select max(aid) from pgbench_accounts"
	"ORDER BY LIMIT asc|select * from pgbench_accounts order by aid limit 1"
	"ORDER BY LIMIT desc|select * from pgbench_accounts order by aid desc limit 1"
	"count(*)|select count(*) from pgbench_accounts"
	"sum|select sum(abalance) from pgbench_accounts"
	"GROUP BY bid|select bid, sum(abalance) from pgbench_accounts group by bid"
	"join branches|select count(*) from pgbench_accounts a join pgbench_branches b on a.bid = b.bid"
	"join tellers|select count(*) from pgbench_accounts a join pgbench_tellers t on a.bid = t.bid where t.tid = 7"
)

latency() { # port file -> ms
	pgbench -n -h 127.0.0.1 -p "$1" -U postgres -c 1 -T "$SECONDS_EACH" -f "$2" postgres 2>&1 |
		sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "pgbench_accounts at scale $SCALE; one client, ${SECONDS_EACH}s per run, median of $ROUNDS runs per server in ABBA order;"
echo "lockd shared_buffers=1GB; PostgreSQL 15 per DESIGN.md (shared_buffers=1GB, synchronous_commit=off, max_parallel_workers_per_gather=0); $(nproc) CPUs"
echo
echo "| query | lockd ms | PostgreSQL ms | lockd/PG |"
echo "|---|---:|---:|---:|"
i=0
for q in "${queries[@]}"; do
	name=${q%%|*}
	sql=${q#*|}
	echo "$sql;" >"$work/q.sql"
	chmod 644 "$work/q.sql"
	ls=() ps=()
	for k in $(seq 0 $((2 * ROUNDS - 1))); do
		first=$(((k % 4 == 0 || k % 4 == 3) ? 1 : 0))
		if [ $(((first + i) % 2)) = 1 ]; then ls+=("$(latency "$lport" "$work/q.sql")"); else ps+=("$(latency "$pport" "$work/q.sql")"); fi
	done
	i=$((i + 1))
	l=$(printf '%s\n' "${ls[@]}" | median)
	p=$(printf '%s\n' "${ps[@]}" | median)
	awk -v n="$name" -v l="$l" -v p="$p" 'BEGIN { printf "| %s | %.3f | %.3f | %.2f |\n", n, l, p, l / p }'
	if [ "${PLANS:-0}" = 1 ]; then
		{
			echo "### $name"
			echo
			echo '```sql'
			echo "$sql;"
			echo '```'
			echo
			echo "lockd:"
			echo '```'
			psql -X -At -h 127.0.0.1 -p "$lport" -U postgres -c "explain $sql" postgres
			echo '```'
			echo "PostgreSQL 15:"
			echo '```'
			psql -X -At -h 127.0.0.1 -p "$pport" -U postgres -c "explain $sql" postgres
			echo '```'
			echo
		} >>"$work/plans.md"
	fi
done
if [ "${PLANS:-0}" = 1 ]; then
	echo
	cat "$work/plans.md"
fi
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
