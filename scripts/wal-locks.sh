#!/usr/bin/env bash
# wal-locks.sh — the WAL-lock experiment (not run in CI): pgbench workloads
# at 1–64 clients under wal_insert_locks 1 vs 8 and commit_delay 0 vs
# 100 µs, synchronous_commit = on, with lockd's exact counters beside
# every tps figure: WALInsert and WALWrite LWLock waits and wait time,
# waits per insertion lock, group-commit batch sizes (commit records made
# durable per flush), flushes led and followed, fsyncs.
#
#   scripts/wal-locks.sh                     # both workloads
#   WORKLOAD=insert CLIENTS="1 8 64" DURATION=10 scripts/wal-locks.sh
#
# Workloads: tpcb (pgbench's tpcb-like, -M prepared, scale SCALE) and
# insert (each transaction one INSERT of a 100-byte row into a table with
# a primary key, -M prepared: the most log per commit).
#
# Every configuration gets its own lockd (wal_insert_locks is a restart
# setting); for each client count the four configurations run in an
# interleaved order that changes from round to round (ROUNDS rounds,
# default 2), after a warm-up; the table shows medians. The script holds
# the machine-wide benchmark mutex (LOCK_DIR) for one workload at a time.
#
# Environment: WORKLOAD (tpcb insert), CLIENTS (1 2 4 8 16 32 64),
# DURATION (seconds per run, 8), ROUNDS (2), SCALE (10), LOCKD_OPTS (extra
# -c options for every lockd), LOCK_DIR (unset: take no lock),
# KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

WORKLOAD=${WORKLOAD:-tpcb insert}
CLIENTS=${CLIENTS:-1 2 4 8 16 32 64}
DURATION=${DURATION:-8}
ROUNDS=${ROUNDS:-2}
SCALE=${SCALE:-10}
LOCK_DIR=${LOCK_DIR:-}
CONFIGS=("1 0" "8 0" "1 100" "8 100") # wal_insert_locks commit_delay

