package analyze

import (
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// arrayFuncs are the array functions psql's catalog queries and users
// call: array_to_string, array_length, array_upper, array_lower,
// cardinality, array_position.
func (a *Analyzer) arrayFunc(name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	switch name {
	case "array_to_string", "array_length", "array_upper", "array_lower", "cardinality", "array_position", "array_positions":
	default:
		return nil, false, nil
	}
	if len(args) == 0 || !types.IsArray(args[0].Type()) {
		if len(args) > 0 && IsUnknown(args[0]) {
			return nil, true, expr.PosErr(pgerr.New(pgerr.UndefinedFunction, "could not determine polymorphic type because input has type unknown"), loc)
		}
		return nil, true, noFunction(name, args, loc)
	}
	at := args[0].Type()
	elem, _ := types.ElemOf(at)
	var err error
	switch name {
	case "array_to_string":
		if len(args) < 2 || len(args) > 3 {
			return nil, true, noFunction(name, args, loc)
		}
		for i := 1; i < len(args); i++ {
			if args[i], err = a.coerceArg(args[i], types.TypeText, name, loc); err != nil {
				return nil, true, err
			}
		}
		fc := a.Fold.FormatCtx()
		return &expr.FuncExpr{Name: name, T: types.TypeText, Args: args, NonStrict: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if v[0].Null || v[1].Null {
				return types.NullDatum, nil
			}
			var b []byte
			first := true
			for _, e := range v[0].A {
				if e.Null {
					if len(v) < 3 || v[2].Null {
						continue
					}
					if !first {
						b = append(b, v[1].S...)
					}
					b = append(b, v[2].S...)
					first = false
					continue
				}
				if !first {
					b = append(b, v[1].S...)
				}
				b = types.AppendText(b, elem, e, expr.EcFormat(ec, fc))
				first = false
			}
			return types.TextDatum(string(b)), nil
		}}, true, nil
	case "array_length", "array_upper", "array_lower":
		if len(args) != 2 {
			return nil, true, noFunction(name, args, loc)
		}
		if args[1], err = a.coerceArg(args[1], types.TypeInt4, name, loc); err != nil {
			return nil, true, err
		}
		return &expr.FuncExpr{Name: name, T: types.TypeInt4, Args: args, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if v[1].I != 1 || len(v[0].A) == 0 {
				return types.NullDatum, nil
			}
			if name == "array_lower" {
				return types.IntDatum(1), nil
			}
			return types.IntDatum(int64(len(v[0].A))), nil
		}}, true, nil
	case "cardinality":
		if len(args) != 1 {
			return nil, true, noFunction(name, args, loc)
		}
		return &expr.FuncExpr{Name: name, T: types.TypeInt4, Args: args, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			return types.IntDatum(int64(len(v[0].A))), nil
		}}, true, nil
	default: // array_position(array, elem [, start]), array_positions(array, elem)
		if len(args) != 2 && !(name == "array_position" && len(args) == 3) {
			return nil, true, noFunction(name, args, loc)
		}
		if args[1], err = a.coerceArg(args[1], elem, name, loc); err != nil {
			return nil, true, err
		}
		if len(args) == 3 {
			if args[2], err = a.coerceArg(args[2], types.TypeInt4, name, loc); err != nil {
				return nil, true, err
			}
		}
		cmp := types.Comparator(elem)
		all := name == "array_positions"
		t := types.TypeInt4
		if all {
			t = types.TypeInt4Array
		}
		return &expr.FuncExpr{Name: name, T: t, Args: args, NonStrict: true, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if v[0].Null {
				return types.NullDatum, nil
			}
			start := 0
			if len(v) == 3 {
				if v[2].Null {
					return types.Datum{}, pgerr.New(pgerr.NullValueNotAllowed, "initial position must not be null")
				}
				start = int(v[2].I) - 1
			}
			found := types.Datum{A: []types.Datum{}}
			for i, e := range v[0].A {
				if i < start || e.Null != v[1].Null {
					continue
				}
				hit := e.Null
				if !e.Null {
					c, err := cmp(e, v[1])
					if err != nil {
						return types.Datum{}, err
					}
					hit = c == 0
				}
				if !hit {
					continue
				}
				if !all {
					return types.IntDatum(int64(i + 1)), nil
				}
				found.A = append(found.A, types.IntDatum(int64(i+1)))
			}
			if all {
				return found, nil
			}
			return types.NullDatum, nil
		}}, true, nil
	}
}
