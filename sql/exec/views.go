package exec

import (
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

func (x *Executor) scanView(ec *expr.EvalCtx, v *plan.ViewSource, fn func([]types.Datum) error) error {
	return v.V.Rows(ec, fn)
}
