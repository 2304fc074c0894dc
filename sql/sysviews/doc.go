// Package sysviews builds the system catalogs and views that lockd serves
// as relations: pg_class, pg_attribute, pg_type, pg_index, pg_constraint,
// pg_inherits, pg_partitioned_table, pg_namespace and the others psql's
// \d commands read, pg_sequence(s), pg_settings, pg_locks and lockd's
// pg_stat_lockd_extension, the statistics views (pg_stat_all_tables and
// its kin, pg_stat_wal, pg_stat_bgwriter, pg_stat_archiver,
// pg_stat_database_conflicts) and the empty replication views. Each is an
// expr.View whose rows are computed when scanned, from the session's
// catalog snapshot and the subsystems.
// (pg_stat_activity, pg_stat_database and pg_prepared_statements, which
// read sessions, are the facade's.)
//
// What it must not do: cache rows between scans, or change anything.
//
// Concurrency: a view's rows are computed on the scanning session's
// goroutine from immutable snapshots and the subsystems' own status
// calls.
package sysviews
