#!/usr/bin/env bash
# check-pg-activity.sh — run pg_activity (Debian's pg-activity) against
# lockd under pgbench load, in a detached tmux session of a fixed size,
# and check its screen as a user would read it: the pgbench sessions are
# listed with their query text, their state and the wait-event column,
# and nothing went wrong (no error message, no Python traceback).
# e2e's TestPgActivity is the short version CI runs.
#
# pg_activity decides it runs "locally" when the server's and the
# client's addresses are equal and it can read the postmaster's
# postmaster.pid; it then lists only the sessions it finds as operating
# system processes, for their CPU and memory columns. lockd's backends
# are goroutines of one process, so in that mode the list would be
# empty. This script therefore runs pg_activity as another operating
# system user than lockd (nobody, via runuser; that needs root), which
# cannot read lockd's data directory — as a DBA's own login account
# cannot read PostgreSQL's — and pg_activity shows every session without
# the per-process columns (docs/ecosystem.md).
#
# Usage (from anywhere in the repository):
#
#   scripts/check-pg-activity.sh
#   DURATION=30 CLIENTS=8 scripts/check-pg-activity.sh
#
# Environment:
#   DURATION   seconds of pgbench load (default 20)
#   CLIENTS    pgbench clients (default 4)
#   WAIT       seconds to let pg_activity refresh before the capture (default 6)
#   PGA_USER   the user pg_activity runs as (default nobody)
#   LOCKD_BIN  use this lockd binary instead of building one
#   KEEP=1     keep the temporary directory (logs, screen); kept on failure
# Exit status: 0 all checks passed, 1 a check failed, 2 setup error.
set -uo pipefail

DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-4}
WAIT=${WAIT:-6}
PGA_USER=${PGA_USER:-nobody}
me=check-pg-activity.sh
repo=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/lib/postgresql/15/bin:$PATH"
for bin in pgbench psql pg_isready pg_activity tmux runuser; do
	command -v "$bin" >/dev/null || { echo "$me: $bin not found on PATH (apt-get install pg-activity tmux postgresql-client-15)" >&2; exit 2; }
done
if [ "$(id -u)" != 0 ]; then
	echo "$me: must run as root, to run pg_activity as $PGA_USER, another user than lockd's (see the comment at the top)" >&2
	exit 2
fi
. "$repo/scripts/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/check-pg-activity.XXXXXX")
session=pga
sock=lockd-pga-$$
pids=()
failed=0
cleanup() {
	local i
	tmux -L "$sock" kill-server 2>/dev/null
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; wait "${pids[i]}" 2>/dev/null; done
	if [ "${KEEP:-0}" = 1 ] || [ "$failed" != 0 ]; then echo "$me: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failed=1; }

lockd=${LOCKD_BIN:-}
if [ -z "$lockd" ]; then
	lockd="$work/lockd"
	(cd "$repo" && go build -o "$lockd" ./cmd/lockd) || exit 2
fi
port=$(free_port)
"$lockd" -D "$work/data" -p "$port" -c metrics_listen_address= >"$work/lockd.log" 2>&1 &
pids+=($!)
wait_ready "$port" || exit 2
conn=(-h 127.0.0.1 -p "$port" -U postgres)
pgbench "${conn[@]}" -i -q -s 1 postgres >"$work/init.log" 2>&1 || { echo "$me: pgbench -i failed"; cat "$work/init.log"; exit 2; }

pgbench "${conn[@]}" -c "$CLIENTS" -T "$DURATION" postgres >"$work/pgbench.log" 2>&1 &
pids+=($!)
sleep 1

# pg_activity's stderr goes to a file the other user may write; tmux
# runs a server of its own (-L), killed at the end
chmod 755 "$work"
touch "$work/pg_activity.err"
chmod 666 "$work/pg_activity.err"
tmux -L "$sock" new-session -d -s "$session" -x 200 -y 50 \
	"runuser -u $PGA_USER -- pg_activity -h 127.0.0.1 -p $port -U postgres -d postgres 2>$work/pg_activity.err; echo pg_activity exited with status \$?; sleep 3600" ||
	{ echo "$me: tmux could not start"; exit 2; }
# pg_activity refreshes every 2 s: four captures, 2 s apart, checked together
sleep "$WAIT"
for i in 1 2 3 4; do
	[ "$i" = 1 ] || sleep 2
	tmux -L "$sock" capture-pane -p -t "$session" >"$work/screen-$i.txt"
done
cat "$work"/screen-[1-4].txt >"$work/screen.txt"

check() { # check DESCRIPTION REGEX
	if grep -Eq "$2" "$work/screen.txt"; then echo "PASS: $1"; else fail "$1: no match for /$2/"; fi
}
check "the running-queries list is shown" 'RUNNING QUERIES'
check "the header has a wait-event column" '^PID .*Waiting .*state .*Query'
check "pgbench's sessions are listed with their query text" 'pgbench .*(UPDATE pgbench_|SELECT abalance|INSERT INTO pgbench_history|BEGIN;|END;)'
check "the sessions' state is shown" 'pgbench .* (active|idle in transaction) '
check "wait events are shown" 'pgbench .* (transactionid|tuple|relation|WALSync|WALWrite|WALInsert|ClientRead|LockManager|BufferContent|ProcArray|XidGen|DataFileRead|DataFileExtend) +(active|idle in transaction) '
check "the client address is lockd's inet client_addr" 'pgbench +postgres +127\.0\.0\.1/32 '
if grep -Eiq 'traceback|error|exception|exited with status' "$work/screen.txt" "$work/pg_activity.err"; then
	fail "pg_activity reported a problem: $(grep -Ehi 'traceback|error|exception|exited' "$work/screen.txt" "$work/pg_activity.err" | head -5)"
else
	echo "PASS: no error or traceback"
fi
if [ "$failed" != 0 ]; then
	echo "---- screen (the last capture)"
	cat "$work/screen-4.txt"
	echo "---- pg_activity's stderr"
	cat "$work/pg_activity.err"
fi
exit "$failed"
