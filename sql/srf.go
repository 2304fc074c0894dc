package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// Set-returning functions: generate_series and unnest, in FROM and at the
// top level of a select list (where several are run in lock step, as
// PostgreSQL 10+'s ProjectSet does: as many rows as the longest, the
// shorter padded with NULLs).

type srfExpr struct {
	name string
	args []expr
	t    Type
	gen  func(ec *evalCtx, args []Datum, emit func(Datum) error) error
	// While the select list is projected for one of the set's values,
	// eval returns it (a ProjectSet step).
	cur    Datum
	active bool
}

func (f *srfExpr) typ() Type { return f.t }
func (f *srfExpr) eval(*evalCtx, []Datum) (Datum, error) {
	if f.active {
		return f.cur, nil
	}
	return Datum{}, pgerr.NotSupported("set-returning function %s is not supported in this position", f.name)
}

// srfsIn lists the set-returning calls inside e.
func srfsIn(e expr) []*srfExpr {
	var out []*srfExpr
	walkExpr(e, func(x expr) bool {
		if f, ok := x.(*srfExpr); ok {
			out = append(out, f)
			return false
		}
		return true
	})
	return out
}

// each evaluates the arguments over row and calls emit per result value.
// A NULL argument yields no rows (the functions are strict).
func (f *srfExpr) each(ec *evalCtx, row []Datum, emit func(Datum) error) error {
	vals := make([]Datum, len(f.args))
	for i, a := range f.args {
		v, err := a.eval(ec, row)
		if err != nil {
			return err
		}
		if v.Null {
			return nil
		}
		vals[i] = v
	}
	return f.gen(ec, vals, emit)
}

// srfOutputNames are the OUT parameter names of set-returning functions
// that have one.
var srfOutputNames = map[string]string{"pg_partition_ancestors": "relid"}

func isSRF(name string) bool {
	return name == "generate_series" || name == "unnest" || name == "pg_partition_ancestors"
}

