package expr

import (
	"context"

	"lockd/sql/types"
)

// evalCtx is what expressions see while running.
type EvalCtx struct {
	S         *Backend
	Exec      Executor // runs the plans of subqueries
	Ctx       context.Context
	Params    []types.Datum
	AggVals   []types.Datum   // results of the current group's aggregates
	GroupVals []types.Datum   // GROUP BY values of the current group
	OutVals   []types.Datum   // the current output row (ORDER BY an output column)
	Outer     [][]types.Datum // rows of enclosing query levels, innermost last
	subCache  map[*SublinkExpr]*subResult
	Plan      PlanKind // how PostgreSQL's plan cache would run this execution
	PruneUpTo ValueDep // partition pruning ignores values beyond this (0: none)
	// runtimePruned: a partition the plan holds was pruned on a
	// parameter value (a generic plan would lock more than a custom one)
	RuntimePruned bool
	CteCache      map[any][][]types.Datum // CTE results by definition (cte.go)
	Tick          uint32                  // rows produced, for periodic cancel checks
}

func (ec *EvalCtx) FormatCtx() *types.FormatCtx {
	if ec == nil || ec.S == nil {
		return nil
	}
	return &ec.S.Fc
}

type SortKey struct {
	E          Expr
	desc       bool
	nullsFirst bool
	cmp        func(a, b types.Datum) (int, error)
}
