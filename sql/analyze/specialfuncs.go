package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
	"lockd/storage"
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
				b = types.AppendText(b, elem, e, expr.FormatOf(ec, fc))
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

// lockFunc resolves the lock-related SQL functions: the advisory-lock
// family (bigint and (int, int) keys) and pg_blocking_pids.
func lockFunc(a *Analyzer, name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	switch name {
	case "pg_advisory_unlock_all":
		if len(args) != 0 {
			return nil, true, noFunction(name, args, loc)
		}
		return &expr.FuncExpr{Name: name, T: types.TypeVoid, Volatile: true, Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			ec.B.Locks.ReleaseSessionLocks(ec.B.Proc, true)
			return types.Datum{}, nil
		}}, true, nil
	case "pg_blocking_pids":
		if len(args) != 1 {
			return nil, true, noFunction(name, args, loc)
		}
		arg, err := a.coerceArg(args[0], types.TypeInt4, name, loc)
		if err != nil {
			return nil, true, err
		}
		return &expr.FuncExpr{Name: name, T: types.TypeInt4Array, Args: []expr.Expr{arg}, Volatile: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			pids := ec.B.Locks.BlockingPIDs(int32(v[0].I))
			out := types.Datum{A: make([]types.Datum, len(pids))}
			for i, p := range pids {
				out.A[i] = types.IntDatum(int64(p))
			}
			return out, nil
		}}, true, nil
	}
	fn, ok := funcs.AdvisoryFns[name]
	if !ok {
		return nil, false, nil
	}
	var keyTypes []types.Type
	switch len(args) {
	case 1:
		keyTypes = []types.Type{types.TypeInt8}
	case 2:
		keyTypes = []types.Type{types.TypeInt4, types.TypeInt4}
	default:
		return nil, true, noFunction(name, args, loc)
	}
	for i := range args {
		if !funcs.Implicitly(args[i].Type(), keyTypes[i]) {
			return nil, true, noFunction(name, args, loc)
		}
		var err error
		if args[i], err = a.coerceArg(args[i], keyTypes[i], name, loc); err != nil {
			return nil, true, err
		}
	}
	mode := locks.ExclusiveLock
	if fn.Shared {
		mode = locks.ShareLock
	}
	result := types.TypeVoid
	if fn.Try || fn.Unlock {
		result = types.TypeBool
	}
	tagOf := func(v []types.Datum) locks.LockTag {
		if len(v) == 1 {
			return locks.AdvisoryTag64(catalog.DatabaseOID, v[0].I)
		}
		return locks.AdvisoryTag32(catalog.DatabaseOID, int32(v[0].I), int32(v[1].I))
	}
	return &expr.FuncExpr{Name: name, T: result, Args: args, Volatile: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		s := ec.B
		tag := tagOf(v)
		if fn.Unlock {
			if !s.Locks.Unlock(s.Proc, tag, mode, true) {
				s.Notice(pgerr.SeverityWarning, pgerr.Warning, "you don't own a lock of type "+mode.String())
				return types.BoolDatum(false), nil
			}
			return types.BoolDatum(true), nil
		}
		got, err := s.Acquire(ec, tag, mode, fn.Session, fn.Try)
		if err != nil {
			return types.Datum{}, err
		}
		if fn.Try {
			return types.BoolDatum(got), nil
		}
		return types.Datum{}, nil
	}}, true, nil
}

