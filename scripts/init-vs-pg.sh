#!/usr/bin/env bash
# init-vs-pg.sh — pgbench -i on lockd and on PostgreSQL 15 side by side:
# the default steps, -I dtGvp (server-side generation) and
# --partitions=100, each ROUNDS times per server in ABBA order; the table
# gives the median wall time (pgbench's "done in") and the ratio, and the
# step times of each server's last run follow it. One untimed warm-up run
# on each server precedes each variant's timed runs.
#
# Not run in CI. Usage (from anywhere in the repository):
#
#   scripts/init-vs-pg.sh
#   SCALE=1 ROUNDS=2 scripts/init-vs-pg.sh
#
# Environment: SCALE (10), ROUNDS (3), SYNC (synchronous_commit on both
# servers: off, DESIGN.md's, by default; on for the write-ahead log's
# same-durability comparison), PGBIN, PG_OS_USER, LOCKD_BIN (a lockd
# binary; default: built from this tree), KEEP=1.
set -euo pipefail

SCALE=${SCALE:-10}
ROUNDS=${ROUNDS:-3}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-pgbench_cmp}
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/init-vs-pg.XXXXXX")
chmod 711 "$work"
lockd_pid=""
trap 'stop_pair "$work"' EXIT

SYNC=${SYNC:-off}
case $SYNC in on | off) ;; *) echo "init-vs-pg.sh: SYNC must be on or off" >&2; exit 2 ;; esac
# lockd gets PostgreSQL's checkpoint settings too: each run writes some
# 200 MB of WAL, so at lockd's default max_wal_size (1GB, PostgreSQL's
# default) every fifth run would pay for a checkpoint PostgreSQL never
# starts at its 4GB.
PAIR_LOCKD_OPTS="-c synchronous_commit=$SYNC -c max_wal_size=4GB -c checkpoint_timeout=30min" PAIR_PG_OPTS="-c synchronous_commit=$SYNC" start_pair "$work"

variants=(
	"default steps (dtgvp)|"
	"-I dtGvp (server-side generation)|-I dtGvp"
	"--partitions=100|--partitions=100"
)
init() { # port args -> the "done in" line
	# shellcheck disable=SC2086
	pgbench -i -q -s "$SCALE" $2 -h 127.0.0.1 -p "$1" -U postgres postgres 2>&1 | grep '^done in' || echo "done in NaN s (failed)"
}
secs() { sed -n 's/^done in \([0-9.]*\) s.*/\1/p'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "pgbench -i -s $SCALE; median of $ROUNDS runs per server in ABBA order; synchronous_commit=$SYNC on both;"
echo "lockd shared_buffers=1GB; PostgreSQL 15 per DESIGN.md (shared_buffers=1GB, max_wal_size=4GB); $(nproc) CPUs"
echo
echo "| pgbench -i | lockd s | PostgreSQL s | lockd/PG |"
echo "|---|---:|---:|---:|"
i=0
steps=""
for v in "${variants[@]}"; do
	name=${v%%|*}
	args=${v#*|}
	ls=() ps=()
	# Warm-up: one untimed run on each server (DESIGN.md), so that neither
	# pays for its first WAL segments and cold caches in the figures.
	init "$lport" "$args" >/dev/null
	init "$pport" "$args" >/dev/null
	for k in $(seq 0 $((2 * ROUNDS - 1))); do
		first=$(((k % 4 == 0 || k % 4 == 3) ? 1 : 0))
		if [ $(((first + i) % 2)) = 1 ]; then
			line=$(init "$lport" "$args")
			ls+=("$(echo "$line" | secs)")
			lline=$line
		else
			line=$(init "$pport" "$args")
			ps+=("$(echo "$line" | secs)")
			pline=$line
		fi
	done
	i=$((i + 1))
	l=$(printf '%s\n' "${ls[@]}" | median)
	p=$(printf '%s\n' "${ps[@]}" | median)
	awk -v n="$name" -v l="$l" -v p="$p" 'BEGIN { printf "| %s | %.2f | %.2f | %.2f |\n", n, l, p, l / p }'
	steps+="$name"$'\n'"  every run, s: lockd ${ls[*]}; PostgreSQL ${ps[*]}"$'\n'
	steps+="  lockd:      $lline"$'\n'"  PostgreSQL: $pline"$'\n'
done
echo
echo "$steps"
