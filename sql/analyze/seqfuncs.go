package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// seqFunc resolves the sequence functions. The sequence argument is a
// regclass: a literal is looked up when the statement is analysed (with
// the literal's position in errors), a text value when the call runs, an
// integer or oid is taken as the OID.
func (a *Analyzer) seqFunc(name string, args []expr.Expr, fc *pg.FuncCall) (expr.Expr, bool, error) {
	loc := fc.Location
	var nargs []int
	switch name {
	case "nextval", "currval", "pg_sequence_last_value":
		nargs = []int{1}
	case "setval":
		nargs = []int{2, 3}
	case "lastval":
		nargs = []int{0}
	default:
		return nil, false, nil
	}
	if len(args) != nargs[0] && (len(nargs) == 1 || len(args) != nargs[1]) {
		return nil, true, noFunction(name, args, loc)
	}
	// the argument types must match before any is coerced (the error
	// names them as written)
	if len(args) > 0 {
		t := args[0].Type()
		if !IsUnknown(args[0]) && types.CategoryOf(t) != types.CatString && types.CategoryOf(t) != types.CatInt && !types.IsOidLike(t) {
			return nil, true, noFunction(name, args, loc)
		}
	}
	if name == "setval" {
		// bigint: integers and literals only (numeric casts to it only explicitly)
		if t := args[1].Type(); !IsUnknown(args[1]) && t.OID != types.OIDInt2 && t.OID != types.OIDInt4 && t.OID != types.OIDInt8 {
			return nil, true, noFunction(name, args, loc)
		}
		if len(args) == 3 && !IsUnknown(args[2]) && args[2].Type().OID != types.OIDBool {
			return nil, true, noFunction(name, args, loc)
		}
	}
	resolve := func(ec *expr.EvalCtx, v types.Datum) (uint32, error) { return uint32(v.I), nil }
	if len(args) > 0 {
		switch {
		case IsUnknown(args[0]):
			e, err := a.coerceArg(args[0], types.TypeRegclass, name, ExprLocation(fc.Args[0]))
			if err != nil {
				return nil, true, err
			}
			args[0] = e
		case types.CategoryOf(args[0].Type()) == types.CatString:
			resolve = func(ec *expr.EvalCtx, v types.Datum) (uint32, error) {
				d, err := types.ParseRegName(types.TypeRegclass, v.S, ec.FormatCtx())
				return uint32(d.I), err
			}
		}
	}
	if name == "setval" {
		var err error
		if args[1], err = a.coerceArg(args[1], types.TypeInt8, name, loc); err != nil {
			return nil, true, err
		}
		if len(args) == 3 {
			if args[2], err = a.coerceArg(args[2], types.TypeBool, name, loc); err != nil {
				return nil, true, err
			}
		}
	}
	result := types.TypeInt8
	var fn func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error)
	switch name {
	case "nextval":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return types.Datum{}, err
			}
			n, err := funcs.Nextval(ec.S, ec, oid)
			return types.IntDatum(n), err
		}
	case "currval":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return types.Datum{}, err
			}
			n, err := funcs.Currval(ec.S, ec, oid)
			return types.IntDatum(n), err
		}
	case "lastval":
		fn = func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			n, err := funcs.Lastval(ec.S, ec)
			return types.IntDatum(n), err
		}
	case "setval":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return types.Datum{}, err
			}
			isCalled := len(v) < 3 || v[2].I != 0
			return v[1], funcs.Setval(ec.S, ec, oid, v[1].I, isCalled)
		}
	case "pg_sequence_last_value":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return types.Datum{}, err
			}
			q := ec.S.Cat().Sequences[oid]
			if q == nil {
				return types.Datum{}, pgerr.New(pgerr.WrongObjectType, "\"%d\" is not a sequence", oid)
			}
			return funcs.SeqLastValue(ec.S, ec, q), nil
		}
	}
	return &expr.FuncExpr{Name: name, T: result, Args: args, Volatile: true, Fn: fn}, true, nil
}
