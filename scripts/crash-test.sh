#!/usr/bin/env bash
# crash-test.sh — the long crash test of the write-ahead log (not run in
# CI; `go test ./e2e` runs a short version of each part).
#
#   scripts/crash-test.sh
#   ROUNDS=5 MAXRUN=4s scripts/crash-test.sh
#
# 1. lockd as a process under pgbench tpcb-like -c 8 (-M prepared) plus the
#    test's own client, which records every commit it sees acknowledged;
#    SIGKILL at a random moment, restart, check; ROUNDS times with
#    synchronous_commit = on and ROUNDS times with it off
#    (TestCrashRecovery with -crash.binary).
# 2. The same with lockd in the test's process over vfs.FaultFS, whose
#    simulated crash also drops or tears writes not yet synced, which a
#    kill -9 leaves in the page cache (TestCrashRecovery).
# 3. SIGKILL right after `pgbench -i -s INIT_SCALE` returns; every account
#    must be there after the restart (TestCrashAfterInit).
# 4. The visibility map: VACUUM, checkpoint, committed changes, VACUUM
#    again and a transaction left open, then SIGKILL (and the fault FS):
#    index-only scans must find what a sequential scan finds, and the same
#    pages must need heap fetches as before the crash; ROUNDS rounds each
#    (TestCrashVisibilityMap).
#
# After every restart: every acknowledged commit is there (with
# synchronous_commit = off, every one acknowledged three wal_writer_delays
# before the kill; the later ones lost are counted), the balances agree,
# every index finds exactly its heap's rows, no lock or prepared
# transaction lingers, and recovery took at most two minutes. One line per
# crash goes to the report (path printed at the end).
#
# With LOCK_DIR set, each part holds that directory as a machine-wide
# benchmark mutex while it runs, so that other long runs that take the same
# mutex wait for it.
#
# Environment: ROUNDS (20), SCALE (pgbench scale of the crash rounds, 1),
# MAXRUN (longest load before a kill, 8s), INIT_SCALE (10), LOCK_DIR
# (unset: take no lock).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-20}
SCALE=${SCALE:-1}
MAXRUN=${MAXRUN:-8s}
INIT_SCALE=${INIT_SCALE:-10}
LOCK_DIR=${LOCK_DIR:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/crash-test.XXXXXX")
report="$work/report.txt"
echo "building lockd ..." >&2
go build -o "$work/lockd" ./cmd/lockd

lock() {
	[ -n "$LOCK_DIR" ] || return 0
	until mkdir "$LOCK_DIR" 2>/dev/null; do
		echo "waiting for $LOCK_DIR (another benchmark holds it; remove it if none runs)" >&2
		sleep 20
	done
}
unlock() { [ -n "$LOCK_DIR" ] && rmdir "$LOCK_DIR" 2>/dev/null || true; }
trap unlock EXIT

part() { # title, go test arguments...
	local title=$1
	shift
	echo "== $title" | tee -a "$report" >&2
	lock
	go test ./e2e -count=1 -timeout 3h -v -crash.log="$report" "$@" 2>&1 | tee -a "$work/go-test.log" |
		grep -E '^(---|=== RUN|ok|FAIL|PASS)|crash_test.go|vismap_test.go' >&2
	local rc=${PIPESTATUS[0]}
	unlock
	return "$rc"
}

part "lockd process, SIGKILL, $ROUNDS rounds per synchronous_commit" -run '^TestCrashRecovery$' \
	-crash.binary="$work/lockd" -crash.rounds="$ROUNDS" -crash.scale="$SCALE" -crash.maxrun="$MAXRUN"
part "in-process lockd over the fault-injecting file system, $ROUNDS rounds per synchronous_commit" -run '^TestCrashRecovery$' \
	-crash.rounds="$ROUNDS" -crash.scale="$SCALE" -crash.maxrun="$MAXRUN"
part "SIGKILL right after pgbench -i -s $INIT_SCALE" -run '^TestCrashAfterInit$' \
	-crash.binary="$work/lockd" -crash.initscale="$INIT_SCALE"
part "visibility map, SIGKILL, $ROUNDS rounds" -run '^TestCrashVisibilityMap$' \
	-crash.binary="$work/lockd" -crash.rounds="$ROUNDS"
part "visibility map, fault-injecting file system, $ROUNDS rounds" -run '^TestCrashVisibilityMap$' \
	-crash.rounds="$ROUNDS"

echo
cat "$report"
echo
echo "report: $report; go test output: $work/go-test.log"
