package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// arrayConcat compiles || with an array operand: array || array,
// array || element, element || array.
func (a *Analyzer) arrayConcat(l, r expr.Expr, loc int32) (expr.Expr, bool, error) {
	la, ra := types.IsArray(l.Type()), types.IsArray(r.Type())
	if !la && !ra {
		return nil, false, nil
	}
	at := l.Type()
	if !la {
		at = r.Type()
	}
	elem, _ := types.ElemOf(at)
	var err error
	conv := func(e expr.Expr, asArray bool) (expr.Expr, error) {
		want := elem
		if asArray {
			want = at
		}
		if IsUnknown(e) {
			return a.CoerceUnknown(e, want)
		}
		return a.CastTo(e, want, false)
	}
	// an unknown literal next to an array is an array literal
	la, ra = la || IsUnknown(l), ra || IsUnknown(r)
	if l, err = conv(l, la); err != nil {
		return nil, true, expr.PosErr(pgerr.From(err), loc)
	}
	if r, err = conv(r, ra); err != nil {
		return nil, true, expr.PosErr(pgerr.From(err), loc)
	}
	return &expr.FuncExpr{Name: "array_cat", T: at, Args: []expr.Expr{l, r}, NonStrict: true, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		var out []types.Datum
		for i, d := range v {
			isArr := (i == 0 && la) || (i == 1 && ra)
			switch {
			case isArr && d.Null:
			case isArr:
				out = append(out, d.A...)
			default:
				out = append(out, d)
			}
		}
		if out == nil {
			if la && ra && v[0].Null && v[1].Null {
				return types.NullDatum, nil
			}
			out = []types.Datum{}
		}
		return types.Datum{A: out}, nil
	}}, true, nil
}

// quantifiedArray compiles `x op ANY (array)` and `x op ALL (array)`.
func (a *Analyzer) quantifiedArray(op string, x *pg.A_Expr) (expr.Expr, error) {
	l, r, err := a.operands(x)
	if err != nil {
		return nil, err
	}
	if IsUnknown(r) {
		lt := l.Type()
		if IsUnknown(l) {
			lt = types.TypeText
		}
		at, ok := types.ArrayOf(lt)
		if !ok {
			return nil, expr.PosErr(pgerr.NotSupported("arrays of type %s are not supported", lt.Name), x.Location)
		}
		if r, err = a.CoerceUnknown(r, at); err != nil {
			return nil, expr.PosErr(pgerr.From(err), x.Location)
		}
	}
	elem, ok := types.ElemOf(r.Type())
	if !ok {
		return nil, expr.PosErr(pgerr.New(pgerr.WrongObjectType, "op ANY/ALL (array) requires array on right side"), x.Location)
	}
	if IsUnknown(l) {
		if l, err = a.CoerceUnknown(l, elem); err != nil {
			return nil, err
		}
	}
	cmp, _, err := a.comparison(op, l.Type(), elem, x.Location)
	if err != nil {
		return nil, err
	}
	return &expr.AnyExpr{Arg: l, Arr: r, Op: op, Cmp: cmp, All: x.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL}, nil
}

// indirection compiles array subscripts: arr[i] (1-based; out of range or
// NULL gives NULL).
func (a *Analyzer) indirection(ind *pg.A_Indirection) (expr.Expr, error) {
	e, err := a.Expr(ind.Arg)
	if err != nil {
		return nil, err
	}
	for _, n := range ind.Indirection {
		idx := n.GetAIndices()
		if idx == nil {
			return nil, pgerr.NotSupported("field selection is not supported")
		}
		if idx.IsSlice {
			return nil, pgerr.NotSupported("array slices are not supported")
		}
		elem, ok := types.ElemOf(e.Type())
		if !ok {
			return nil, pgerr.New(pgerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", e.Type().Name)
		}
		i, err := a.Expr(idx.Uidx)
		if err != nil {
			return nil, err
		}
		if i, err = a.coerceArg(i, types.TypeInt4, "subscript", -1); err != nil {
			return nil, err
		}
		e = &expr.FuncExpr{Name: "subscript", T: elem, Args: []expr.Expr{e, i}, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			k := v[1].I
			if k < 1 || k > int64(len(v[0].A)) {
				return types.NullDatum, nil
			}
			return v[0].A[k-1], nil
		}}
	}
	return e, nil
}
