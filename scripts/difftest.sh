#!/usr/bin/env bash
# difftest.sh — the long run of the randomized differential test
# (internal/difftest): N generated queries, compared between an
# in-process lockd and a PostgreSQL 15 that the test starts as an
# unprivileged user. CI runs 300 of them inside `go test ./...`; this
# runs thousands. See docs/difftest.md.
#
# Not run in CI. Usage (from anywhere in the repository):
#
#   scripts/difftest.sh [N [SEED]] [go test flags...]
#
#   N      queries (default 5000)
#   SEED   the seed (default: a new one, printed)
#
# Further arguments go to the test, for example -difftest.minimize (shrink
# each differing query), -difftest.dump=DIR (write each round's schema as
# an SQL script), -difftest.maxdiffs=0 (never stop early), -race.
#
# Environment:
#   PGBIN      PostgreSQL server binaries (default /usr/lib/postgresql/15/bin)
#   PG_OS_USER unprivileged user that runs PostgreSQL when this script runs
#              as root (default pgbench_cmp; created if missing)
#
# Exit status: the test's (1 when lockd and PostgreSQL differ).
set -euo pipefail

n=${1:-5000}
seed=${2:-0}
shift $(( $# < 2 ? $# : 2 ))
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
if [ "$seed" = 0 ]; then
	seed=$(( (RANDOM << 30) | (RANDOM << 15) | RANDOM ))
fi
echo "difftest.sh: $n queries, seed $seed"
start=$(date +%s)
status=0
go test ./internal/difftest -run '^TestDifferential$' -count=1 -timeout 0 -v \
	-difftest.n="$n" -difftest.seed="$seed" "$@" || status=$?
echo "difftest.sh: $n queries, seed $seed: exit $status after $(( $(date +%s) - start )) s"
exit "$status"
