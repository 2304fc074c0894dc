package analyze

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// catalogFunc resolves the catalog functions.
func (a *Analyzer) catalogFunc(name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	f, ok := funcs.CatalogFns[name]
	if !ok {
		return nil, false, nil
	}
	if len(args) < f.MinArgs || len(args) > f.MaxArgs {
		return nil, true, noFunction(name, args, loc)
	}
	for i := range args {
		t := f.Args[len(f.Args)-1]
		if i < len(f.Args) {
			t = f.Args[i]
		}
		if t.OID == 0 {
			if IsUnknown(args[i]) {
				var err error
				if args[i], err = a.coerceArg(args[i], types.TypeText, name, loc); err != nil {
					return nil, true, err
				}
			}
			continue
		}
		if types.IsOIDLike(t) && types.IsOIDLike(args[i].Type()) {
			continue // reg* and oid are binary compatible
		}
		if t.OID == types.OIDNodeTree && types.CategoryOf(args[i].Type()) == types.CatString {
			continue
		}
		var err error
		if args[i], err = a.coerceArg(args[i], t, name, loc); err != nil {
			return nil, true, err
		}
	}
	return &expr.FuncExpr{Name: name, T: f.Result, Args: args, NonStrict: f.NonStrict, Volatile: true, Fn: f.Fn}, true, nil
}

// funcCall resolves and compiles a function call.
func (a *Analyzer) FuncCall(fc *pg.FuncCall) (expr.Expr, error) {
	schema, name := QualifiedName(fc.Funcname)
	name = strings.ToLower(name)
	if schema != "" && schema != "pg_catalog" {
		return nil, expr.PosErr(pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", schema), fc.Location)
	}
	if fc.Over != nil {
		return nil, expr.PosErr(pgerr.NotSupported("window functions are not supported"), fc.Location)
	}
	if expr.IsAggregate(name) {
		return a.aggregate(name, fc)
	}
	if funcs.IsSRF(name) {
		return a.srfCall(name, fc)
	}
	var args []expr.Expr
	for _, n := range fc.Args {
		e, err := a.Expr(n)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return nil, expr.PosErr(pgerr.New(pgerr.WrongObjectType, "%s is not an aggregate function", name), fc.Location)
	}
	switch name {
	case "concat", "concat_ws", "format":
		return a.textOfAny(name, args, fc.Location)
	}
	if name == "octet_length" && len(args) == 1 && args[0].Type().OID == types.OIDBpchar {
		// char(n) keeps its padding: octet_length counts it
		t := args[0].Type()
		return &expr.FuncExpr{Name: name, T: types.TypeInt4, Args: args, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			return types.IntDatum(int64(len(types.AppendText(nil, t, v[0], nil)))), nil
		}}, nil
	}
	if name == "pg_typeof" && len(args) == 1 {
		oid := args[0].Type().OID
		if oid == 0 {
			oid = types.OIDUnknown
		}
		return &expr.ConstExpr{T: types.TypeRegtype, D: types.IntDatum(int64(oid))}, nil
	}
	if fc.FuncVariadic {
		return nil, expr.PosErr(pgerr.NotSupported("VARIADIC arguments are not supported"), fc.Location)
	}
	cands, ok := funcs.Builtins[name]
	if !ok {
		if e, ok, err := lockFunc(a, name, args, fc.Location); ok || err != nil {
			return e, err
		}
		if e, ok, err := a.seqFunc(name, args, fc); ok || err != nil { // specialfuncs.go
			return e, err
		}
		if e, ok, err := a.arrayFunc(name, args, fc.Location); ok || err != nil {
			return e, err
		}
		if e, ok, err := a.catalogFunc(name, args, fc.Location); ok || err != nil {
			return e, err
		}
		if e, ok, err := relSizeFunc(a, name, args, fc.Location); ok || err != nil {
			return e, err
		}
		if e, ok, err := a.databaseSizeFunc(name, args, fc.Location); ok || err != nil {
			return e, err
		}
		// A type name called with one argument is a cast, as PostgreSQL's
		// function-style casts: pg_lsn('0/0'), int4('7').
		if t, ok := types.LookupType(name); ok && len(args) == 1 && !strings.HasSuffix(name, "[]") {
			if IsUnknown(args[0]) {
				return a.CoerceUnknown(args[0], t)
			}
			e, err := a.CastTo(args[0], t, true)
			if err != nil {
				return nil, noFunction(name, args, fc.Location)
			}
			return e, nil
		}
		return nil, noFunction(name, args, fc.Location)
	}
	b, err := pickBuiltin(cands, args)
	if err != nil {
		return nil, noFunction(name, args, fc.Location)
	}
	for i := range args {
		t := b.ArgType(i)
		if t.OID == 0 {
			continue
		}
		var cerr error
		if IsUnknown(args[i]) {
			args[i], cerr = a.CoerceUnknown(args[i], t)
		} else {
			args[i], cerr = a.CastTo(args[i], t, false)
		}
		if cerr != nil {
			return nil, expr.PosErr(pgerr.From(cerr), fc.Location)
		}
	}
	return &expr.FuncExpr{Name: name, T: b.Result(args), Args: args, NonStrict: b.NonStrict, Volatile: b.Volatile, Fn: b.Fn}, nil
}

