package sql

import (
	"context"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
)

// evalCtx is what expressions see while running.
type evalCtx struct {
	s       *Session
	ctx     context.Context
	params  []Datum
	aggVals []Datum // results of the current group's aggregates
}

func (ec *evalCtx) formatCtx() *formatCtx {
	if ec == nil || ec.s == nil {
		return nil
	}
	return &ec.s.fc
}

// rowSource is a relation in FROM. Virtual (system view) sources
// materialise their rows when scanned.
type rowSource interface {
	name() string
	columns() []Column
	scan(ec *evalCtx, fn func(row []Datum) error) error
}

type sortKey struct {
	e          expr
	desc       bool
	nullsFirst bool
	cmp        func(a, b Datum) (int, error)
}

// selectPlan is a compiled SELECT over at most one source.
type selectPlan struct {
	src      rowSource
	where    expr
	targets  []expr
	cols     []Column
	groupBy  []expr
	having   expr
	aggs     []*aggRef
	sort     []sortKey
	limit    expr
	offset   expr
	distinct bool
	rels     []relLock // relation locks to take at each execution
}

func isAggregate(name string) bool {
	switch name {
	case "count", "sum", "min", "max", "avg", "bool_and", "bool_or", "every":
		return true
	}
	return false
}

// aggRef is one aggregate call; aggResult reads its value for the group.
type aggRef struct {
	name     string
	arg      expr
	filter   expr // FILTER (WHERE ...), or nil
	star     bool
	distinct bool
	t        Type
}

type aggResult struct {
	idx int
	t   Type
}

func (r *aggResult) typ() Type { return r.t }
func (r *aggResult) eval(ec *evalCtx, _ []Datum) (Datum, error) {
	return ec.aggVals[r.idx], nil
}

func (a *analyzer) aggregate(name string, fc *pg.FuncCall) (expr, error) {
	if a.aggs == nil {
		return nil, posErr(pgerr.New(pgerr.GroupingError, "aggregate functions are not allowed here"), fc.Location)
	}
	if len(fc.AggOrder) > 0 {
		return nil, posErr(pgerr.NotSupported("ORDER BY in aggregates is not supported"), fc.Location)
	}
	ref := &aggRef{name: name, star: fc.AggStar, distinct: fc.AggDistinct}
	if fc.AggFilter != nil {
		saved := a.aggs
		a.aggs = nil
		f, err := a.expr(fc.AggFilter)
		a.aggs = saved
		if err != nil {
			return nil, err
		}
		if ref.filter, err = a.asBool(f, "FILTER", fc.Location); err != nil {
			return nil, err
		}
	}
	if ref.star {
		if name != "count" {
			return nil, posErr(pgerr.New(pgerr.WrongObjectType, "%s(*) specified, but %s is not an aggregate function", name, name), fc.Location)
		}
		ref.t = TypeInt8
	} else {
		if len(fc.Args) != 1 {
			return nil, posErr(pgerr.New(pgerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(fc.Args)), fc.Location)
		}
		saved := a.aggs
		a.aggs = nil // no nested aggregates
		arg, err := a.expr(fc.Args[0])
		a.aggs = saved
		if err != nil {
			return nil, err
		}
		if isUnknown(arg) {
			if arg, err = a.coerceUnknown(arg, TypeText); err != nil {
				return nil, err
			}
		}
		at := arg.typ()
		cat := categoryOf(at)
		switch name {
		case "count":
			ref.t = TypeInt8
		case "sum":
			switch {
			case at.OID == OIDInt2 || at.OID == OIDInt4:
				ref.t = TypeInt8
			case at.OID == OIDInt8 || cat == catNumeric:
				ref.t = TypeNumeric
			case cat == catFloat:
				ref.t = TypeFloat8
			case at.OID == OIDInterval:
				ref.t = TypeInterval
			default:
				return nil, noFunction(name, []expr{arg}, fc.Location)
			}
		case "avg":
			switch {
			case cat == catInt || cat == catNumeric:
				ref.t = TypeNumeric
			case cat == catFloat:
				ref.t = TypeFloat8
			default:
				return nil, noFunction(name, []expr{arg}, fc.Location)
			}
		case "min", "max":
			ref.t = at
		case "bool_and", "bool_or", "every":
			if arg, err = a.asBool(arg, name, fc.Location); err != nil {
				return nil, err
			}
			ref.t = TypeBool
		}
		ref.arg = arg
	}
	*a.aggs = append(*a.aggs, ref)
	return &aggResult{idx: len(*a.aggs) - 1, t: ref.t}, nil
}

