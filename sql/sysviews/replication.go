package sysviews

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Views of things lockd does not have — standbys, WAL archiving,
// replication slots, recovery conflicts — with PostgreSQL 15's columns, so
// that monitoring tools (postgres_exporter) read them as from a primary
// without any: pg_stat_replication and pg_replication_slots are empty, the
// archiver has archived nothing, and no query was ever cancelled by a
// recovery conflict (those happen only on standbys).
const (
	oidPgStatReplication       = 12227
	oidPgReplicationSlots      = 12257
	oidPgStatDatabaseConflicts = 12271
	oidPgStatArchiver          = 12285
	oidPgStatWalReceiver       = 12236
)

// ReplicationViews returns pg_stat_replication, pg_replication_slots,
// pg_stat_archiver, pg_stat_database_conflicts and pg_stat_wal_receiver.
func ReplicationViews(r *SharedResets) []*expr.View {
	return []*expr.View{statReplicationView(), replicationSlotsView(), statArchiverView(r), statDatabaseConflictsView(),
		statWalReceiverView()}
}

func empty(*expr.EvalCtx, func([]types.Datum) error) error { return nil }

// statReplicationView is pg_stat_replication: one row per WAL sender, and
// lockd has none. client_addr is inet, as in PostgreSQL.
func statReplicationView() *expr.View {
	return &expr.View{
		Name: "pg_stat_replication", Oid: oidPgStatReplication,
		Cols: Cols(oidPgStatReplication,
			"pid", types.TypeInt4, "usesysid", types.TypeOid, "usename", types.TypeName, "application_name", types.TypeText,
			"client_addr", types.TypeInet, "client_hostname", types.TypeText, "client_port", types.TypeInt4,
			"backend_start", types.TypeTimestamptz, "backend_xmin", types.TypeXid, "state", types.TypeText,
			"sent_lsn", types.TypePgLsn, "write_lsn", types.TypePgLsn, "flush_lsn", types.TypePgLsn, "replay_lsn", types.TypePgLsn,
			"write_lag", types.TypeInterval, "flush_lag", types.TypeInterval, "replay_lag", types.TypeInterval,
			"sync_priority", types.TypeInt4, "sync_state", types.TypeText, "reply_time", types.TypeTimestamptz),
		Rows: empty,
	}
}

// replicationSlotsView is pg_replication_slots: lockd has no slots.
func replicationSlotsView() *expr.View {
	return &expr.View{
		Name: "pg_replication_slots", Oid: oidPgReplicationSlots,
		Cols: Cols(oidPgReplicationSlots,
			"slot_name", types.TypeName, "plugin", types.TypeName, "slot_type", types.TypeText, "datoid", types.TypeOid,
			"database", types.TypeName, "temporary", types.TypeBool, "active", types.TypeBool, "active_pid", types.TypeInt4,
			"xmin", types.TypeXid, "catalog_xmin", types.TypeXid, "restart_lsn", types.TypePgLsn,
			"confirmed_flush_lsn", types.TypePgLsn, "wal_status", types.TypeText, "safe_wal_size", types.TypeInt8,
			"two_phase", types.TypeBool),
		Rows: empty,
	}
}

// statArchiverView is pg_stat_archiver: one row; lockd does not archive
// WAL (archive_mode has no effect), so nothing was archived or failed.
// stats_reset is the server's start or the last
// pg_stat_reset_shared('archiver').
func statArchiverView(r *SharedResets) *expr.View {
	return &expr.View{
		Name: "pg_stat_archiver", Oid: oidPgStatArchiver,
		Cols: Cols(oidPgStatArchiver,
			"archived_count", types.TypeInt8, "last_archived_wal", types.TypeText, "last_archived_time", types.TypeTimestamptz,
			"failed_count", types.TypeInt8, "last_failed_wal", types.TypeText, "last_failed_time", types.TypeTimestamptz,
			"stats_reset", types.TypeTimestamptz),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			return emit([]types.Datum{types.IntDatum(0), types.NullDatum, types.NullDatum,
				types.IntDatum(0), types.NullDatum, types.NullDatum, types.IntDatum(at(r.archiverAt(), ec.B.Started).UnixMicro())})
		},
	}
}

// statDatabaseConflictsView is pg_stat_database_conflicts: queries
// cancelled on a standby by recovery conflicts. lockd is never a standby.
func statDatabaseConflictsView() *expr.View {
	return &expr.View{
		Name: "pg_stat_database_conflicts", Oid: oidPgStatDatabaseConflicts,
		Cols: Cols(oidPgStatDatabaseConflicts,
			"datid", types.TypeOid, "datname", types.TypeName, "confl_tablespace", types.TypeInt8, "confl_lock", types.TypeInt8,
			"confl_snapshot", types.TypeInt8, "confl_bufferpin", types.TypeInt8, "confl_deadlock", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			z := types.IntDatum(0)
			return emit([]types.Datum{types.OIDDatum(catalog.DatabaseOID), types.TextDatum(ec.B.Database), z, z, z, z, z})
		},
	}
}

// statWalReceiverView is pg_stat_wal_receiver: a standby's WAL receiver;
// lockd is never a standby, so it is empty, as on a PostgreSQL primary.
func statWalReceiverView() *expr.View {
	return &expr.View{
		Name: "pg_stat_wal_receiver", Oid: oidPgStatWalReceiver,
		Cols: Cols(oidPgStatWalReceiver,
			"pid", types.TypeInt4, "status", types.TypeText, "receive_start_lsn", types.TypePgLsn, "receive_start_tli", types.TypeInt4,
			"written_lsn", types.TypePgLsn, "flushed_lsn", types.TypePgLsn, "received_tli", types.TypeInt4,
			"last_msg_send_time", types.TypeTimestamptz, "last_msg_receipt_time", types.TypeTimestamptz,
			"latest_end_lsn", types.TypePgLsn, "latest_end_time", types.TypeTimestamptz, "slot_name", types.TypeText,
			"sender_host", types.TypeText, "sender_port", types.TypeInt4, "conninfo", types.TypeText),
		Rows: empty,
	}
}