// pickBuiltin chooses the first candidate whose arguments match exactly
// (an unknown literal matching a string parameter, as unknown resolves to
// text), else the first that accepts them by implicit casts.
func pickBuiltin(cands []funcs.Builtin, args []expr.Expr) (*funcs.Builtin, error) {
	var fallback *funcs.Builtin
	for i := range cands {
		b := &cands[i]
		if !b.Accepts(len(args)) {
			continue
		}
		exact, ok := true, true
		for j, e := range args {
			t := b.ArgType(j)
			if t.OID == 0 {
				continue
			}
			if e.Type().OID != t.OID && !(IsUnknown(e) && types.CategoryOf(t) == types.CatString) {
				exact = false
			}
			if !funcs.Implicitly(e.Type(), t) {
				ok = false
			}
		}
		if exact && ok {
			return b, nil
		}
		if ok && fallback == nil {
			fallback = b
		}
	}
	if fallback != nil {
		return fallback, nil
	}
	return nil, funcs.ErrNoFunction
}

func noFunction(name string, args []expr.Expr, loc int32) *pgerr.Error {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Type().Name
	}
	return expr.PosErr(pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(names, ", ")).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts."), loc)
}

func (a *Analyzer) sqlValueFunction(f *pg.SQLValueFunction) (expr.Expr, error) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return &expr.FuncExpr{Name: "current_timestamp", T: types.TypeTimestamptz, Fn: funcs.FnNow}, nil
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return &expr.CastExpr{Arg: &expr.FuncExpr{Name: "now", T: types.TypeTimestamptz, Fn: funcs.FnNow}, T: types.TypeTimestamp}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return &expr.CastExpr{Arg: &expr.FuncExpr{Name: "now", T: types.TypeTimestamptz, Fn: funcs.FnNow}, T: types.TypeDate}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE,
		pg.SQLValueFunctionOp_SVFOP_USER, pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return &expr.FuncExpr{Name: "current_user", T: types.TypeName, Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.TextDatum(ec.B.User), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return &expr.FuncExpr{Name: "current_catalog", T: types.TypeName, Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.TextDatum(ec.B.Database), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return &expr.ConstExpr{T: types.TypeName, D: types.TextDatum("public")}, nil
	}
	return nil, expr.PosErr(pgerr.NotSupported("%s is not supported", funcs.SQLValueFunctionName(f.Op)), f.Location)
}

// textOfAny compiles concat, concat_ws and format, which take arguments
// of any type and use their text output (true prints as t).
func (a *Analyzer) textOfAny(name string, args []expr.Expr, loc int32) (expr.Expr, error) {
	min := map[string]int{"concat": 1, "concat_ws": 2, "format": 1}[name]
	if len(args) < min {
		return nil, noFunction(name, args, loc)
	}
	for i := range args {
		if IsUnknown(args[i]) {
			var err error
			if args[i], err = a.CoerceUnknown(args[i], types.TypeText); err != nil {
				return nil, err
			}
		}
	}
	argTypes := make([]types.Type, len(args))
	for i, e := range args {
		argTypes[i] = e.Type()
	}
	text := func(ec *expr.EvalCtx, i int, d types.Datum) string {
		return string(types.AppendText(nil, argTypes[i], d, ec.FormatCtx()))
	}
	var fn func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error)
	switch name {
	case "concat":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			var b strings.Builder
			for i, d := range v {
				if !d.Null {
					b.WriteString(text(ec, i, d))
				}
			}
			return types.TextDatum(b.String()), nil
		}
	case "concat_ws":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if v[0].Null {
				return types.NullDatum, nil
			}
			var parts []string
			for i, d := range v[1:] {
				if !d.Null {
					parts = append(parts, text(ec, i+1, d))
				}
			}
			return types.TextDatum(strings.Join(parts, text(ec, 0, v[0]))), nil
		}
	default:
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) { return funcs.FormatFn(ec, v, text) }
	}
	return &expr.FuncExpr{Name: name, T: types.TypeText, Args: args, NonStrict: true, Fn: fn}, nil
}

// coerceArg converts a function argument to its declared type.
func (a *Analyzer) coerceArg(e expr.Expr, t types.Type, fname string, loc int32) (expr.Expr, error) {
	var err error
	if IsUnknown(e) {
		e, err = a.CoerceUnknown(e, t)
	} else {
		e, err = a.CastTo(e, t, false)
	}
	if err != nil {
		return nil, expr.PosErr(pgerr.From(err), loc)
	}
	return e, nil
}

// FunctionNames returns the names of every function lockd can call, in no
// particular order: the built-in table's, the catalog functions, and those
// the analyzer resolves itself (aggregates, set-returning, sequence,
// advisory-lock, array and size functions). pg_proc lists PostgreSQL's
// entries for these names.
func FunctionNames() []string {
	var out []string
	for n := range funcs.Builtins {
		out = append(out, n)
	}
	for n := range funcs.CatalogFns {
		out = append(out, n)
	}
	for n := range funcs.RelSizeFuncs {
		out = append(out, n)
	}
	for n := range funcs.AdvisoryFns {
		out = append(out, n)
	}
	return append(out,
		"count", "sum", "min", "max", "avg", "bool_and", "bool_or", "every", "string_agg", "array_agg",
		"generate_series", "unnest", "pg_partition_ancestors", "pg_ls_tmpdir", "pg_ls_waldir",
		"nextval", "currval", "setval", "lastval", "pg_sequence_last_value",
		"pg_advisory_unlock_all", "pg_blocking_pids",
		"array_to_string", "array_length", "array_upper", "array_lower", "cardinality", "array_position", "array_positions",
		"concat", "concat_ws", "format", "pg_typeof", "octet_length", "pg_database_size")
}
