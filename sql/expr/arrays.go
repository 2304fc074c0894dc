package expr

import (
	"lockd/sql/types"
)

// ecFormat is the format context of a running expression, falling back
// to the one captured at analysis.
func EcFormat(ec *EvalCtx, fallback *types.FormatCtx) *types.FormatCtx {
	if fc := ec.FormatCtx(); fc != nil {
		return fc
	}
	return fallback
}

// anyExpr is `x op ANY (array)` or `x op ALL (array)` with SQL's NULL
// rules: ANY is true if some comparison is true, else NULL if one was
// NULL, else false; ALL the dual.
type AnyExpr struct {
	Arg, Arr Expr
	Cmp      func(ec *EvalCtx, a, b types.Datum) (types.Datum, error)
	All      bool
}

func (e *AnyExpr) Type() types.Type { return types.TypeBool }
func (e *AnyExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	v, err := e.Arg.Eval(ec, row)
	if err != nil {
		return types.Datum{}, err
	}
	arr, err := e.Arr.Eval(ec, row)
	if err != nil || arr.Null {
		return types.NullDatum, err
	}
	return quantified(ec, v, arr.A, e.Cmp, e.All)
}

// quantified applies cmp between v and each element (ANY or ALL).
func quantified(ec *EvalCtx, v types.Datum, elems []types.Datum, cmp func(ec *EvalCtx, a, b types.Datum) (types.Datum, error), all bool) (types.Datum, error) {
	if len(elems) == 0 {
		return types.BoolDatum(all), nil
	}
	sawNull := false
	for _, el := range elems {
		if v.Null || el.Null {
			sawNull = true
			continue
		}
		r, err := cmp(ec, v, el)
		if err != nil {
			return types.Datum{}, err
		}
		if r.Null {
			sawNull = true
			continue
		}
		if (r.I != 0) != all {
			return types.BoolDatum(!all), nil
		}
	}
	if sawNull {
		return types.NullDatum, nil
	}
	return types.BoolDatum(all), nil
}
