#!/usr/bin/env bash
# check-pgbench.sh — pgbench acceptance checks against a fresh lockd.
#
# Not run in CI. Builds lockd (unless LOCKD_BIN is set), starts it on a free
# loopback port with a fresh data directory, and runs:
#
#   1. init       pgbench -i -s SCALE succeeds
#   2. builtins   tpcb-like, simple-update, select-only × -M simple, extended,
#                 prepared at -c 8 -j 2 -T DURATION: exit 0, 0 failed; tps
#                 (the first run, select-only, is without -n so pgbench's own
#                 vacuum/truncate path is exercised; every later run uses -n)
#   3. balances   after `truncate pgbench_history` and one -n tpcb-like run:
#                 sum(abalance) = sum(bbalance) = sum(tbalance) = sum(delta) and
#                 count(history) = transactions processed; after every later
#                 run: sum(abalance) = sum(delta), sum(bbalance) = sum(tbalance)
#   5. restart    sums and history count survive SIGINT (fast shutdown with a
#                 final checkpoint; exit code 0) and a restart on the same
#                 data directory
#   6. soak       SOAK_MINUTES of tpcb-like (-c 8 -j 2 -n -P 60) with a plain
#                 VACUUM of the four tables every minute from another
#                 connection; per-minute tps and table sizes. PASS when the
#                 updated tables (accounts, branches, tellers) end within 10%
#                 of their size after the first vacuum minute. pgbench_history
#                 is append-only, so it must grow; it is reported (bytes per
#                 row) but not held to the 10% bound.
#   4. scale 1    re-init -s 1, tpcb-like -c 32 -j 2 -T 10: 0 failed; pg_locks
#                 polled during the run (max ungranted transactionid locks, max
#                 fast-path relation locks; both expected > 0) and empty
#                 afterwards apart from the querying session's own virtualxid
#
# Steps run in the order 1, 2+3, 5, 6, 4 so that the restart and the soak
# exercise the SCALE data set that step 2 has been writing to. Each check
# prints a PASS/FAIL line; the script exits 1 if any check failed (2 on a
# setup error).
#
# Usage (from anywhere in the repository):
#
#   scripts/check-pgbench.sh
#   DURATION=10 SOAK_MINUTES=3 scripts/check-pgbench.sh
#
# Environment:
#   DURATION      seconds per step-2 pgbench run (default 30)
#   SCALE         pgbench scale for steps 1-3, 5, 6 (default 10)
#   SOAK_MINUTES  length of the soak in minutes (default 10; 0 skips it)
#   SOAK_STEP     seconds per soak "minute" (default 60; smaller values only
#                 for trying the script out quickly)
#   LOCKD_BIN     use this lockd binary instead of building one
#   LOCKD_OPTS    extra lockd arguments, e.g. "-c fastpath_lock_slots=0"
#   KEEP=1        keep the temporary directory (logs, data, pgbench output);
#                 it is always kept when a check fails
#   TMPDIR        where the temporary directory is created (default /tmp)
#
# The Prometheus endpoint is disabled (metrics_listen_address='') so the
# script does not collide with another lockd on the default metrics port.
set -uo pipefail

DURATION=${DURATION:-30}
SCALE=${SCALE:-10}
SOAK_MINUTES=${SOAK_MINUTES:-10}
SOAK_STEP=${SOAK_STEP:-60}
LOCKD_OPTS=${LOCKD_OPTS:-}