// aggState accumulates one aggregate over a group.
type aggState struct {
	ref   *aggRef
	count int64
	i     int64
	f     float64
	n     *numeric
	best  Datum
	seen  map[string]bool
}

func (st *aggState) add(ec *evalCtx, row []Datum) error {
	r := st.ref
	if r.filter != nil {
		v, err := r.filter.eval(ec, row)
		if err != nil || v.Null || v.I == 0 {
			return err
		}
	}
	if r.star {
		st.count++
		return nil
	}
	v, err := r.arg.eval(ec, row)
	if err != nil {
		return err
	}
	if v.Null {
		return nil
	}
	if r.distinct {
		key := string(appendText(nil, r.arg.typ(), v, nil))
		if st.seen == nil {
			st.seen = map[string]bool{}
		}
		if st.seen[key] {
			return nil
		}
		st.seen[key] = true
	}
	st.count++
	at := r.arg.typ()
	switch r.name {
	case "sum", "avg":
		switch categoryOf(at) {
		case catInt:
			if r.t.OID == OIDInt8 {
				st.i += v.I // int8 sum of int4 cannot overflow in practice
			} else {
				if st.n == nil {
					st.n = numericFromInt(0)
				}
				st.n = st.n.add(numericFromInt(v.I))
			}
		case catNumeric:
			if st.n == nil {
				st.n = numericFromInt(0)
			}
			st.n = st.n.add(mustNumeric(v.S))
		case catFloat:
			st.f += v.F
		default:
			st.i += v.I
		}
	case "min", "max":
		if st.count == 1 {
			st.best = v
			return nil
		}
		c, err := comparator(at)(v, st.best)
		if err != nil {
			return err
		}
		if (r.name == "min" && c < 0) || (r.name == "max" && c > 0) {
			st.best = v
		}
	case "bool_and", "every":
		if st.count == 1 {
			st.best = v
		} else if v.I == 0 {
			st.best = v
		}
	case "bool_or":
		if st.count == 1 || v.I != 0 {
			if st.count == 1 || st.best.I == 0 {
				st.best = v
			}
		}
	}
	return nil
}

func (st *aggState) result() (Datum, error) {
	r := st.ref
	if r.name == "count" {
		return intDatum(st.count), nil
	}
	if st.count == 0 {
		return NullDatum, nil
	}
	switch r.name {
	case "sum":
		switch r.t.OID {
		case OIDInt8, OIDInterval:
			return intDatum(st.i), nil
		case OIDFloat8:
			return floatDatum(st.f), nil
		}
		return textDatum(st.n.String()), nil
	case "avg":
		if r.t.OID == OIDFloat8 {
			return floatDatum(st.f / float64(st.count)), nil
		}
		if st.n == nil {
			st.n = numericFromInt(st.i)
		}
		q, err := st.n.div(numericFromInt(st.count))
		if err != nil {
			return Datum{}, err
		}
		return textDatum(q.String()), nil
	}
	return st.best, nil
}

