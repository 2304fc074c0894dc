// Package analyze is lockd's expression analyzer, as PostgreSQL's parser
// analysis (parse_expr.c, parse_oper.c, parse_func.c, parse_coerce.c):
// it turns the parse tree's expressions (A_Expr, FuncCall, TypeCast,
// ColumnRef, CASE, sublinks, ...) into typed sql/expr trees — resolving
// column names through scopes, typing literals and parameters from their
// context, coercing operands, resolving operators and functions and
// aggregates — and it is the only package that reads expression nodes of
// the parse tree.
//
// When asked (deparse), the analyzer also records the form PostgreSQL's
// analysis gives each node (nodetree.go), which ruleutils.go prints as
// pg_get_constraintdef and pg_get_expr do.
//
// What it must not do: compile queries or plan. A sublink's subquery is
// compiled through the Subquery hook the planner installs
// (plan.NewAnalyzer); FROM clauses, target lists and query levels are
// the planner's.
//
// Concurrency: an Analyzer belongs to the goroutine analysing one
// statement.
package analyze