me=check-pgbench.sh
repo=$(cd "$(dirname "$0")/.." && pwd)
for bin in pgbench psql pg_isready; do
	command -v "$bin" >/dev/null || { echo "$me: $bin not found on PATH" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/check-pgbench.XXXXXX")
data="$work/data"
log="$work/lockd.log"
lockd_pid=""
bg_pids=()
failures=0
summary=()

cleanup() {
	local rc=$?
	set +e
	for p in "${bg_pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	if [ -n "$lockd_pid" ] && kill -0 "$lockd_pid" 2>/dev/null; then
		kill -INT "$lockd_pid"
		for _ in $(seq 100); do kill -0 "$lockd_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$lockd_pid" 2>/dev/null
		wait "$lockd_pid" 2>/dev/null
	fi
	if [ "${KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then
		echo "$me: logs and data kept in $work" >&2
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "$*"; }
section() { printf '\n=== %s ===\n' "$*"; }

# check NAME OK DETAIL: record and print a PASS/FAIL line.
check() {
	local name=$1 ok=$2 detail=${3:-}
	local verdict=PASS
	if [ "$ok" != 1 ]; then
		verdict=FAIL
		failures=$((failures + 1))
	fi
	say "$verdict  $name${detail:+  ($detail)}"
	summary+=("$verdict  $name")
}

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

# --- lockd ---------------------------------------------------------------------
if [ -n "${LOCKD_BIN:-}" ]; then
	cp "$LOCKD_BIN" "$work/lockd" || exit 2
else
	echo "building lockd ..." >&2
	(cd "$repo" && go build -o "$work/lockd" ./cmd/lockd) || { echo "$me: build failed" >&2; exit 2; }
fi
port=$(free_port)

start_lockd() {
	# shellcheck disable=SC2086 # LOCKD_OPTS is split on purpose
	"$work/lockd" -D "$data" -p "$port" -c listen_addresses=127.0.0.1 -c metrics_listen_address= \
		$LOCKD_OPTS >>"$log" 2>&1 &
	lockd_pid=$!
	for _ in $(seq 300); do
		pg_isready -q -h 127.0.0.1 -p "$port" -U postgres -d postgres && return 0
		kill -0 "$lockd_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "$me: lockd did not start on port $port; log tail:" >&2
	tail -20 "$log" >&2
	return 1
}

# alive: fail hard when lockd has gone away (later checks would be noise).
alive() {
	if ! kill -0 "$lockd_pid" 2>/dev/null; then
		wait "$lockd_pid"
		check "lockd still running" 0 "lockd exited with code $?; log tail follows"
		tail -30 "$log"
		exit 1
	fi
}

export PGCONNECT_TIMEOUT=10
conn=(-h 127.0.0.1 -p "$port" -U postgres)

# q SQL: run one statement, print its value (unaligned, tuples only).
q() { psql -X -At -v ON_ERROR_STOP=1 "${conn[@]}" -d postgres -c "$1" 2>&1; }

# qnum SQL: like q but an empty result (NULL sum) prints 0; non-numbers pass through.
qnum() {
	local v
	v=$(q "$1")
	[ -z "$v" ] && v=0
	printf '%s' "$v"
}

isint() { [[ $1 =~ ^-?[0-9]+$ ]]; }

# sums: set SA SB ST SD HC (the four balance sums and the history row count).
sums() {
	SA=$(qnum 'select sum(abalance) from pgbench_accounts')
	SB=$(qnum 'select sum(bbalance) from pgbench_branches')
	ST=$(qnum 'select sum(tbalance) from pgbench_tellers')
	SD=$(qnum 'select sum(delta) from pgbench_history')
	HC=$(qnum 'select count(*) from pgbench_history')
}
sums_str() { echo "sum(abalance)=$SA sum(bbalance)=$SB sum(tbalance)=$ST sum(delta)=$SD count(history)=$HC"; }

# relaxed_check LABEL: the invariants that hold across runs from a truncated history.
relaxed_check() {
	sums
	local ok=0
	if isint "$SA" && isint "$SB" && isint "$ST" && isint "$SD" &&
		[ "$SA" = "$SD" ] && [ "$SB" = "$ST" ]; then
		ok=1
	fi
	check "3. balances after $1: sum(abalance)=sum(delta), sum(bbalance)=sum(tbalance)" "$ok" "$(sums_str)"
}

# bench OUTFILE ARGS...: run pgbench, save output; set B_RC B_TPS B_PROC B_FAILED.
bench() {
	local out=$1
	shift
	pgbench "${conn[@]}" "$@" postgres >"$out" 2>&1
	B_RC=$?
	B_TPS=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$out")
	B_PROC=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	B_FAILED=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	: "${B_TPS:=?}" "${B_PROC:=?}" "${B_FAILED:=?}"
}

bench_ok() { [ "$B_RC" = 0 ] && [ "$B_FAILED" = 0 ]; }

bench_fail_detail() { # OUTFILE
	echo "    pgbench exit $B_RC; output tail ($1):"
	tail -15 "$1" | sed 's/^/    | /'
}

say "lockd check-pgbench: DURATION=$DURATION SCALE=$SCALE SOAK_MINUTES=$SOAK_MINUTES LOCKD_OPTS='${LOCKD_OPTS}'"
say "lockd: $("$work/lockd" version 2>&1 | head -1); pgbench: $(pgbench --version); $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
say "work dir: $work   port: $port"
start_lockd || exit 2

# --- 1. init -------------------------------------------------------------------
section "1. pgbench -i -s $SCALE"
t0=$(date +%s.%N)
pgbench -i -s "$SCALE" "${conn[@]}" postgres >"$work/init-s$SCALE.log" 2>&1
rc=$?
t1=$(date +%s.%N)
done_line=$(grep '^done in' "$work/init-s$SCALE.log")
if [ "$rc" = 0 ]; then
	check "1. pgbench -i -s $SCALE" 1 "${done_line:-rc 0}"
else
	check "1. pgbench -i -s $SCALE" 0 "exit $rc"
	tail -15 "$work/init-s$SCALE.log" | sed 's/^/    | /'
	exit 1
fi
alive

# --- 2 + 3. builtins × modes, balances ------------------------------------------
section "2. builtins × modes (-c 8 -j 2 -T $DURATION), 3. balances"
declare -A tps
first=1
for b in select-only tpcb-like simple-update; do
	for m in simple extended prepared; do
		alive
		nflag=(-n)
		if [ "$first" = 1 ]; then
			nflag=()
		fi
		if [ "$b" = tpcb-like ] && [ "$m" = simple ]; then
			# Balances are all zero here (only select-only has run), so after
			# truncating history every sum must equal sum(delta).
			r=$(q 'truncate pgbench_history')
			[ "$r" = "TRUNCATE TABLE" ] || say "    truncate pgbench_history: $r"
		fi
		outf="$work/bench-$b-$m.log"
		bench "$outf" -c 8 -j 2 -T "$DURATION" -b "$b" -M "$m" "${nflag[@]}"
		tps[$b/$m]=$B_TPS
		desc="pgbench -c 8 -j 2 -T $DURATION -b $b -M $m${nflag:+ -n}"
		if bench_ok; then
			check "2. $desc" 1 "tps=$B_TPS processed=$B_PROC failed=$B_FAILED"
		else
			check "2. $desc" 0 "exit=$B_RC tps=$B_TPS processed=$B_PROC failed=$B_FAILED"
			bench_fail_detail "$outf"
		fi
		first=0
		alive
		if [ "$b" = tpcb-like ] && [ "$m" = simple ]; then
			sums
			ok=0
			if isint "$SA" && isint "$HC" && [ "$SA" = "$SB" ] && [ "$SA" = "$ST" ] &&
				[ "$SA" = "$SD" ] && [ "$HC" = "$B_PROC" ]; then
				ok=1
			fi
			check "3. balances after truncate + one -n tpcb-like run: all four sums equal, count(history)=processed" \
				"$ok" "$(sums_str) processed=$B_PROC"
		elif [ "$b" != select-only ]; then
			relaxed_check "$b -M $m"
		fi
	done
done
say ""
say "tps (-c 8 -j 2 -T $DURATION, scale $SCALE):"
printf '  %-14s %12s %12s %12s\n' builtin simple extended prepared
for b in tpcb-like simple-update select-only; do
	printf '  %-14s' "$b"
	for m in simple extended prepared; do
		printf ' %12s' "$(awk -v t="${tps[$b/$m]}" 'BEGIN { if (t ~ /^[0-9.]+$/) printf "%.0f", t; else print t }')"
	done
	printf '\n'
done

# --- 5. restart -----------------------------------------------------------------
section "5. restart (SIGINT, restart on the same data directory)"
alive
sums
before="$(sums_str)"
bSA=$SA bSB=$SB bST=$ST bSD=$SD bHC=$HC
say "before: $before"
t0=$(date +%s.%N)
kill -INT "$lockd_pid"
exited=0
for _ in $(seq 1200); do # up to 120 s
	kill -0 "$lockd_pid" 2>/dev/null || { exited=1; break; }
	sleep 0.1
done
if [ "$exited" = 1 ]; then
	wait "$lockd_pid"
	src=$?
	t1=$(date +%s.%N)
	check "5. SIGINT shutdown exit code 0" "$([ "$src" = 0 ] && echo 1 || echo 0)" \
		"exit $src after $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
else
	check "5. SIGINT shutdown within 120 s" 0 "still running; sending SIGKILL"
	kill -KILL "$lockd_pid"
	wait "$lockd_pid"
fi
lockd_pid=""
t0=$(date +%s.%N)
if ! start_lockd; then
	check "5. restart on the same data directory" 0 "did not come up"
	exit 1
fi
t1=$(date +%s.%N)
say "restart ready after $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
sums
after="$(sums_str)"
say "after:  $after"
ok=0
isint "$SA" && [ "$SA" = "$bSA" ] && [ "$SB" = "$bSB" ] && [ "$ST" = "$bST" ] &&
	[ "$SD" = "$bSD" ] && [ "$HC" = "$bHC" ] && ok=1
check "5. sums and history count identical after restart" "$ok" "$after"
# Index lookups after the restart (the indexes are rebuilt from checkpoint files).
r=$(q "select count(*) from pgbench_accounts where aid = $((SCALE * 100000))")
check "5. primary-key lookup of the last account after restart" "$([ "$r" = 1 ] && echo 1 || echo 0)" "count=$r"

# --- 6. soak --------------------------------------------------------------------
if [ "$SOAK_MINUTES" -gt 0 ]; then
	section "6. soak: $SOAK_MINUTES × ${SOAK_STEP}s tpcb-like at scale $SCALE (-c 8 -j 2 -n -P $SOAK_STEP), VACUUM of the four tables every ${SOAK_STEP}s"
	alive
	tables=(pgbench_accounts pgbench_branches pgbench_tellers pgbench_history)
	sizes="$work/soak-sizes.tsv"
	# snapshot MINUTE VACUUM_SECONDS: one row of relation / total sizes + history rows.
	snapshot() {
		local row t
		row=$(printf '%s\t%s' "$1" "$2")
		for t in "${tables[@]}"; do
			row+=$(printf '\t%s\t%s' "$(qnum "select pg_relation_size('$t')")" "$(qnum "select pg_total_relation_size('$t')")")
		done
		row+=$(printf '\t%s' "$(qnum 'select count(*) from pgbench_history')")
		echo "$row" >>"$sizes"
	}
	snapshot 0 -
	soak_out="$work/soak-pgbench.log"
	soak_start=$(date +%s)
	pgbench "${conn[@]}" -n -b tpcb-like -c 8 -j 2 -T $((SOAK_MINUTES * SOAK_STEP)) -P "$SOAK_STEP" postgres >"$soak_out" 2>&1 &
	soak_pid=$!
	bg_pids+=("$soak_pid")
	vac_err=0
	for m in $(seq "$SOAK_MINUTES"); do
		now=$(date +%s)
		target=$((soak_start + m * SOAK_STEP))
		[ "$now" -lt "$target" ] && sleep $((target - now))
		alive
		v0=$(date +%s.%N)
		for t in "${tables[@]}"; do
			r=$(q "vacuum $t")
			if [ "$r" != VACUUM ]; then
				vac_err=$((vac_err + 1))
				say "    minute $m: vacuum $t: $r"
			fi
		done
		v1=$(date +%s.%N)
		snapshot "$m" "$(awk -v a="$v0" -v b="$v1" 'BEGIN{printf "%.2f", b-a}')"
		say "  minute $m done"
	done
	wait "$soak_pid"
	soak_rc=$?
	bg_pids=()
	alive
	B_RC=$soak_rc
	B_TPS=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$soak_out")
	B_PROC=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$soak_out")
	B_FAILED=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$soak_out")
	: "${B_TPS:=?}" "${B_PROC:=?}" "${B_FAILED:=?}"
	if bench_ok; then
		check "6. soak pgbench exit 0, 0 failed" 1 "tps=$B_TPS processed=$B_PROC failed=$B_FAILED"
	else
		check "6. soak pgbench exit 0, 0 failed" 0 "exit=$B_RC tps=$B_TPS processed=$B_PROC failed=$B_FAILED"
		bench_fail_detail "$soak_out"
	fi
	check "6. every VACUUM statement succeeded" "$([ "$vac_err" = 0 ] && echo 1 || echo 0)" "$vac_err errors"

	say ""
	say "tps per minute (pgbench -P $SOAK_STEP):"
	grep '^progress:' "$soak_out" | sed 's/^/  /'
	say ""
	say "sizes in bytes after each minute's VACUUM (rel = pg_relation_size, total = pg_total_relation_size; minute 0 = before the soak):"
	awk -F'\t' 'BEGIN {
			printf "  %3s %6s %12s %12s %9s %9s %9s %9s %12s %12s %10s %9s\n", "min", "vac_s",
				"accts_rel", "accts_total", "br_rel", "br_total", "tel_rel", "tel_total",
				"hist_rel", "hist_total", "hist_rows", "B/row"
		}
		{ printf "  %3s %6s %12s %12s %9s %9s %9s %9s %12s %12s %10s %9s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
			($11 > 0 ? sprintf("%.1f", $9 / $11) : "-") }' "$sizes"
	say ""
	if [ "$SOAK_MINUTES" -ge 2 ]; then
		first_row=$(awk -F'\t' '$1 == 1' "$sizes")
		last_row=$(tail -1 "$sizes")
		names=(accounts accounts branches branches tellers tellers)
		kinds=(rel total rel total rel total)
		for i in 0 1 2 3 4 5; do
			col=$((i + 3))
			f=$(cut -f"$col" <<<"$first_row")
			l=$(cut -f"$col" <<<"$last_row")
			ok=0
			pct="?"
			if isint "$f" && isint "$l" && [ "$f" -gt 0 ]; then
				pct=$(awk -v f="$f" -v l="$l" 'BEGIN{printf "%+.1f%%", (l - f) * 100 / f}')
				awk -v f="$f" -v l="$l" 'BEGIN{exit !(l <= f * 1.10)}' && ok=1
			fi
			check "6. pgbench_${names[$i]} ${kinds[$i]} size bounded (minute $SOAK_MINUTES within 10% of minute 1)" \
				"$ok" "minute 1: $f, minute $SOAK_MINUTES: $l, $pct"
		done
		# History is append-only: report growth per row rather than a bound.
		hf=$(cut -f9 <<<"$first_row") hrf=$(cut -f11 <<<"$first_row")
		hl=$(cut -f9 <<<"$last_row") hrl=$(cut -f11 <<<"$last_row")
		say "INFO  pgbench_history (append-only, not bounded): minute 1 $hf B / $hrf rows, minute $SOAK_MINUTES $hl B / $hrl rows;" \
			"bytes per row added since minute 1: $(awk -v a="$hf" -v b="$hl" -v c="$hrf" -v d="$hrl" 'BEGIN{ if (d > c) printf "%.1f", (b - a) / (d - c); else print "-" }')"
	else
		say "INFO  SOAK_MINUTES < 2: no size bound checked"
	fi
	relaxed_check "the soak"
fi

# --- 4. scale 1, 32 clients -------------------------------------------------------
section "4. scale 1, tpcb-like -c 32 -j 2 -T 10, pg_locks"
alive
pgbench -i -s 1 "${conn[@]}" postgres >"$work/init-s1.log" 2>&1
rc=$?
check "4. pgbench -i -s 1" "$([ "$rc" = 0 ] && echo 1 || echo 0)" "$(grep '^done in' "$work/init-s1.log" || echo "exit $rc")"
polls="$work/pglocks-polls.tsv"
: >"$polls"
(
	sleep 1
	end=$(($(date +%s) + 8))
	while [ "$(date +%s)" -lt "$end" ]; do
		w=$(qnum "select count(*) from pg_locks where locktype='transactionid' and not granted")
		f=$(qnum "select count(*) from pg_locks where locktype='relation' and fastpath")
		printf '%s\t%s\n' "$w" "$f" >>"$polls"
		sleep 0.5
	done
) &
poll_pid=$!
bg_pids+=("$poll_pid")
outf="$work/bench-scale1-c32.log"
bench "$outf" -n -c 32 -j 2 -T 10 -b tpcb-like
wait "$poll_pid"
bg_pids=()
alive
if bench_ok; then
	check "4. pgbench -n -c 32 -j 2 -T 10 -b tpcb-like (scale 1)" 1 "tps=$B_TPS processed=$B_PROC failed=$B_FAILED"
else
	check "4. pgbench -n -c 32 -j 2 -T 10 -b tpcb-like (scale 1)" 0 "exit=$B_RC tps=$B_TPS processed=$B_PROC failed=$B_FAILED"
	bench_fail_detail "$outf"
fi
npolls=$(wc -l <"$polls")
bad_polls=$(awk -F'\t' '$1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/' "$polls" | head -3)
maxw=$(awk -F'\t' '$1 ~ /^[0-9]+$/ && $1 > m {m = $1} END {print m + 0}' "$polls")
maxf=$(awk -F'\t' '$2 ~ /^[0-9]+$/ && $2 > m {m = $2} END {print m + 0}' "$polls")
say "pg_locks polls during the run (ungranted transactionid, fast-path relation): $(awk -F'\t' '{printf "%s/%s ", $1, $2}' "$polls")"
[ -n "$bad_polls" ] && say "    unexpected poll output: $bad_polls"
check "4. ungranted transactionid locks seen during the run" "$([ "$maxw" -gt 0 ] && echo 1 || echo 0)" "max $maxw over $npolls polls"
check "4. fast-path relation locks seen during the run" "$([ "$maxf" -gt 0 ] && echo 1 || echo 0)" "max $maxf over $npolls polls"
# Sessions end asynchronously after pgbench disconnects: allow them up to 5 s.
waited=0
for i in $(seq 50); do
	left=$(qnum "select count(*) from pg_locks where locktype <> 'virtualxid'")
	othervx=$(qnum "select count(*) from pg_locks where locktype = 'virtualxid' and pid <> pg_backend_pid()")
	[ "$left" = 0 ] && [ "$othervx" = 0 ] && break
	waited=$i
	sleep 0.1
done
waitnote=""
[ "$waited" -gt 0 ] && waitnote=", after waiting $((waited * 100)) ms for sessions to end"
check "4. no locks left after the run (locktype <> 'virtualxid')" "$([ "$left" = 0 ] && echo 1 || echo 0)" \
	"count=$left$waitnote"
check "4. virtualxid rows only for the querying session" "$([ "$othervx" = 0 ] && echo 1 || echo 0)" "other sessions' virtualxid rows=$othervx"
if [ "$left" != 0 ] || [ "$othervx" != 0 ]; then
	say "    pg_locks now:"
	q "select locktype, relation, transactionid, virtualxid, virtualtransaction, pid, mode, granted, fastpath from pg_locks" |
		head -40 | sed 's/^/    | /'
fi

# --- summary ---------------------------------------------------------------------
section "summary"
for s in "${summary[@]}"; do say "$s"; done
say ""
say "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$failures" -gt 0 ]; then
	say "RESULT: FAIL ($failures of ${#summary[@]} checks failed)"
	exit 1
fi
say "RESULT: PASS (${#summary[@]} checks)"
