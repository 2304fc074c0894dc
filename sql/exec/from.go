package exec

import (
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

func (x *Executor) scanSubquery(ec *expr.EvalCtx, q *plan.SubquerySource, fn func([]types.Datum) error) error {
	return x.RunSelect(ec, q.Plan, fn)
}
