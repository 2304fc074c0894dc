// Package sql is the SQL layer's facade: the Engine shared by every
// session, and the Session of one backend, through which the server runs
// statements.
//
// The path of a query through the packages below, for
// "SELECT abalance FROM pgbench_accounts WHERE aid = $1" sent with the
// extended protocol:
//
//  1. Session.Prepare (parse.go) parses the text with PostgreSQL's own
//     grammar (pg_query_go) and dispatches the statement (dispatch.go).
//  2. plan.CompileSelect builds the query level: sql/analyze resolves
//     names against the catalog snapshot (sql/catalog) and types the
//     expressions into sql/expr trees; sql/plan builds the FROM tree,
//     chooses the primary key lookup for aid = $1 and lists the relation
//     locks the plan takes. The result is a plan.Stmt, cached by the
//     session (prepared statements, the simple protocol's shape cache).
//  3. Session.Execute (execute.go) starts an implicit transaction
//     (transaction.go), takes the statement's relation locks through
//     lockd/locks as PostgreSQL's plan cache would (sql/plan/plancache.go), takes
//     the snapshot, and hands the plan to sql/exec.
//  4. exec.Executor.RunPlan walks the plan: an index lookup in
//     lockd/storage, MVCC visibility from lockd/txn, expression
//     evaluation (sql/expr), rows to the server's emit callback.
//  5. Sync commits: the transaction ends and its locks are released.
//
// DDL takes the same path to sql/commands, whose changes become visible
// to the session at once and to others at commit (catalog.Catalog).
//
// What the facade owns: the session state machine (implicit
// transactions, blocks, failed blocks, savepoints), prepared statements
// and the statement caches, portals (cursors and the extended protocol's,
// portal.go: a query's executor suspended between fetches, as a
// coroutine on the session's goroutine), the settings statements (SET, SHOW, RESET,
// ALTER SYSTEM), the views of other sessions (pg_stat_activity,
// pg_prepared_statements) and the statement counters /metrics reads.
//
// What it must not do: touch the network or write protocol messages
// (package server does), or keep settings of its own (package guc does);
// the layers below it never import it (internal/lint).
//
// Concurrency: an Engine is shared by all sessions and safe for
// concurrent use; a Session and its Stmts belong to one connection
// goroutine. A row passed to an emit callback is valid only during the
// call.
package sql
