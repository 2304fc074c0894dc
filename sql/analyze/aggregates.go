package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

func (a *Analyzer) aggregate(name string, fc *pg.FuncCall) (expr.Expr, error) {
	if a.Aggs == nil {
		where := a.AggCtx
		if where == "" {
			where = "here"
		} else {
			where = "in " + where
		}
		if a.inAgg {
			return nil, expr.PosErr(pgerr.New(pgerr.GroupingError, "aggregate function calls cannot be nested"), fc.Location)
		}
		return nil, expr.PosErr(pgerr.New(pgerr.GroupingError, "aggregate functions are not allowed %s", where), fc.Location)
	}
	ref := &expr.AggRef{Name: name, Star: fc.AggStar, Distinct: fc.AggDistinct}
	saved := a.Aggs
	a.Aggs = nil // no nested aggregates
	a.inAgg = true
	defer func() { a.Aggs, a.inAgg = saved, false }()
	if fc.AggFilter != nil {
		f, err := a.Expr(fc.AggFilter)
		if err != nil {
			return nil, err
		}
		if ref.Filter, err = a.AsBool(f, "FILTER", fc.Location); err != nil {
			return nil, err
		}
	}
	if ref.Star {
		if name != "count" {
			return nil, expr.PosErr(pgerr.New(pgerr.WrongObjectType, "%s(*) specified, but %s is not an aggregate function", name, name), fc.Location)
		}
		ref.T = types.TypeInt8
	} else {
		want := 1
		if name == "string_agg" {
			want = 2
		}
		if len(fc.Args) != want {
			args := make([]expr.Expr, 0, len(fc.Args))
			for _, n := range fc.Args {
				e, err := a.Expr(n)
				if err != nil {
					return nil, err
				}
				args = append(args, e)
			}
			return nil, noFunction(name, args, fc.Location)
		}
		arg, err := a.Expr(fc.Args[0])
		if err != nil {
			return nil, err
		}
		if IsUnknown(arg) {
			switch name {
			case "sum", "avg":
				return nil, expr.PosErr(pgerr.New(pgerr.AmbiguousFunction, "function %s(unknown) is not unique", name).
					WithHint("Could not choose a best candidate function. You might need to add explicit type casts."), fc.Location)
			}
			if arg, err = a.CoerceUnknown(arg, types.TypeText); err != nil {
				return nil, err
			}
		}
		at := arg.Type()
		cat := types.CategoryOf(at)
		switch name {
		case "count":
			ref.T = types.TypeInt8
		case "sum":
			switch {
			case at.OID == types.OIDInt2 || at.OID == types.OIDInt4:
				ref.T = types.TypeInt8
			case at.OID == types.OIDInt8 || cat == types.CatNumeric:
				ref.T = types.TypeNumeric
			case cat == types.CatFloat:
				ref.T = at // sum(real) is real
			case at.OID == types.OIDInterval:
				ref.T = types.TypeInterval
			default:
				return nil, noFunction(name, []expr.Expr{arg}, fc.Location)
			}
		case "avg":
			switch {
			case cat == types.CatInt || cat == types.CatNumeric:
				ref.T = types.TypeNumeric
			case cat == types.CatFloat:
				ref.T = types.TypeFloat8
			default:
				return nil, noFunction(name, []expr.Expr{arg}, fc.Location)
			}
		case "min", "max":
			switch {
			case types.IsArray(at), at.OID == types.OIDBool: // no min or max of its own in PostgreSQL
				return nil, noFunction(name, []expr.Expr{arg}, fc.Location)
			case at.OID == types.OIDVarchar || at.OID == types.OIDName:
				ref.T = types.TypeText // max(text), through the implicit cast
			default:
				ref.T = at
			}
		case "bool_and", "bool_or", "every":
			if arg, err = a.AsBool(arg, name, fc.Location); err != nil {
				return nil, err
			}
			ref.T = types.TypeBool
		case "string_agg":
			if arg, err = a.toText(arg); err != nil {
				return nil, err
			}
			d, err := a.Expr(fc.Args[1])
			if err != nil {
				return nil, err
			}
			if ref.Arg2, err = a.toText(d); err != nil {
				return nil, err
			}
			ref.T = types.TypeText
		case "array_agg":
			t, ok := types.ArrayOf(at)
			if !ok {
				return nil, expr.PosErr(pgerr.NotSupported("array_agg over %s is not supported", at.Name), fc.Location)
			}
			ref.T = t
		}
		ref.Arg = arg
	}
	for _, sb := range fc.AggOrder {
		by := sb.GetSortBy()
		e, err := a.Expr(by.Node)
		if err != nil {
			return nil, err
		}
		if IsUnknown(e) {
			if e, err = a.CoerceUnknown(e, types.TypeText); err != nil {
				return nil, err
			}
		}
		ref.Order = append(ref.Order, expr.NewSortKey(e, by))
	}
	if outerOnly(ref) {
		// PostgreSQL makes such an aggregate one of the enclosing query
		// (agglevelsup): sum(t.x) in a subquery over t's rows sums them
		// all. lockd would aggregate per outer row instead: refuse.
		return nil, expr.PosErr(pgerr.NotSupported("aggregate functions whose arguments read only an enclosing query's columns are not supported"), fc.Location)
	}
	*saved = append(*saved, ref)
	return &expr.AggResult{Idx: len(*saved) - 1, T: ref.T}, nil
}

// outerOnly reports whether an aggregate's arguments, FILTER and ORDER BY
// read enclosing levels' columns and none of its own level's: PostgreSQL
// gives it to the nearest enclosing level it reads (check_agg_arguments).
func outerOnly(ref *expr.AggRef) bool {
	own, outer := false, false
	var look func(e expr.Expr)
	look = func(e expr.Expr) {
		expr.WalkExpr(e, func(x expr.Expr) bool {
			switch c := x.(type) {
			case *expr.ColExpr:
				own = true
			case *expr.OuterExpr:
				outer = true
			case *expr.SublinkExpr:
				for _, p := range c.Params { // what a correlated subquery reads of the levels around it
					look(p)
				}
			}
			return true
		})
	}
	look(ref.Arg)
	look(ref.Arg2)
	look(ref.Filter)
	for _, k := range ref.Order {
		look(k.E)
	}
	return outer && !own
}