// compileSelect analyses a SelectStmt.
func (s *Session) compileSelect(sel *pg.SelectStmt, params *[]Type) (*selectPlan, error) {
	switch {
	case sel.Op != pg.SetOperation_SETOP_NONE:
		return nil, pgerr.NotSupported("UNION, INTERSECT and EXCEPT are not supported")
	case sel.WithClause != nil:
		return nil, pgerr.NotSupported("WITH queries are not supported")
	case len(sel.ValuesLists) > 0:
		return nil, pgerr.NotSupported("VALUES lists are not supported")
	case sel.IntoClause != nil:
		return nil, pgerr.NotSupported("SELECT INTO is not supported")
	case len(sel.LockingClause) > 0:
		return nil, pgerr.NotSupported("SELECT FOR UPDATE/SHARE is not supported")
	case len(sel.WindowClause) > 0:
		return nil, pgerr.NotSupported("window functions are not supported")
	}
	a := newAnalyzer(s, params)
	p := &selectPlan{}
	if len(sel.FromClause) > 1 {
		return nil, pgerr.NotSupported("joins are not supported")
	}
	if len(sel.FromClause) == 1 {
		src, err := s.resolveFrom(sel.FromClause[0])
		if err != nil {
			return nil, err
		}
		p.src = src
		a.scope = src.columns()
		a.rel = src.name()
	}
	if sel.WhereClause != nil {
		w, err := a.expr(sel.WhereClause)
		if err != nil {
			return nil, err
		}
		if p.where, err = a.asBool(w, "WHERE", -1); err != nil {
			return nil, err
		}
	}
	if ts, ok := p.src.(*tableSource); ok {
		ts.useIndex(s.cat(), p.where)
		p.rels = tableLocks(s.cat(), ts.t, locks.AccessShareLock)
	}
	if ps, ok := p.src.(*partitionedSource); ok { // partscan.go
		ps.filter(s.cat(), p.where)
		p.rels = ps.relLocks()
	}
	var aggs []*aggRef
	a.aggs = &aggs
	for _, g := range sel.GroupClause {
		e, err := a.groupExpr(g, sel.TargetList)
		if err != nil {
			return nil, err
		}
		p.groupBy = append(p.groupBy, e)
	}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			if p.src == nil {
				return nil, posErr(pgerr.New(pgerr.SyntaxError, "SELECT * with no tables specified is not valid"), cr.Location)
			}
			for i, c := range a.scope {
				p.targets = append(p.targets, &colExpr{i: i, t: c.Type})
				p.cols = append(p.cols, c)
			}
			continue
		}
		e, err := a.expr(rt.Val)
		if err != nil {
			return nil, err
		}
		if e, err = a.resolveOutput(e); err != nil {
			return nil, err
		}
		name := rt.Name
		if name == "" {
			name = outputName(rt.Val)
		}
		col := Column{Name: name, Type: e.typ()}
		if ce, ok := e.(*colExpr); ok && p.src != nil {
			orig := a.scope[ce.i]
			col.TableOID, col.Attnum = orig.TableOID, orig.Attnum
		}
		p.targets = append(p.targets, e)
		p.cols = append(p.cols, col)
	}
	if sel.HavingClause != nil {
		h, err := a.expr(sel.HavingClause)
		if err != nil {
			return nil, err
		}
		if p.having, err = a.asBool(h, "HAVING", -1); err != nil {
			return nil, err
		}
	}
	for _, sb := range sel.SortClause {
		by := sb.GetSortBy()
		e, err := a.sortExpr(by.Node, p)
		if err != nil {
			return nil, err
		}
		if isUnknown(e) {
			if e, err = a.coerceUnknown(e, TypeText); err != nil {
				return nil, err
			}
		}
		k := sortKey{e: e, desc: by.SortbyDir == pg.SortByDir_SORTBY_DESC, cmp: comparator(e.typ())}
		k.nullsFirst = k.desc
		switch by.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			k.nullsFirst = true
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			k.nullsFirst = false
		}
		p.sort = append(p.sort, k)
	}
	a.aggs = nil
	for _, lim := range []struct {
		n   *pg.Node
		dst *expr
	}{{sel.LimitCount, &p.limit}, {sel.LimitOffset, &p.offset}} {
		if lim.n == nil {
			continue
		}
		e, err := a.expr(lim.n)
		if err != nil {
			return nil, err
		}
		if c, ok := e.(*constExpr); ok && c.d.Null {
			continue // LIMIT NULL / LIMIT ALL
		}
		if e, err = a.castTo(e, TypeInt8, false); err != nil {
			return nil, err
		}
		*lim.dst = e
	}
	if len(sel.DistinctClause) > 0 {
		if sel.DistinctClause[0] != nil && sel.DistinctClause[0].GetNode() != nil {
			return nil, pgerr.NotSupported("DISTINCT ON is not supported")
		}
		p.distinct = true
	}
	p.aggs = aggs
	if len(aggs) > 0 || len(p.groupBy) > 0 {
		if err := checkGrouping(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// groupExpr resolves a GROUP BY item: an output position, an output
// alias, or an expression.
func (a *analyzer) groupExpr(n *pg.Node, targets []*pg.Node) (expr, error) {
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
			i := int(iv.Ival.Ival)
			if i < 1 || i > len(targets) {
				return nil, posErr(pgerr.New(pgerr.InvalidColumnReference, "GROUP BY position %d is not in select list", i), c.Location)
			}
			saved := a.aggs
			a.aggs = nil
			defer func() { a.aggs = saved }()
			return a.expr(targets[i-1].GetResTarget().Val)
		}
	}
	saved := a.aggs
	a.aggs = nil
	defer func() { a.aggs = saved }()
	return a.expr(n)
}

