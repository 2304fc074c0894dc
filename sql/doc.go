// Package sql parses statements with PostgreSQL's own grammar
// (pg_query_go), analyses them into typed plans and executes them for one
// session.
//
// What it owns: the statement and plan cache of a session, expression
// typing with PostgreSQL's rules (unknown literals and parameters take
// their type from context; int4 / int8 / numeric / float8 promotion; text
// output and binary wire formats), the executor for SELECT over system
// views and set-returning functions, the settings statements (SET, SHOW,
// RESET, ALTER SYSTEM), the transaction state machine (implicit
// transactions, blocks, failed blocks, savepoints — see savepoint.go), the
// built-in functions, UPDATE ... FROM and DELETE ... USING (dmljoin.go),
// INSERT ... ON CONFLICT with speculative insertion (upsert.go, unique.go),
// and partitioned tables: their catalog, DDL, tuple
// routing, pruning and the per-partition locks of a statement (part*.go,
// docs/partitions.md); constraints: CHECK, UNIQUE and FOREIGN KEY
// definitions, their enforcement, and the referential-integrity triggers
// with their row and relation locks (constraint.go, conddl.go, check.go,
// fkey.go, ri.go, docs/constraints.md); sequences with serial and
// identity columns: their catalog, DDL, the non-transactional values (kept
// in the Engine, written at checkpoints) and the sequence functions
// (sequence.go, seq*.go, docs/sql-compat.md); and ALTER TABLE's column
// forms, RENAME and CREATE TABLE AS, with the row layout that lets ADD
// and DROP COLUMN leave the rows as they are, and table rewrites
// (altercol.go, altertype.go, rename.go, createas.go, rowlayout.go,
// rewrite.go, docs/altertable.md).
// Anything it cannot execute is a 0A000 error naming the construct.
//
// What it must not do: touch the network or write protocol messages
// (package server does), or keep settings of its own (package guc does).
//
// Concurrency: an Engine is shared by all sessions and safe for
// concurrent use; a Session and its Stmts belong to one connection
// goroutine. Datums are plain values; a row passed to an emit callback is
// valid only during the call.
package sql
