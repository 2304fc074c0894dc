// Package expr holds typed expression trees and their evaluation
// (PostgreSQL's primnodes and execExpr*): constants, parameters, column
// and outer references, operators, function calls, CASE, casts,
// sublinks, aggregate references; walking and rewriting trees; the
// evaluation context (EvalCtx) with its parameters, outer rows and
// caches.
//
// It also holds the Backend: what every layer below the session uses of
// the backend running a statement — identity, settings, the transaction
// and lock-manager Proc, the view of the catalog (the published snapshot
// or the transaction's own after its DDL), lock acquisition with the
// session's timeouts, notices. Layers above keep their own per-session
// state in types that embed the one below (plan.Planner embeds Backend,
// exec.Executor embeds Planner, commands.Utility embeds Executor).
//
// What it must not do: analyse parse trees, plan or execute plans. A
// sublink holds its subquery's plan as a Subplan and runs it through the
// EvalCtx's Executor.
//
// Concurrency: trees are immutable once built and may be evaluated by
// their session's goroutine only (they share scratch space with the
// EvalCtx); a Backend belongs to its session's goroutine.
package expr
