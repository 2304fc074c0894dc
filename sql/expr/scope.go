package expr

import (
	"lockd/pgerr"

	"lockd/sql/types"
)

// outerExpr reads an expression of an enclosing level's row: depth 1 is
// the level directly enclosing the one being evaluated.
type OuterExpr struct {
	Depth int
	E     Expr
}

func (o *OuterExpr) Type() types.Type { return o.E.Type() }
func (o *OuterExpr) Eval(ec *EvalCtx, _ []types.Datum) (types.Datum, error) {
	n := len(ec.Outer) - o.Depth
	if n < 0 {
		return types.Datum{}, pgerr.New(pgerr.InternalError, "outer reference evaluated without its row")
	}
	return o.E.Eval(ec, ec.Outer[n])
}
