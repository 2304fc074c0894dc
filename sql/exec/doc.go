// Package exec is lockd's executor (PostgreSQL's executor/): it walks
// plans — table scans by sequential read or index key, partitioned
// scans with run-time pruning, nested-loop and hash joins, aggregation,
// sorting and DISTINCT, set operations, CTEs, subqueries — and runs DML:
// INSERT with tuple routing, UPDATE and DELETE (also FROM / USING) with
// PostgreSQL's row waits and READ COMMITTED re-checks, row movement
// between partitions, INSERT ... ON CONFLICT with speculative insertion,
// unique checks, tuple locks for FOR UPDATE, referential actions and
// checks at the end of each statement (ri.go), COPY, and table rewrites.
//
// The Executor is a session's executor state; it embeds the
// plan.Planner (and so the expr.Backend) of the same session.
//
// What it must not do: analyse statements of its own (the referential
// actions compile theirs through the SPI hook the session installs), or
// keep state across sessions.
//
// Concurrency: an Executor belongs to its session's goroutine; the
// relations, locks and transactions it touches are guarded by their own
// packages (lockd/storage, lockd/locks, lockd/txn).
package exec
