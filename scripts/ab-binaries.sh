#!/usr/bin/env bash
# ab-binaries.sh — the same pgbench workloads against two lockd binaries
# (say, before and after a change), alternated ABBA so that the machine's
# drift hits both alike, with a warm-up first; prints every run, the
# medians and the ratio B/A per workload.
#
#   A=/tmp/lockd-old B=/tmp/lockd-new scripts/ab-binaries.sh
#
# Settings (environment): SCALE (10), CLIENTS (8), THREADS (2),
# DURATION seconds per run (20), ROUNDS (3: runs of each binary per
# workload, in ABBA order), MODE (prepared),
# WORKLOADS ("select-only tpcb-like"), LOCKD_SETTINGS (extra -c settings,
# default shared_buffers=1GB as DESIGN.md's comparisons use).
set -euo pipefail
: "${A:?set A to the first lockd binary}" "${B:?set B to the second lockd binary}"
SCALE=${SCALE:-10} CLIENTS=${CLIENTS:-8} THREADS=${THREADS:-2} DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-3} MODE=${MODE:-prepared} WORKLOADS=${WORKLOADS:-"select-only tpcb-like"}
LOCKD_SETTINGS=${LOCKD_SETTINGS:-"shared_buffers=1GB"}
cd "$(dirname "$0")/.."
source scripts/lib.sh
export PATH="/usr/lib/postgresql/15/bin:$PATH"

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

declare -A port
start() { # start NAME BINARY
	local name=$1 bin=$2 p args=()
	p=$(free_port)
	for s in $LOCKD_SETTINGS; do args+=(-c "$s"); done
	"$bin" -D "$work/$name" -p "$p" -c metrics_listen_address= "${args[@]}" >"$work/$name.log" 2>&1 &
	pids+=($!)
	wait_ready "$p"
	port[$name]=$p
	pgbench -h 127.0.0.1 -p "$p" -U postgres -i -s "$SCALE" -q >"$work/$name.init.log" 2>&1
}

run() { # run NAME WORKLOAD SECONDS -> tps
	pgbench -h 127.0.0.1 -p "${port[$1]}" -U postgres -n -b "$2" -M "$MODE" -c "$CLIENTS" -j "$THREADS" -T "$3" 2>&1 |
		awk '/^tps = / {print $3; exit}'
}

start A "$A"
start B "$B"
echo "A=$A"
echo "B=$B"
echo "scale $SCALE, $CLIENTS clients, -M $MODE, ${DURATION}s runs, $ROUNDS rounds ABBA, settings: $LOCKD_SETTINGS"
for w in $WORKLOADS; do
	run A "$w" 5 >/dev/null # warm-up
	run B "$w" 5 >/dev/null
	as=() bs=()
	for r in $(seq "$ROUNDS"); do
		if ((r % 2)); then order="A B"; else order="B A"; fi
		for x in $order; do
			t=$(run "$x" "$w" "$DURATION")
			echo "$w round $r $x: $t tps"
			if [ "$x" = A ]; then as+=("$t"); else bs+=("$t"); fi
		done
	done
	ma=$(printf '%s\n' "${as[@]}" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}')
	mb=$(printf '%s\n' "${bs[@]}" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}')
	printf '%-12s median A %10.1f  B %10.1f  B/A %.3f\n' "$w" "$ma" "$mb" "$(echo "$mb / $ma" | bc -l)"
done
