// Package plan compiles statements into plans, as PostgreSQL's optimizer
// does after parse analysis: the query level (FROM clause, joins and
// their methods, target list, grouping, ordering, limits, set
// operations, WITH, FOR UPDATE), index use for equality keys, partition
// pruning at plan time and the steps that prune at run time, the
// relation locks each statement takes, INSERT / UPDATE / DELETE / UPDATE
// FROM / ON CONFLICT plans, and the plan cache's choice between custom
// and generic plans (plancache.go). A plan.Stmt is an analysed
// statement; its plan is data the executor walks.
//
// Today query compilation and planning are one pass: the planner
// analyses each clause (sql/analyze) as it builds the plan, and chooses
// join methods by rule, not by cost.
//
// What it must not do: execute. Plans hold scratch the executor reuses
// between executions (routing state, index locks), but no behaviour.
//
// Concurrency: a Stmt and its plan belong to the session that made them;
// they are run by that session's goroutine only.
package plan
