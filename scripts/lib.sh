# lib.sh — shell helpers the scripts in this directory source: free
# loopback ports, waiting for a server, and a throwaway PostgreSQL 15 run
# as an unprivileged user (PostgreSQL refuses to run as root).
#
# Expects PGBIN (PostgreSQL's bin directory) and PG_OS_USER (the user
# PostgreSQL runs as when the script runs as root) to be set.

# free_port prints a loopback TCP port nothing listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

# wait_ready PORT waits up to 10 s for a server accepting connections.
wait_ready() {
	local _
	for _ in $(seq 100); do
		pg_isready -q -h 127.0.0.1 -p "$1" -U postgres -d postgres && return 0
		sleep 0.1
	done
	echo "no server answers on port $1" >&2
	return 1
}

# as_pg CMD... runs CMD as PG_OS_USER when root, as the caller otherwise.
as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u "$PG_OS_USER" -- "$@"; else "$@"; fi
}

# start_pg DIR PORT: initdb a cluster in DIR/data (superuser postgres,
# trust authentication) and start it on 127.0.0.1:PORT, with its socket
# and log in DIR.
start_pg() {
	local dir=$1 port=$2
	if [ "$(id -u)" = 0 ] && ! id "$PG_OS_USER" >/dev/null 2>&1; then useradd -m "$PG_OS_USER"; fi
	mkdir -p "$dir"
	chmod 711 "$(dirname "$dir")"
	[ "$(id -u)" = 0 ] && chown "$PG_OS_USER" "$dir"
	as_pg "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1
	as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w \
		-o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir" start >/dev/null
	wait_ready "$port"
}

# stop_pg DIR stops the cluster start_pg started in DIR.
stop_pg() {
	as_pg "$PGBIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1
}

# start_pair WORK: a lockd (LOCKD_BIN, or built from this tree) and a
# PostgreSQL 15, both fresh in WORK, with the settings of DESIGN.md's
# "Comparing with PostgreSQL" (lockd: shared_buffers=1GB; PostgreSQL:
# shared_buffers=1GB, synchronous_commit=off, max_wal_size=4GB,
# checkpoint_timeout=30min, max_parallel_workers_per_gather=0), then
# PAIR_LOCKD_OPTS and PAIR_PG_OPTS (more "-c name=value" options, which
# win over those). Sets lport, pport and lockd_pid; stop_pair WORK stops
# them.
start_pair() {
	local work=$1 repo
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -n "${LOCKD_BIN:-}" ]; then cp "$LOCKD_BIN" "$work/lockd"; else (cd "$repo" && go build -o "$work/lockd" ./cmd/lockd); fi
	lport=$(free_port)
	# shellcheck disable=SC2086
	"$work/lockd" -D "$work/lockd-data" -p "$lport" -c shared_buffers=1GB -c metrics_listen_address= ${PAIR_LOCKD_OPTS:-} >"$work/lockd.log" 2>&1 &
	lockd_pid=$!
	wait_ready "$lport"
	pport=$(free_port)
	start_pg "$work/pg" "$pport"
	as_pg "$PGBIN/pg_ctl" -D "$work/pg/data" -l "$work/pg/postgres.log" -w -m fast \
		-o "-c listen_addresses=127.0.0.1 -p $pport -c unix_socket_directories=$work/pg -c shared_buffers=1GB -c synchronous_commit=off -c max_wal_size=4GB -c checkpoint_timeout=30min -c max_parallel_workers_per_gather=0 ${PAIR_PG_OPTS:-}" restart >/dev/null
	wait_ready "$pport"
}

# stop_pair WORK stops what start_pair started and removes WORK (kept
# when KEEP=1); scripts call it from their EXIT trap.
stop_pair() {
	set +e
	[ -n "${lockd_pid:-}" ] && kill -INT "$lockd_pid" && wait "$lockd_pid"
	stop_pg "$1/pg"
	[ "${KEEP:-0}" = 1 ] && echo "kept $1" >&2 || rm -rf "$1"
}
