#!/usr/bin/env bash
# extension-bench.sh — the 2016 relation-extension experiment: concurrent
# bulk inserts and COPY into one table, under each relation_extension_mode,
# with 1, 2, 4, 8 and 16 clients, against lockd and PostgreSQL 15 on the
# same machine (scripts/compare-pg.sh does the running).
#
# Not run in CI (about 17 minutes). Usage: scripts/extension-bench.sh
# Environment: DURATION (seconds per run, default 15), CLIENTS (default
# "1 2 4 8 16"), WORKLOADS (default "insert copy"), MODES_EXT (default
# "single fixed group").
#
# Workload a ("insert"): insert into data select * from test_data; where
# test_data holds 1,000 rows of (int, 1 kB text) and data starts empty.
# Workload b ("copy"): COPY data2 FROM a server-side file WITH BINARY of
# 10,000 one-column text rows, written first by COPY (select ...) TO.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export DURATION=${DURATION:-15}
export CLIENTS=${CLIENTS:-1 2 4 8 16}
export MODES=simple WARMUP=0
export PG_OPTS=${PG_OPTS:--c synchronous_commit=off}
WORKLOADS=${WORKLOADS:-insert copy}
MODES_EXT=${MODES_EXT:-single fixed group}

for w in $WORKLOADS; do
	case $w in
	insert)
		export SETUP_SQL="create table test_data (id int, pad text);
insert into test_data select g, repeat('x', 1000) from generate_series(1, 1000) g;
create table data (id int, pad text);"
		export RESET_SQL="truncate data;"
		export SCRIPT="insert into data select * from test_data;"
		export REPORT_SQL="select relname, extensions, pages_added, waits, round(wait_time::numeric, 1) as wait_ms, round(pages_added::numeric / greatest(extensions, 1), 1) as pages_per_ext from pg_stat_lockd_extension where relname = 'data'"
		;;
	copy)
		export SETUP_SQL="create table data2 (v text);
copy (select g.i::text from generate_series(1, 10000) g(i)) to '@DIR@/copy.bin' with binary;"
		export RESET_SQL="truncate data2;"
		export SCRIPT="COPY data2 FROM '@DIR@/copy.bin' WITH BINARY;"
		export REPORT_SQL="select relname, extensions, pages_added, waits, round(wait_time::numeric, 1) as wait_ms, round(pages_added::numeric / greatest(extensions, 1), 1) as pages_per_ext from pg_stat_lockd_extension where relname = 'data2'"
		;;
	*)
		echo "extension-bench.sh: unknown workload $w" >&2
		exit 2
		;;
	esac
	for m in $MODES_EXT; do
		case $m in
		single) opts="-c relation_extension_mode=single" ;;
		fixed) opts="-c relation_extension_mode=fixed -c relation_extension_blocks=20" ;;
		group) opts="-c relation_extension_mode=group -c relation_extension_blocks=20 -c relation_extension_max_blocks=512" ;;
		*)
			echo "extension-bench.sh: unknown mode $m" >&2
			exit 2
			;;
		esac
		echo
		echo "### workload $w, relation_extension_mode $m"
		LOCKD_OPTS="$opts" "$here/compare-pg.sh"
	done
done
