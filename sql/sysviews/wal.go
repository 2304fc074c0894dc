package sysviews

import (
	"strconv"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// The write-ahead log's statistics views, with PostgreSQL 15's columns.
const (
	oidPgStatBgwriter = 12190 // lockd's OIDs: PostgreSQL's differ per initdb
	oidPgStatWal      = 12194
)

// WALViews returns pg_stat_wal, pg_stat_bgwriter and pg_prepared_xacts;
// r holds pg_stat_reset_shared's baselines.
func WALViews(r *SharedResets) []*expr.View {
	return []*expr.View{statWALView(r), statBgwriterView(r), PreparedXactsView()}
}

// statWALView is pg_stat_wal (PostgreSQL 14+): the log's counters, summed
// over backends. wal_write_time and wal_sync_time (ms) grow only while
// track_wal_io_timing is on, as in PostgreSQL.
func statWALView(r *SharedResets) *expr.View {
	return &expr.View{
		Name: "pg_stat_wal",
		Oid:  oidPgStatWal,
		Cols: Cols(oidPgStatWal,
			"wal_records", types.TypeInt8, "wal_fpi", types.TypeInt8, "wal_bytes", types.TypeNumeric,
			"wal_buffers_full", types.TypeInt8, "wal_write", types.TypeInt8, "wal_sync", types.TypeInt8,
			"wal_write_time", types.TypeFloat8, "wal_sync_time", types.TypeFloat8, "stats_reset", types.TypeTimestamptz),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			w := ec.B.Store.WAL()
			if w == nil {
				return nil
			}
			s := w.Stats()
			b, resetAt := r.walBase()
			return emit([]types.Datum{types.IntDatum(int64(s.Records - b.Records)), types.IntDatum(int64(s.FPI - b.FPI)),
				types.TextDatum(strconv.FormatUint(s.Bytes-b.Bytes, 10)), types.IntDatum(int64(s.BuffersFull - b.BuffersFull)),
				types.IntDatum(int64(s.Writes - b.Writes)), types.IntDatum(int64(s.Syncs - b.Syncs)),
				types.FloatDatum(float64(s.WriteTime-b.WriteTime) / 1e6), types.FloatDatum(float64(s.SyncTime-b.SyncTime) / 1e6),
				types.IntDatum(at(resetAt, s.Reset).UnixMicro())})
		},
	}
}

// statBgwriterView is pg_stat_bgwriter (PostgreSQL 15's columns). lockd
// has no background writer: buffers_clean and maxwritten_clean stay 0;
// buffers_backend counts pages backends wrote back when they evicted a
// dirty buffer; buffers_backend_fsync stays 0 (backends never fsync data
// files); buffers_alloc counts buffers allocated for pages read in.
func statBgwriterView(r *SharedResets) *expr.View {
	return &expr.View{
		Name: "pg_stat_bgwriter",
		Oid:  oidPgStatBgwriter,
		Cols: Cols(oidPgStatBgwriter,
			"checkpoints_timed", types.TypeInt8, "checkpoints_req", types.TypeInt8,
			"checkpoint_write_time", types.TypeFloat8, "checkpoint_sync_time", types.TypeFloat8,
			"buffers_checkpoint", types.TypeInt8, "buffers_clean", types.TypeInt8, "maxwritten_clean", types.TypeInt8,
			"buffers_backend", types.TypeInt8, "buffers_backend_fsync", types.TypeInt8, "buffers_alloc", types.TypeInt8,
			"stats_reset", types.TypeTimestamptz),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			w := ec.B.Store.WAL()
			if w == nil {
				return nil
			}
			c := w.CheckpointStats()
			st := ec.B.Store.Stats()
			bc, bs, resetAt := r.bgBase()
			return emit([]types.Datum{types.IntDatum(int64(c.Timed - bc.Timed)), types.IntDatum(int64(c.Requested - bc.Requested)),
				types.FloatDatum(float64(c.WriteTime-bc.WriteTime) / 1e6), types.FloatDatum(float64(c.SyncTime-bc.SyncTime) / 1e6),
				types.IntDatum(int64(st.CheckpointWrites - bs.CheckpointWrites)), types.IntDatum(0), types.IntDatum(0),
				types.IntDatum(int64((st.BufferWrites - st.CheckpointWrites) - (bs.BufferWrites - bs.CheckpointWrites))), types.IntDatum(0),
				types.IntDatum(int64(st.BufferReads - bs.BufferReads)), types.IntDatum(at(resetAt, w.Stats().Reset).UnixMicro())})
		},
	}
}

const oidPgPreparedXacts = 12094

// PreparedXactsView is pg_prepared_xacts. lockd has no two-phase commit
// (PREPARE TRANSACTION is 0A000), so it is always empty; it exists so that
// a tool (or a check after crash recovery) can ask, as of PostgreSQL.
func PreparedXactsView() *expr.View {
	return &expr.View{
		Name: "pg_prepared_xacts",
		Oid:  oidPgPreparedXacts,
		Cols: Cols(oidPgPreparedXacts, "transaction", types.TypeXid, "gid", types.TypeText,
			"prepared", types.TypeTimestamptz, "owner", types.TypeName, "database", types.TypeName),
		Rows: func(*expr.EvalCtx, func([]types.Datum) error) error { return nil },
	}
}