func relSizeFunc(a *Analyzer, name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	if !funcs.RelSizeFuncs[name] {
		return nil, false, nil
	}
	if len(args) != 1 && !(name == "pg_relation_size" && len(args) == 2) {
		return nil, true, noFunction(name, args, loc)
	}
	arg := args[0]
	var err error
	if IsUnknown(arg) {
		if arg, err = a.CoerceUnknown(arg, types.TypeText); err != nil {
			return nil, true, err
		}
	}
	byOID := types.CategoryOf(arg.Type()) == types.CatInt
	if !byOID && types.CategoryOf(arg.Type()) != types.CatString {
		return nil, true, noFunction(name, args, loc)
	}
	return &expr.FuncExpr{Name: name, T: types.TypeInt8, Args: []expr.Expr{arg}, Volatile: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		s := ec.B
		cat := s.Cat()
		var oid uint32
		if byOID {
			oid = uint32(v[0].I)
		} else {
			o, ok := cat.ByName[v[0].S]
			if !ok {
				return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v[0].S)
			}
			oid = o
		}
		size := func(t *catalog.TableDef) int64 {
			n, _ := s.Store.RelationPages(storage.RelID(t.RelFile))
			return int64(n) * funcs.BlockSize
		}
		idxSize := func(t *catalog.TableDef) int64 {
			var total int64
			for _, ix := range cat.TableIndexes(t) {
				pages, _, _ := s.IndexSize(ix)
				total += int64(pages) * funcs.BlockSize
			}
			return total
		}
		if t := cat.Tables[oid]; t != nil {
			switch name {
			case "pg_indexes_size":
				return types.IntDatum(idxSize(t)), nil
			case "pg_total_relation_size":
				return types.IntDatum(size(t) + idxSize(t)), nil
			}
			return types.IntDatum(size(t)), nil
		}
		if cat.Sequences[oid] != nil { // one page, as PostgreSQL's sequence relation
			if name == "pg_indexes_size" {
				return types.IntDatum(0), nil
			}
			return types.IntDatum(funcs.BlockSize), nil
		}
		if ix := cat.Indexes[oid]; ix != nil {
			if name == "pg_indexes_size" {
				return types.IntDatum(0), nil
			}
			pages, _, _ := s.IndexSize(ix)
			return types.IntDatum(int64(pages) * funcs.BlockSize), nil
		}
		if byOID {
			return types.NullDatum, nil // PostgreSQL returns NULL for an unknown OID
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v[0].S)
	}}, true, nil
}

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
		if !IsUnknown(args[0]) && types.CategoryOf(t) != types.CatString && types.CategoryOf(t) != types.CatInt && !types.IsOIDLike(t) {
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
			n, err := funcs.Nextval(ec.B, ec, oid)
			return types.IntDatum(n), err
		}
	case "currval":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return types.Datum{}, err
			}
			n, err := funcs.Currval(ec.B, ec, oid)
			return types.IntDatum(n), err
		}
	case "lastval":
		fn = func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			n, err := funcs.Lastval(ec.B, ec)
			return types.IntDatum(n), err
		}
	case "setval":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return types.Datum{}, err
			}
			isCalled := len(v) < 3 || v[2].I != 0
			return v[1], funcs.Setval(ec.B, ec, oid, v[1].I, isCalled)
		}
	case "pg_sequence_last_value":
		fn = func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return types.Datum{}, err
			}
			q := ec.B.Cat().Sequences[oid]
			if q == nil {
				return types.Datum{}, pgerr.New(pgerr.WrongObjectType, "\"%d\" is not a sequence", oid)
			}
			return funcs.SeqLastValue(ec.B, ec, q), nil
		}
	}
	return &expr.FuncExpr{Name: name, T: result, Args: args, Volatile: true, Fn: fn}, true, nil
}

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
	if ls, ok := funcs.LsDirs[name]; ok {
		if len(args) > ls.MaxArgs {
			return nil, noFunction(name, args, fc.Location)
		}
		for i := range args {
			var err error
			if args[i], err = a.coerceArg(args[i], types.TypeOid, name, fc.Location); err != nil {
				return nil, err
			}
		}
		return &expr.SrfExpr{Name: name, Args: args, T: expr.TypeRecord, Cols: funcs.LsDirCols, Gen: ls.Gen(name)}, nil
	}
	if name == "pg_partition_ancestors" {
		// the relation itself and its ancestors, nearest first; nothing for
		// a table that is neither partitioned nor a partition
		if len(args) != 1 {
			return nil, noFunction(name, args, fc.Location)
		}
		var err error
		if !types.IsOIDLike(args[0].Type()) {
			if args[0], err = a.coerceArg(args[0], types.TypeRegclass, name, fc.Location); err != nil {
				return nil, err
			}
		}
		return &expr.SrfExpr{Name: name, Args: args, T: types.TypeRegclass, Gen: func(ec *expr.EvalCtx, v []types.Datum, emit func(types.Datum) error) error {
			cat := ec.B.Cat()
			t := cat.Tables[uint32(v[0].I)]
			if t == nil || !t.Partitioned() && t.Parent == 0 {
				return nil
			}
			for ; t != nil; t = cat.Tables[t.Parent] {
				if err := emit(types.OIDDatum(t.OID)); err != nil {
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

// databaseSizeFunc resolves pg_database_size(name) and
// pg_database_size(oid): the bytes of the database's tables, indexes and
// sequences (lockd's system catalogs are views and take no space, and
// lockd has one database). An unknown database is 3D000, as in
// PostgreSQL; an unknown OID gives NULL.
func (a *Analyzer) databaseSizeFunc(name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	if name != "pg_database_size" {
		return nil, false, nil
	}
	if len(args) != 1 {
		return nil, true, noFunction(name, args, loc)
	}
	arg := args[0]
	var err error
	if IsUnknown(arg) {
		if arg, err = a.CoerceUnknown(arg, types.TypeName); err != nil {
			return nil, true, err
		}
	}
	byOID := types.CategoryOf(arg.Type()) == types.CatInt || types.IsOIDLike(arg.Type())
	if !byOID && types.CategoryOf(arg.Type()) != types.CatString {
		return nil, true, noFunction(name, args, loc)
	}
	return &expr.FuncExpr{Name: name, T: types.TypeInt8, Args: []expr.Expr{arg}, Volatile: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		s := ec.B
		if byOID {
			if uint32(v[0].I) != catalog.DatabaseOID {
				return types.NullDatum, nil
			}
		} else if v[0].S != s.Database {
			return types.Datum{}, pgerr.New(pgerr.InvalidCatalogName, "database \"%s\" does not exist", v[0].S)
		}
		cat := s.Cat()
		var pages int64
		for _, t := range cat.Tables {
			n, _ := s.Store.RelationPages(storage.RelID(t.RelFile))
			pages += int64(n)
		}
		for _, ix := range cat.Indexes {
			n, _, _ := s.IndexSize(ix)
			pages += int64(n)
		}
		pages += int64(len(cat.Sequences))
		return types.IntDatum(pages * funcs.BlockSize), nil
	}}, true, nil
}