// srfCall compiles generate_series or unnest.
func (a *analyzer) srfCall(name string, fc *pg.FuncCall) (expr, error) {
	if !a.allowSRF {
		where := a.aggCtx
		if where == "" {
			where = "this position"
		}
		return nil, posErr(pgerr.New(pgerr.FeatureNotSupported, "set-returning functions are not allowed in %s", where), fc.Location)
	}
	a.allowSRF = false
	defer func() { a.allowSRF = true }()
	var args []expr
	for _, n := range fc.Args {
		e, err := a.expr(n)
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
		if !isOidLike(args[0].typ()) {
			if args[0], err = a.coerceArg(args[0], TypeRegclass, name, fc.Location); err != nil {
				return nil, err
			}
		}
		return &srfExpr{name: name, args: args, t: TypeRegclass, gen: func(ec *evalCtx, v []Datum, emit func(Datum) error) error {
			cat := ec.s.cat()
			t := cat.Tables[uint32(v[0].I)]
			if t == nil || !t.Partitioned() && t.Parent == 0 {
				return nil
			}
			for ; t != nil; t = cat.Tables[t.Parent] {
				if err := emit(oidDatum(t.OID)); err != nil {
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
		if isUnknown(args[0]) {
			return nil, posErr(pgerr.New(pgerr.UndefinedFunction, "function unnest(unknown) is not unique").
				WithHint("Could not choose a best candidate function. You might need to add explicit type casts."), fc.Location)
		}
		elem, ok := elemOf(args[0].typ())
		if !ok {
			return nil, noFunction(name, args, fc.Location)
		}
		return &srfExpr{name: name, args: args, t: elem, gen: func(_ *evalCtx, v []Datum, emit func(Datum) error) error {
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
	if categoryOf(args[0].typ()) == catDatetime || categoryOf(args[1].typ()) == catDatetime {
		if len(args) != 3 {
			return nil, noFunction(name, args, fc.Location)
		}
		t := TypeTimestamptz
		if args[0].typ().OID == OIDTimestamp || args[1].typ().OID == OIDTimestamp {
			t = TypeTimestamp
		}
		var err error
		for i := 0; i < 2; i++ {
			if args[i], err = a.coerceArg(args[i], t, name, fc.Location); err != nil {
				return nil, err
			}
		}
		if args[2], err = a.coerceArg(args[2], TypeInterval, name, fc.Location); err != nil {
			return nil, err
		}
		return &srfExpr{name: name, args: args, t: t, gen: func(ec *evalCtx, v []Datum, emit func(Datum) error) error {
			return intSeries(ec, v[0].I, v[1].I, v[2].I, emit)
		}}, nil
	}
	t := TypeInt4
	for _, e := range args {
		switch {
		case isUnknown(e):
		case e.typ().OID == OIDInt8:
			t = TypeInt8
		case categoryOf(e.typ()) == catNumeric:
			if t.OID != OIDNumeric {
				t = TypeNumeric
			}
		case categoryOf(e.typ()) != catInt:
			return nil, noFunction(name, args, fc.Location)
		}
	}
	for i := range args {
		var err error
		if args[i], err = a.coerceArg(args[i], t, name, fc.Location); err != nil {
			return nil, err
		}
	}
	if t.OID == OIDNumeric {
		return &srfExpr{name: name, args: args, t: t, gen: numericSeries}, nil
	}
	return &srfExpr{name: name, args: args, t: t, gen: func(ec *evalCtx, v []Datum, emit func(Datum) error) error {
		step := int64(1)
		if len(v) == 3 {
			step = v[2].I
		}
		return intSeries(ec, v[0].I, v[1].I, step, emit)
	}}, nil
}

func intSeries(ec *evalCtx, start, stop, step int64, emit func(Datum) error) error {
	if step == 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	n := 0
	for i := start; (step > 0 && i <= stop) || (step < 0 && i >= stop); i += step {
		if n++; n&1023 == 0 {
			if err := checkCancel(ec); err != nil {
				return err
			}
		}
		if err := emit(intDatum(i)); err != nil {
			return err
		}
		if (step > 0 && i > stop-step) || (step < 0 && i < stop-step) {
			break // the next step would overflow past stop
		}
	}
	return nil
}

func numericSeries(ec *evalCtx, v []Datum, emit func(Datum) error) error {
	cur, stop := mustNumeric(v[0].S), mustNumeric(v[1].S)
	step := numericFromInt(1)
	if len(v) == 3 {
		step = mustNumeric(v[2].S)
	}
	sign := step.coef.Sign()
	if sign == 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	for n := 0; ; n++ {
		c := cur.cmp(stop)
		if (sign > 0 && c > 0) || (sign < 0 && c < 0) {
			return nil
		}
		if n&1023 == 1023 {
			if err := checkCancel(ec); err != nil {
				return err
			}
		}
		if err := emit(textDatum(cur.String())); err != nil {
			return err
		}
		cur = cur.add(step)
	}
}

// funcSource is a function call in FROM: a set-returning function, or any
// scalar function (one row). Its arguments may read earlier FROM items
// (functions in FROM are implicitly LATERAL).
type funcSource struct {
	alias      string
	cols       []Column
	srf        *srfExpr
	scalar     expr
	ordinality bool
	level      bool // arguments read the level row
}

func (f *funcSource) name() string      { return f.alias }
func (f *funcSource) columns() []Column { return f.cols }
func (f *funcSource) readsLevel() bool  { return f.level }
func (x *Executor) scanFunction(ec *evalCtx, f *funcSource, fn func([]Datum) error) error {
	return x.scanFunctionLevel(ec, f, nil, fn)
}

func (x *Executor) scanFunctionLevel(ec *evalCtx, f *funcSource, level []Datum, fn func([]Datum) error) error {
	row := make([]Datum, len(f.cols))
	n := int64(0)
	put := func(d Datum) error {
		n++
		row[0] = d
		if f.ordinality {
			row[1] = intDatum(n)
		}
		return fn(row)
	}
	if f.srf != nil {
		return f.srf.each(ec, level, put)
	}
	v, err := f.scalar.eval(ec, level)
	if err != nil {
		return err
	}
	return put(v)
}

// functionItem compiles a RangeFunction.
func functionItem(a *analyzer, rf *pg.RangeFunction) (*funcSource, error) {
	if len(rf.Functions) != 1 || rf.IsRowsfrom {
		return nil, pgerr.NotSupported("ROWS FROM with several functions is not supported")
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) > 1 && items[1] != nil && items[1].GetList() != nil && len(items[1].GetList().Items) > 0 {
		return nil, pgerr.NotSupported("column definition lists for functions are not supported")
	}
	fcNode := items[0]
	fc := fcNode.GetFuncCall()
	var name string
	var e expr
	var err error
	saved := a.allowSRF
	a.allowSRF = true
	if fc != nil {
		_, name = qualifiedName(fc.Funcname)
		name = strings.ToLower(name)
		e, err = a.funcCall(fc)
	} else {
		name = outputName(fcNode)
		e, err = a.expr(fcNode)
	}
	a.allowSRF = saved
	if err != nil {
		return nil, err
	}
	f := &funcSource{alias: name}
	colName := name
	if sf, ok := e.(*srfExpr); ok {
		f.srf = sf
	} else {
		if e, err = a.resolveOutput(e); err != nil {
			return nil, err
		}
		f.scalar = e
	}
	// a function with a named output column keeps that name under a
	// table alias; others take the alias
	outName, named := srfOutputNames[name]
	if named {
		colName = outName
	}
	if rf.Alias != nil {
		f.alias = rf.Alias.Aliasname
		if !named {
			colName = f.alias
		}
		if len(rf.Alias.Colnames) > 0 {
			colName = nodeName(rf.Alias.Colnames[0])
		}
	}
	f.cols = []Column{{Name: colName, Type: e.typ()}}
	if rf.Ordinality {
		f.ordinality = true
		on := "ordinality"
		if rf.Alias != nil && len(rf.Alias.Colnames) > 1 {
			on = nodeName(rf.Alias.Colnames[1])
		}
		f.cols = append(f.cols, Column{Name: on, Type: TypeInt8})
	}
	if rf.Alias != nil && len(rf.Alias.Colnames) > len(f.cols) {
		return nil, pgerr.New(pgerr.SyntaxError, "too many column aliases specified for function %s", name)
	}
	return f, nil
}
