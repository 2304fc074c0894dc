// Package funcs implements lockd's built-in functions: tables of the
// string, math and system functions with their signatures, the catalog
// functions psql and pgbench call (format_type, pg_get_indexdef, ...),
// set-returning functions' series, and the sequence functions (nextval,
// currval, setval, lastval) with their per-session cache.
//
// Resolving a call (overloads, coercions, the functions whose analysis
// depends on their arguments) is the analyzer's (sql/analyze); this
// package holds what runs.
//
// What it must not do: analyse or plan; it reaches the session only
// through the expr.Backend an EvalCtx carries.
//
// Concurrency: the tables are read-only after package initialisation;
// the functions run on their session's goroutine.
package funcs
