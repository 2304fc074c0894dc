package exec

import (
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

func (x *Executor) scanFunction(ec *expr.EvalCtx, f *plan.FuncSource, fn func([]types.Datum) error) error {
	return x.scanFunctionLevel(ec, f, nil, fn)
}

func (x *Executor) scanFunctionLevel(ec *expr.EvalCtx, f *plan.FuncSource, level []types.Datum, fn func([]types.Datum) error) error {
	row := make([]types.Datum, len(f.Cols))
	n := int64(0)
	put := func(d types.Datum) error {
		n++
		row[0] = d
		if f.Ordinality {
			row[1] = types.IntDatum(n)
		}
		return fn(row)
	}
	if f.Srf != nil {
		return f.Srf.Each(ec, level, put)
	}
	v, err := f.Scalar.Eval(ec, level)
	if err != nil {
		return err
	}
	return put(v)
}
