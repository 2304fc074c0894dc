package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// srfCall compiles generate_series or unnest.
func (a *Analyzer) srfCall(name string, fc *pg.FuncCall) (expr.Expr, error) {
	if !a.AllowSRF {
		where := a.AggCtx
		if where == "" {
			where = "this position"
		}
		return nil, expr.PosErr(pgerr.New(pgerr.FeatureNotSupported, "set-returning functions are not allowed in %s", where), fc.Location)
	}
	a.AllowSRF = false
	defer func() { a.AllowSRF = true }()
	var args []expr.Expr
	for _, n := range fc.Args {
		e, err := a.Expr(n)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if name == "pg_partition_ancestors" {
		// the relation itself and its ancestors, nearest first; nothing for
		// a table that is neither partitioned nor a partition
		if len(args) != 1 {
			return nil, noFunction(name, args, fc.Location)
		}
		var err error
		if !types.IsOidLike(args[0].Type()) {
			if args[0], err = a.coerceArg(args[0], types.TypeRegclass, name, fc.Location); err != nil {
				return nil, err
			}
		}
		return &expr.SrfExpr{Name: name, Args: args, T: types.TypeRegclass, Gen: func(ec *expr.EvalCtx, v []types.Datum, emit func(types.Datum) error) error {
			cat := ec.S.Cat()
			t := cat.Tables[uint32(v[0].I)]
			if t == nil || !t.Partitioned() && t.Parent == 0 {
				return nil
			}
			for ; t != nil; t = cat.Tables[t.Parent] {
				if err := emit(types.OidDatum(t.OID)); err != nil {
					return err
				}
				if t.Parent == 0 {
					break
				}
			}
			return nil
		}}, nil
	}
	if name == "unnest" {
		if len(args) != 1 {
			return nil, noFunction(name, args, fc.Location)
		}
		if IsUnknown(args[0]) {
			return nil, expr.PosErr(pgerr.New(pgerr.UndefinedFunction, "function unnest(unknown) is not unique").
				WithHint("Could not choose a best candidate function. You might need to add explicit type casts."), fc.Location)
		}
		elem, ok := types.ElemOf(args[0].Type())
		if !ok {
			return nil, noFunction(name, args, fc.Location)
		}
		return &expr.SrfExpr{Name: name, Args: args, T: elem, Gen: func(_ *expr.EvalCtx, v []types.Datum, emit func(types.Datum) error) error {
			for _, d := range v[0].A {
				if err := emit(d); err != nil {
					return err
				}
			}
			return nil
		}}, nil
	}
	if len(args) < 2 || len(args) > 3 {
		return nil, noFunction(name, args, fc.Location)
	}
	// timestamps with an interval step
	if types.CategoryOf(args[0].Type()) == types.CatDatetime || types.CategoryOf(args[1].Type()) == types.CatDatetime {
		if len(args) != 3 {
			return nil, noFunction(name, args, fc.Location)
		}
		t := types.TypeTimestamptz
		if args[0].Type().OID == types.OIDTimestamp || args[1].Type().OID == types.OIDTimestamp {
			t = types.TypeTimestamp
		}
		var err error
		for i := 0; i < 2; i++ {
			if args[i], err = a.coerceArg(args[i], t, name, fc.Location); err != nil {
				return nil, err
			}
		}
		if args[2], err = a.coerceArg(args[2], types.TypeInterval, name, fc.Location); err != nil {
			return nil, err
		}
		return &expr.SrfExpr{Name: name, Args: args, T: t, Gen: func(ec *expr.EvalCtx, v []types.Datum, emit func(types.Datum) error) error {
			return funcs.IntSeries(ec, v[0].I, v[1].I, v[2].I, emit)
		}}, nil
	}
	t := types.TypeInt4
	for _, e := range args {
		switch {
		case IsUnknown(e):
		case e.Type().OID == types.OIDInt8:
			t = types.TypeInt8
		case types.CategoryOf(e.Type()) == types.CatNumeric:
			if t.OID != types.OIDNumeric {
				t = types.TypeNumeric
			}
		case types.CategoryOf(e.Type()) != types.CatInt:
			return nil, noFunction(name, args, fc.Location)
		}
	}
	for i := range args {
		var err error
		if args[i], err = a.coerceArg(args[i], t, name, fc.Location); err != nil {
			return nil, err
		}
	}
	if t.OID == types.OIDNumeric {
		return &expr.SrfExpr{Name: name, Args: args, T: t, Gen: funcs.NumericSeries}, nil
	}
	return &expr.SrfExpr{Name: name, Args: args, T: t, Gen: func(ec *expr.EvalCtx, v []types.Datum, emit func(types.Datum) error) error {
		step := int64(1)
		if len(v) == 3 {
			step = v[2].I
		}
		return funcs.IntSeries(ec, v[0].I, v[1].I, step, emit)
	}}, nil
}
