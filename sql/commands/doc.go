// Package commands runs lockd's utility statements (PostgreSQL's
// commands/): CREATE TABLE (partitioned tables and partitions, serial
// and identity columns), CREATE / DROP INDEX, ALTER TABLE in all its
// forms (columns, types, constraints, partitions, RENAME), constraints
// and foreign keys with partitioned tables, CREATE / ALTER / DROP
// SEQUENCE, CREATE TABLE AS, DROP, TRUNCATE, LOCK TABLE, VACUUM and
// ANALYZE (the statistics of sql/stats, and autovacuum's analyze of a
// table) — with the locks PostgreSQL takes for each.
//
// DDL is transactional: a command records CatOps in its transaction
// (expr.Backend.AddCatOp), which the session publishes at commit and
// undoes at rollback, and table rewrites write new storage that commit
// switches to.
//
// What it must not do: handle transaction control or sessions (the
// facade does), or be imported by any layer below it.
//
// Concurrency: a Utility belongs to its session's goroutine; catalog
// changes become visible to others only through catalog.Catalog.Commit.
package commands
