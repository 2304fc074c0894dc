#!/usr/bin/env bash
# check-pgbench-variants.sh — every pgbench -i variant, each followed by
# the built-in tpcb-like script in every protocol mode, against a fresh
# lockd.
#
# Not run in CI (about 9 minutes at the default DURATION). For each
# initialisation variant
#
#   -I dtgvp (client-side data), -I dtGvp (server-side generate_series),
#   --partitions=10 (range), --partitions=10 --partition-method=hash,
#   -F 90, --unlogged-tables, --foreign-keys, --partitions=10 --foreign-keys
#   (range and hash: the history references the partitioned accounts)
#
# it runs pgbench -i -s SCALE, then pgbench -n -c CLIENTS -j THREADS
# -T DURATION with -M simple, extended and prepared, and after each run
# checks: exit 0, "number of failed transactions: 0", and the balances
# consistent — sum(abalance) = sum(delta) and sum(bbalance) =
# sum(tbalance) — and every account there once. One PASS/FAIL line per
# run, with tps;
# exits 1 if any check failed.
#
# Usage (from anywhere in the repository):
#
#   scripts/check-pgbench-variants.sh
#   DURATION=5 VARIANTS="--foreign-keys|-F 90" scripts/check-pgbench-variants.sh
#
# Environment:
#   DURATION  seconds per run (default 20); SCALE pgbench -i -s (default 1)
#   CLIENTS   pgbench -c (default 8); THREADS pgbench -j (default 2)
#   VARIANTS  the pgbench -i options to try, separated by "|"
#   LOCKD_BIN a built lockd to use instead of building one; KEEP=1 keeps logs
set -euo pipefail

DURATION=${DURATION:-20}
SCALE=${SCALE:-1}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
VARIANTS=${VARIANTS:--I dtgvp|-I dtGvp|--partitions=10|--partitions=10 --partition-method=hash|-F 90|--unlogged-tables|--foreign-keys|--partitions=10 --foreign-keys|--partitions=10 --partition-method=hash --foreign-keys}

repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib.sh"
for bin in pgbench psql pg_isready; do
	command -v "$bin" >/dev/null || { echo "check-pgbench-variants.sh: $bin not found on PATH" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/pgbench-variants.XXXXXX")
lockd_pid=""
cleanup() {
	local rc=$?
	set +e
	[ -n "$lockd_pid" ] && kill -INT "$lockd_pid" 2>/dev/null && wait "$lockd_pid" 2>/dev/null
	if [ "${KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then echo "check-pgbench-variants.sh: logs kept in $work" >&2; else rm -rf "$work"; fi
	exit "$rc"
}
trap cleanup EXIT

if [ -n "${LOCKD_BIN:-}" ]; then cp "$LOCKD_BIN" "$work/lockd"; else (cd "$repo" && go build -o "$work/lockd" ./cmd/lockd); fi
port=$(free_port)
"$work/lockd" -D "$work/data" -p "$port" >"$work/lockd.log" 2>&1 &
lockd_pid=$!
wait_ready "$port"
q() { PGCONNECT_TIMEOUT=5 psql -X -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "$1"; }

failed=0
fail() { echo "FAIL $*"; failed=1; }

echo "$("$work/lockd" version); pgbench -n -c $CLIENTS -j $THREADS -T $DURATION after pgbench -i -s $SCALE ...; $(nproc) CPUs"
IFS='|' read -r -a variants <<<"$VARIANTS"
for variant in "${variants[@]}"; do
	# shellcheck disable=SC2086 # the variant is a list of options
	if ! pgbench -i -q -s "$SCALE" $variant -h 127.0.0.1 -p "$port" -U postgres postgres >"$work/init.log" 2>&1; then
		fail "pgbench -i $variant"
		cat "$work/init.log"
		continue
	fi
	for mode in simple extended prepared; do
		label="pgbench -i $variant, -M $mode"
		out=$work/run.out
		if ! pgbench -n -M "$mode" -c "$CLIENTS" -j "$THREADS" -T "$DURATION" \
			-h 127.0.0.1 -p "$port" -U postgres postgres >"$out" 2>&1; then
			fail "$label: pgbench exited non-zero"
			tail -20 "$out"
			continue
		fi
		if ! grep -q '^number of failed transactions: 0 ' "$out"; then
			fail "$label: $(grep '^number of failed' "$out")"
			continue
		fi
		tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$out")
		sums=$(q "select (select sum(abalance) from pgbench_accounts) = (select coalesce(sum(delta), 0) from pgbench_history),
			(select sum(bbalance) from pgbench_branches) = (select sum(tbalance) from pgbench_tellers)")
		if [ "$sums" != "t|t" ]; then
			fail "$label: balances inconsistent ($sums)"
			continue
		fi
		accounts=$(q "select count(*) = $SCALE * 100000 and count(distinct aid) = count(*) from pgbench_accounts")
		if [ "$accounts" != t ]; then
			fail "$label: accounts lost or duplicated"
			continue
		fi
		printf 'PASS %s: %.0f tps, 0 failed, balances consistent\n' "$label" "$tps"
	done
done
exit "$failed"