// sortExpr resolves an ORDER BY item: position, output alias, or
// expression over the input.
func (a *analyzer) sortExpr(n *pg.Node, p *selectPlan) (expr, error) {
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
			i := int(iv.Ival.Ival)
			if i < 1 || i > len(p.targets) {
				return nil, posErr(pgerr.New(pgerr.InvalidColumnReference, "ORDER BY position %d is not in select list", i), c.Location)
			}
			return &outputRef{i: i - 1, t: p.cols[i-1].Type}, nil
		}
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
		name := nodeName(cr.Fields[0])
		inScope := false
		for _, c := range a.scope {
			if c.Name == name {
				inScope = true
			}
		}
		if !inScope {
			for i, c := range p.cols {
				if c.Name == name {
					return &outputRef{i: i, t: c.Type}, nil
				}
			}
		}
	}
	return a.expr(n)
}

// outputRef reads an already-computed output column (ORDER BY 1 / alias).
type outputRef struct {
	i int
	t Type
}

func (o *outputRef) typ() Type { return o.t }
func (o *outputRef) eval(ec *evalCtx, row []Datum) (Datum, error) {
	return row[len(row)-1-o.i], nil // see sortRow: outputs are appended reversed
}

// checkGrouping rejects plain column references outside GROUP BY in an
// aggregated query, as PostgreSQL does.
func checkGrouping(p *selectPlan) error {
	grouped := map[int]bool{}
	for _, g := range p.groupBy {
		if c, ok := g.(*colExpr); ok {
			grouped[c.i] = true
		}
	}
	var bad func(e expr) *colExpr
	bad = func(e expr) *colExpr {
		switch x := e.(type) {
		case *colExpr:
			if !grouped[x.i] {
				return x
			}
		case *binopExpr:
			if c := bad(x.l); c != nil {
				return c
			}
			return bad(x.r)
		case *funcExpr:
			for _, a := range x.args {
				if c := bad(a); c != nil {
					return c
				}
			}
		case *castExpr:
			return bad(x.arg)
		case *negExpr:
			return bad(x.arg)
		case *boolExpr:
			for _, a := range x.args {
				if c := bad(a); c != nil {
					return c
				}
			}
		}
		return nil
	}
	for _, t := range p.targets {
		if c := bad(t); c != nil {
			name := "?"
			if p.src != nil {
				name = p.src.name() + "." + p.src.columns()[c.i].Name
			}
			return pgerr.New(pgerr.GroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", name)
		}
	}
	return nil
}

// run executes the plan, calling emit for each output row.
func (p *selectPlan) run(ec *evalCtx, emit func(row []Datum) error) error {
	type outRow struct {
		out  []Datum
		keys []Datum
	}
	var results []outRow
	needBuffer := len(p.sort) > 0 || p.distinct || len(p.aggs) > 0 || len(p.groupBy) > 0
	limit, offset := int64(-1), int64(0)
	for _, l := range []struct {
		e   expr
		dst *int64
	}{{p.limit, &limit}, {p.offset, &offset}} {
		if l.e == nil {
			continue
		}
		v, err := l.e.eval(ec, nil)
		if err != nil {
			return err
		}
		if !v.Null {
			if v.I < 0 {
				if l.dst == &limit {
					return pgerr.New("2201W", "LIMIT must not be negative")
				}
				return pgerr.New("2201X", "OFFSET must not be negative")
			}
			*l.dst = v.I
		}
	}
	produce := func(row []Datum) (outRow, error) {
		out := make([]Datum, len(p.targets))
		for i, t := range p.targets {
			v, err := t.eval(ec, row)
			if err != nil {
				return outRow{}, err
			}
			out[i] = v
		}
		var keys []Datum
		if len(p.sort) > 0 {
			ext := make([]Datum, 0, len(row)+len(out))
			ext = append(ext, row...)
			for i := len(out) - 1; i >= 0; i-- {
				ext = append(ext, out[i])
			}
			keys = make([]Datum, len(p.sort))
			for i, k := range p.sort {
				v, err := k.e.eval(ec, ext)
				if err != nil {
					return outRow{}, err
				}
				keys[i] = v
			}
		}
		return outRow{out: out, keys: keys}, nil
	}
	var emitted, skipped int64
	direct := func(r outRow) error {
		if skipped < offset {
			skipped++
			return nil
		}
		if limit >= 0 && emitted >= limit {
			return errLimitReached
		}
		emitted++
		return emit(r.out)
	}
	if len(p.aggs) > 0 || len(p.groupBy) > 0 {
		type group struct {
			first  []Datum
			states []aggState
		}
		var order []string
		groups := map[string]*group{}
		scan := func(row []Datum) error {
			var key []byte
			for _, g := range p.groupBy {
				v, err := g.eval(ec, row)
				if err != nil {
					return err
				}
				if v.Null {
					key = append(key, 0)
				} else {
					key = append(key, 1)
					key = appendText(key, g.typ(), v, nil)
				}
				key = append(key, 0xff)
			}
			gr := groups[string(key)]
			if gr == nil {
				gr = &group{first: append([]Datum(nil), row...), states: make([]aggState, len(p.aggs))}
				for i, r := range p.aggs {
					gr.states[i].ref = r
				}
				groups[string(key)] = gr
				order = append(order, string(key))
			}
			for i := range gr.states {
				if err := gr.states[i].add(ec, row); err != nil {
					return err
				}
			}
			return nil
		}
		if err := p.scanSource(ec, scan); err != nil {
			return err
		}
		if len(p.groupBy) == 0 && len(groups) == 0 {
			gr := &group{states: make([]aggState, len(p.aggs))}
			if p.src != nil {
				gr.first = make([]Datum, len(p.src.columns()))
				for i := range gr.first {
					gr.first[i] = NullDatum
				}
			}
			for i, r := range p.aggs {
				gr.states[i].ref = r
			}
			groups[""] = gr
			order = append(order, "")
		}
		for _, k := range order {
			gr := groups[k]
			vals := make([]Datum, len(gr.states))
			for i := range gr.states {
				v, err := gr.states[i].result()
				if err != nil {
					return err
				}
				vals[i] = v
			}
			ec.aggVals = vals
			if p.having != nil {
				h, err := p.having.eval(ec, gr.first)
				if err != nil {
					return err
				}
				if h.Null || h.I == 0 {
					continue
				}
			}
			r, err := produce(gr.first)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
		ec.aggVals = nil
	} else {
		scan := func(row []Datum) error {
			r, err := produce(row)
			if err != nil {
				return err
			}
			if needBuffer {
				results = append(results, r)
				return nil
			}
			return direct(r)
		}
		if err := p.scanSource(ec, scan); err != nil && err != errLimitReached {
			return err
		}
		if !needBuffer {
			return nil
		}
	}
	if p.distinct {
		seen := map[string]bool{}
		kept := results[:0]
		for _, r := range results {
			var key []byte
			for i, v := range r.out {
				if v.Null {
					key = append(key, 0)
				} else {
					key = appendText(append(key, 1), p.cols[i].Type, v, nil)
				}
				key = append(key, 0xff)
			}
			if !seen[string(key)] {
				seen[string(key)] = true
				kept = append(kept, r)
			}
		}
		results = kept
	}
	if len(p.sort) > 0 {
		var sortErr error
		sort.SliceStable(results, func(i, j int) bool {
			for k, key := range p.sort {
				a, b := results[i].keys[k], results[j].keys[k]
				switch {
				case a.Null && b.Null:
					continue
				case a.Null:
					return key.nullsFirst
				case b.Null:
					return !key.nullsFirst
				}
				c, err := key.cmp(a, b)
				if err != nil {
					sortErr = err
					return false
				}
				if c == 0 {
					continue
				}
				if key.desc {
					return c > 0
				}
				return c < 0
			}
			return false
		})
		if sortErr != nil {
			return sortErr
		}
	}
	for _, r := range results {
		if err := direct(r); err != nil {
			if err == errLimitReached {
				return nil
			}
			return err
		}
	}
	return nil
}

var errLimitReached = pgerr.New(pgerr.InternalError, "limit reached")

func (p *selectPlan) scanSource(ec *evalCtx, fn func(row []Datum) error) error {
	filter := func(row []Datum) error {
		if err := ec.ctx.Err(); err != nil {
			return context.Cause(ec.ctx)
		}
		if p.where != nil {
			v, err := p.where.eval(ec, row)
			if err != nil {
				return err
			}
			if v.Null || v.I == 0 {
				return nil
			}
		}
		return fn(row)
	}
	if p.src == nil {
		return filter(nil)
	}
	return p.src.scan(ec, filter)
}

// resolveFrom finds the relation named in FROM.
func (s *Session) resolveFrom(n *pg.Node) (rowSource, error) {
	rv := n.GetRangeVar()
	if rv == nil {
		if rf := n.GetRangeFunction(); rf != nil {
			return s.functionSource(rf)
		}
		return nil, pgerr.NotSupported("this kind of FROM item (%s) is not supported", nodeKind(n))
	}
	if rv.Schemaname != "" && rv.Schemaname != "pg_catalog" && rv.Schemaname != "public" {
		return nil, posErr(pgerr.New(pgerr.UndefinedTable, "relation \"%s.%s\" does not exist", rv.Schemaname, rv.Relname), rv.Location)
	}
	v, ok := s.eng.views[rv.Relname]
	if !ok || (rv.Schemaname == "public") {
		if rv.Schemaname == "pg_catalog" {
			return nil, posErr(pgerr.New(pgerr.UndefinedTable, "relation \"%s.%s\" does not exist", rv.Schemaname, rv.Relname), rv.Location)
		}
		t, err := s.resolveTable(rv)
		if err != nil {
			return nil, err
		}
		alias := t.Name
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
			if len(rv.Alias.Colnames) > 0 {
				return nil, pgerr.NotSupported("column aliases in FROM are not supported")
			}
		}
		if t.Partitioned() {
			ps := newPartitionedSource(t, alias, locks.AccessShareLock)
			ps.only = !rv.Inh
			return ps, nil
		}
		return newTableSource(t, alias), nil
	}
	src := &viewSource{v: v, s: s, alias: rv.Relname}
	if rv.Alias != nil {
		src.alias = rv.Alias.Aliasname
		if len(rv.Alias.Colnames) > 0 {
			return nil, pgerr.NotSupported("column aliases in FROM are not supported")
		}
	}
	return src, nil
}
