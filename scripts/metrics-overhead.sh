#!/usr/bin/env bash
# metrics-overhead.sh — what measuring costs: pgbench tps with /metrics
# scraped every second and track_lock_timing on (the default), against
# metrics_listen_address = '' and track_lock_timing = off, in one run.
#
# Not run in CI. Usage: scripts/metrics-overhead.sh
# Prints one row per round and, per workload, the ratio of the summed tps.
# Environment: DURATION (default 30), SCALE (default 10), ROUNDS (default 2:
# the two configurations alternate, each ROUNDS times per workload, the
# scraped one first in odd rounds and second in even ones). The scraper is
# one curl process that fetches /metrics once a second over one kept-alive
# connection, as Prometheus would, so no process is started per scrape.
set -euo pipefail
DURATION=${DURATION:-30}
SCALE=${SCALE:-10}
ROUNDS=${ROUNDS:-2}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/metrics-overhead.XXXXXX")
pid=""
cleanup() {
	[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "${scraper:-}" ] && kill "$scraper" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
(cd "$repo" && go build -o "$work/lockd" ./cmd/lockd)
port=$((20000 + RANDOM % 20000))
mport=$((port + 1))

start() { # metrics address, track_lock_timing
	"$work/lockd" -D "$work/data" -p "$port" -c listen_addresses=127.0.0.1 \
		-c "metrics_listen_address=$1" -c "track_lock_timing=$2" >>"$work/lockd.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do pg_isready -q -h 127.0.0.1 -p "$port" && return; sleep 0.1; done
	echo "lockd did not start" >&2
	exit 1
}
stop() { kill -INT "$pid"; wait "$pid" || true; pid=""; }

start "" on
pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$port" -U postgres postgres >/dev/null 2>&1
stop

run() { # workload -> tps
	pgbench -n -h 127.0.0.1 -p "$port" -U postgres -b "$1" -M prepared -c 8 -j 2 -T "$DURATION" postgres 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

echo "| workload | round | metrics scraped every 1 s, timing on | metrics off, timing off | ratio |"
echo "|---|---:|---:|---:|---:|"
scraped() {
	start "127.0.0.1:$mport" on
	curl -s --rate 1/s "http://127.0.0.1:$mport/metrics?scrape=[1-1000000]" >/dev/null 2>&1 &
	scraper=$!
	on=$(run "$1")
	kill "$scraper"
	scraper=""
	stop
}
unscraped() {
	start "" off
	off=$(run "$1")
	stop
}
for w in select-only tpcb-like; do
	sum_on=0
	sum_off=0
	for r in $(seq "$ROUNDS"); do
		if [ $((r % 2)) = 1 ]; then scraped "$w"; unscraped "$w"; else unscraped "$w"; scraped "$w"; fi
		awk -v w="$w" -v r="$r" -v a="$on" -v b="$off" 'BEGIN { printf "| %s | %d | %.0f | %.0f | %.3f |\n", w, r, a, b, a / b }'
		sum_on=$(awk -v s="$sum_on" -v a="$on" 'BEGIN { print s + a }')
		sum_off=$(awk -v s="$sum_off" -v b="$off" 'BEGIN { print s + b }')
	done
	# The figure to quote: one round swings several percent either way on
	# a loaded 2-core machine; the ratio of the sums averages that out.
	awk -v w="$w" -v n="$ROUNDS" -v a="$sum_on" -v b="$sum_off" \
		'BEGIN { printf "| %s | mean of %d | %.0f | %.0f | **%.3f** |\n", w, n, a / n, b / n, a / b }'
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
