package expr

import (
	"lockd/pgerr"

	"lockd/sql/types"
)

// Set-returning functions: generate_series and unnest, in FROM and at the
// top level of a select list (where several are run in lock step, as
// PostgreSQL 10+'s ProjectSet does: as many rows as the longest, the
// shorter padded with NULLs).

type SrfExpr struct {
	Name string
	Args []Expr
	T    types.Type
	Gen  func(ec *EvalCtx, args []types.Datum, emit func(types.Datum) error) error
	// While the select list is projected for one of the set's values,
	// eval returns it (a ProjectSet step).
	Cur    types.Datum
	Active bool
}

func (f *SrfExpr) Type() types.Type { return f.T }
func (f *SrfExpr) Eval(*EvalCtx, []types.Datum) (types.Datum, error) {
	if f.Active {
		return f.Cur, nil
	}
	return types.Datum{}, pgerr.NotSupported("set-returning function %s is not supported in this position", f.Name)
}

// srfsIn lists the set-returning calls inside e.
func SrfsIn(e Expr) []*SrfExpr {
	var out []*SrfExpr
	WalkExpr(e, func(x Expr) bool {
		if f, ok := x.(*SrfExpr); ok {
			out = append(out, f)
			return false
		}
		return true
	})
	return out
}

// each evaluates the arguments over row and calls emit per result value.
// A NULL argument yields no rows (the functions are strict).
func (f *SrfExpr) Each(ec *EvalCtx, row []types.Datum, emit func(types.Datum) error) error {
	vals := make([]types.Datum, len(f.Args))
	for i, a := range f.Args {
		v, err := a.Eval(ec, row)
		if err != nil {
			return err
		}
		if v.Null {
			return nil
		}
		vals[i] = v
	}
	return f.Gen(ec, vals, emit)
}