work=$(mktemp -d "${TMPDIR:-/tmp}/wal-locks.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	[ -n "$LOCK_DIR" ] && rmdir "$LOCK_DIR" 2>/dev/null || true
	[ "${KEEP:-0}" = 1 ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

echo "building lockd ..." >&2
go build -o "$work/lockd" ./cmd/lockd

declare -A port mport
start_lockd() { # index locks delay
	local i=$1 dir="$work/data$1"
	port[$i]=$(free_port)
	mport[$i]=$(free_port)
	# shellcheck disable=SC2086 # LOCKD_OPTS is a list of options
	"$work/lockd" -D "$dir" -p "${port[$i]}" -c listen_addresses=127.0.0.1 -c "metrics_listen_address=127.0.0.1:${mport[$i]}" \
		-c max_connections=100 -c shared_buffers=1GB -c max_wal_size=4GB -c checkpoint_timeout=30min \
		-c synchronous_commit=on -c wal_insert_locks="$2" -c commit_delay="$3" ${LOCKD_OPTS:-} >"$work/lockd$i.log" 2>&1 &
	pids+=($!)
	wait_ready "${port[$i]}"
}

psql_() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2" >/dev/null; }

# scrape PORT: the counters the tables need, as "name value" lines.
scrape() {
	curl -fsS "http://127.0.0.1:$1/metrics" | python3 -c '
import sys, re
want = {}
for line in sys.stdin:
    if line.startswith("#"):
        continue
    m = re.match(r"([a-z_]+)(\{[^}]*\})? ([0-9.eE+-]+)$", line.strip())
    if not m:
        continue
    name, labels, v = m.group(1), m.group(2) or "", float(m.group(3))
    key = None
    if name in ("lockd_lwlock_waits_total", "lockd_lwlock_wait_seconds_sum") and re.search(r"tranche=\"WAL(Insert|Write)\"", labels):
        key = name + "." + re.search(r"tranche=\"(\w+)\"", labels).group(1)
    elif name in ("lockd_wal_group_commit_batch_size_sum", "lockd_wal_group_commit_batch_size_count",
                  "lockd_wal_sync_seconds_count", "lockd_wal_commit_delay_sleeps_total", "lockd_transactions_committed_total",
                  "lockd_wal_bytes_total"):
        key = name
    elif name == "lockd_wal_flush_requests_total":
        key = name + "." + re.search(r"outcome=\"(\w+)\"", labels).group(1)
    elif name == "lockd_wal_insert_lock_waits_total":
        key = name + ".max"
        want[key] = max(want.get(key, 0), v)
        continue
    if key:
        want[key] = want.get(key, 0) + v
for k, v in sorted(want.items()):
    print(k, v)
'
}

bench() { # index clients workload -> appends a result line
	local i=$1 c=$2 w=$3 threads=2 out
	[ "$c" -lt 2 ] && threads=1
	local args=(-n -M prepared -c "$c" -j "$threads" -T "$DURATION" -h 127.0.0.1 -p "${port[$i]}" -U postgres)
	if [ "$w" = tpcb ]; then args+=(-b tpcb-like); else args+=(-f "$work/insert.sql"); fi
	scrape "${mport[$i]}" >"$work/before"
	out=$(pgbench "${args[@]}" postgres 2>&1) || { echo "$out" >&2; return 1; }
	scrape "${mport[$i]}" >"$work/after"
	grep -q '^number of failed transactions: 0 ' <<<"$out" || { echo "$out" >&2; return 1; }
	local tps
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")
	python3 - "$work/before" "$work/after" "$tps" "${CONFIGS[$i]}" "$c" "$w" >>"$work/results" <<'PY'
import sys
def load(p):
    return {l.split()[0]: float(l.split()[1]) for l in open(p) if l.strip()}
b, a = load(sys.argv[1]), load(sys.argv[2])
d = lambda k: a.get(k, 0) - b.get(k, 0)
tps = float(sys.argv[3]); locks, delay = sys.argv[4].split(); clients, workload = sys.argv[5], sys.argv[6]
txn = max(d("lockd_transactions_committed_total"), 1)
batches = d("lockd_wal_group_commit_batch_size_count")
batch = d("lockd_wal_group_commit_batch_size_sum") / batches if batches else 0
flushes = d("lockd_wal_flush_requests_total.led") + d("lockd_wal_flush_requests_total.followed")
followed = d("lockd_wal_flush_requests_total.followed") / flushes if flushes else 0
print(workload, clients, locks, delay, round(tps),
      "%.3f" % (d("lockd_lwlock_waits_total.WALInsert") / txn), "%.1f" % (1e6 * d("lockd_lwlock_wait_seconds_sum.WALInsert") / txn),
      "%.3f" % (d("lockd_lwlock_waits_total.WALWrite") / txn), "%.1f" % (1e6 * d("lockd_lwlock_wait_seconds_sum.WALWrite") / txn),
      "%.2f" % batch, "%.2f" % followed, "%.3f" % (d("lockd_wal_sync_seconds_count") / txn),
      "%.3f" % (d("lockd_wal_commit_delay_sleeps_total") / txn), round(d("lockd_wal_bytes_total") / txn))
PY
}

cat >"$work/insert.sql" <<'EOF'
\set k random(1, 2000000000)
INSERT INTO wal_ins (k, filler) VALUES (:k, repeat('x', 100)) ON CONFLICT DO NOTHING;
EOF

for w in $WORKLOAD; do
	if [ -n "$LOCK_DIR" ]; then
		until mkdir "$LOCK_DIR" 2>/dev/null; do
			echo "waiting for $LOCK_DIR (another benchmark holds it; remove it if none runs)" >&2
			sleep 20
		done
	fi
	echo "== $w: starting four lockd servers ..." >&2
	for i in 0 1 2 3; do
		read -r locks delay <<<"${CONFIGS[$i]}"
		start_lockd "$i" "$locks" "$delay"
		if [ "$w" = tpcb ]; then
			pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "${port[$i]}" -U postgres postgres >"$work/init$i.log" 2>&1
		else
			psql_ "${port[$i]}" "create table wal_ins (k int primary key, filler text)"
		fi
		pgbench -n -M prepared -c 8 -j 2 -T 3 -h 127.0.0.1 -p "${port[$i]}" -U postgres \
			$([ "$w" = tpcb ] && echo "-b tpcb-like" || echo "-f $work/insert.sql") postgres >/dev/null 2>&1 # warm-up
	done
	for c in $CLIENTS; do
		for r in $(seq 1 "$ROUNDS"); do
			order="0 1 2 3"
			[ $(((r + c) % 2)) = 1 ] && order="3 2 1 0"
			for i in $order; do
				echo "-- $w c=$c round $r config $i (${CONFIGS[$i]})" >&2
				bench "$i" "$c" "$w"
			done
		done
	done
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
	rm -rf "$work"/data?
	if [ -n "$LOCK_DIR" ]; then rmdir "$LOCK_DIR"; fi
done

# Medians per (workload, clients, locks, delay).
python3 - "$work/results" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(tuple(f[:4]), []).append([float(x) for x in f[4:]])
print("medians of %s; per transaction: WALInsert and WALWrite LWLock waits and µs waited; batch = commit records made durable per flush; followed = share of flush requests another backend's flush satisfied" % "runs")
print()
print("| workload | clients | wal_insert_locks | commit_delay | tps | WALInsert waits/txn | WALInsert µs/txn | WALWrite waits/txn | WALWrite µs/txn | batch | followed | fsyncs/txn | delay sleeps/txn | WAL bytes/txn |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in sorted(rows, key=lambda k: (k[0], int(k[1]), int(k[3]), int(k[2]))):
    cols = list(zip(*rows[k]))
    med = [statistics.median(c) for c in cols]
    print("| %s | %s | %s | %s µs | %.0f | %.3f | %.1f | %.3f | %.1f | %.2f | %.2f | %.3f | %.3f | %.0f |" % ((k[0], k[1], k[2], k[3]) + tuple(med)))
PY
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
