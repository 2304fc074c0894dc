package sql

import (
	"context"
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// evalCtx is what expressions see while running.
type evalCtx struct {
	s         *Backend
	exec      executor // runs the plans of subqueries
	ctx       context.Context
	params    []Datum
	aggVals   []Datum   // results of the current group's aggregates
	groupVals []Datum   // GROUP BY values of the current group
	outVals   []Datum   // the current output row (ORDER BY an output column)
	outer     [][]Datum // rows of enclosing query levels, innermost last
	subCache  map[*sublinkExpr]*subResult
	plan      planKind // how PostgreSQL's plan cache would run this execution
	pruneUpTo valueDep // partition pruning ignores values beyond this (0: none)
	// runtimePruned: a partition the plan holds was pruned on a
	// parameter value (a generic plan would lock more than a custom one)
	runtimePruned bool
	cteCache      map[any][][]Datum // CTE results by definition (cte.go)
	tick          uint32            // rows produced, for periodic cancel checks
}

func (ec *evalCtx) formatCtx() *formatCtx {
	if ec == nil || ec.s == nil {
		return nil
	}
	return &ec.s.fc
}

// rowSource is a relation in FROM. Virtual (system view) sources
// materialise their rows when scanned. A row passed to fn is valid only
// during the call.
type rowSource interface {
	name() string
	columns() []Column
}

type sortKey struct {
	e          expr
	desc       bool
	nullsFirst bool
	cmp        func(a, b Datum) (int, error)
}

// selectPlan is a compiled query: one level's FROM tree, filters,
// grouping, projection, ordering and limits. Set operations and VALUES
// lists are plans whose FROM is a single source producing their rows.
type selectPlan struct {
	cols []Column
	rels []relLock // relation locks to take at each execution
	// correlated: the plan reads an enclosing query's row, so as a
	// subquery it is re-run for every outer row.
	correlated bool

	from       planNode
	width      int
	oneTime    []expr // conditions over no FROM item, checked once per run
	targets    []expr
	locs       []int32 // where each target stands in the query (-1: nowhere)
	srf        bool    // some target is a set-returning function
	grouped    bool
	groupBy    []expr
	having     expr
	aggs       []*aggRef
	sort       []sortKey
	distinct   bool
	distinctOn []expr
	limit      expr
	offset     expr
	rowLocks   *rowLocking // FOR UPDATE / FOR SHARE
}

// outputRef reads an already-computed output column (ORDER BY 1 / alias).
type outputRef struct {
	i int
	t Type
}

func (o *outputRef) typ() Type { return o.t }
func (o *outputRef) eval(ec *evalCtx, _ []Datum) (Datum, error) {
	return ec.outVals[o.i], nil
}

var errLimitReached = pgerr.New(pgerr.InternalError, "limit reached")

// newAnalyzer returns an analyzer whose expressions may hold subqueries,
// which it compiles as subqueries of the level being analysed.
func newAnalyzer(s *Backend, params *[]Type) *analyzer {
	a := newExprAnalyzer(s, params)
	a.subquery = subqueryOf
	return a
}

// subqueryOf is the analyzer's subquery hook.
func subqueryOf(a *analyzer, sel *pg.SelectStmt) (subplan, []Column, bool, error) {
	p, err := compileSubquery(a, sel)
	if err != nil {
		return nil, nil, false, err
	}
	return p, p.cols, p.correlated, nil
}

// compileSelect analyses a SelectStmt at the top level of a statement.
func (s *planner) compileSelect(sel *pg.SelectStmt, params *[]Type) (*selectPlan, error) {
	return compileQuery(newAnalyzer(&s.Backend, params), sel)
}

// compileQuery compiles a query whose enclosing level is a.parentSc.
func compileQuery(a *analyzer, sel *pg.SelectStmt) (*selectPlan, error) {
	if sel.WithClause != nil {
		if err := withClause(a, sel.WithClause); err != nil {
			return nil, err
		}
	}
	switch {
	case sel.IntoClause != nil:
		return nil, pgerr.NotSupported("SELECT INTO is not supported")
	case len(sel.WindowClause) > 0:
		return nil, pgerr.NotSupported("window functions are not supported")
	}
	switch {
	case sel.Op != pg.SetOperation_SETOP_NONE:
		return compileSetOp(a, sel)
	case len(sel.ValuesLists) > 0:
		return compileValues(a, sel)
	}
	return compileSimple(a, sel)
}

// subquery compiles a subquery of the current level.
func compileSubquery(a *analyzer, sel *pg.SelectStmt) (*selectPlan, error) {
	return compileQuery(a.childWith(a.sc), sel)
}

func compileSimple(a *analyzer, sel *pg.SelectStmt) (*selectPlan, error) {
	sc := newScope(a.parentSc)
	sc.hidden = a.hiddenSc
	la := a.level(sc)
	fb := &fromBuilder{a: la, sc: sc, sel: sel, lock: a.inheritLock}
	root, err := fb.build(sel.FromClause)
	if err != nil {
		return nil, err
	}
	p := &selectPlan{from: root}

	var where []expr
	if sel.WhereClause != nil {
		wa := la.noAggs("WHERE")
		w, err := wa.expr(sel.WhereClause)
		if err != nil {
			return nil, err
		}
		if w, err = wa.asBool(w, "WHERE", -1); err != nil {
			return nil, err
		}
		where = conjuncts(w)
	}

	var aggs []*aggRef
	la.aggs = &aggs
	la.allowSRF = true
	la.aggCtx = "SELECT"
	if err := targetList(la, fb, sel.TargetList, p); err != nil {
		return nil, err
	}
	la.allowSRF = false

	ga := la.noAggs("GROUP BY")
	for _, g := range sel.GroupClause {
		e, err := groupExpr(ga, g, sel.TargetList, p)
		if err != nil {
			return nil, err
		}
		p.groupBy = append(p.groupBy, e)
	}
	la.aggCtx = ""
	if sel.HavingClause != nil {
		h, err := la.expr(sel.HavingClause)
		if err != nil {
			return nil, err
		}
		if p.having, err = la.asBool(h, "HAVING", -1); err != nil {
			return nil, err
		}
	}
	for _, sb := range sel.SortClause {
		k, err := compileSortKey(la, sb.GetSortBy(), p)
		if err != nil {
			return nil, err
		}
		p.sort = append(p.sort, k)
	}
	if len(sel.DistinctClause) > 0 {
		if err := distinctClause(la, sel.DistinctClause, p); err != nil {
			return nil, err
		}
	}
	if err := limits(la.noAggs("LIMIT"), sel, p); err != nil {
		return nil, err
	}
	p.aggs = aggs
	if len(aggs) > 0 || len(p.groupBy) > 0 || p.having != nil {
		p.grouped = true
		if err := checkGrouping(la, fb, p); err != nil {
			return nil, err
		}
	}
	if len(sel.LockingClause) > 0 || a.inheritLock != nil {
		if err := rowLockClause(la, sel, p, fb, a.inheritLock, root, where); err != nil {
			return nil, err
		}
	}
	if p.oneTime, err = fb.place(root, where); err != nil {
		return nil, err
	}
	fb.markPlanOnly()
	p.width = sc.width
	p.rels = fb.rels
	p.correlated = sc.correlated
	return p, nil
}

// targetList compiles the select list, expanding * and t.*.
func targetList(a *analyzer, fb *fromBuilder, list []*pg.Node, p *selectPlan) error {
	for _, t := range list {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			var cols []nsColumn
			if len(cr.Fields) == 1 {
				if a.sc.width == 0 && len(a.sc.rels) == 0 {
					return posErr(pgerr.New(pgerr.SyntaxError, "SELECT * with no tables specified is not valid"), cr.Location)
				}
				cols = a.sc.star
			} else {
				q := nodeName(cr.Fields[len(cr.Fields)-2])
				rel := a.sc.relByAlias(q)
				if rel == nil {
					return posErr(pgerr.New(pgerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", q), cr.Location)
				}
				cols = rel.cols[:rel.star]
			}
			for _, c := range cols {
				p.targets = append(p.targets, c.e)
				p.locs = append(p.locs, cr.Location)
				meta := c.meta
				if meta.Attnum < 0 {
					meta.TableOID, meta.Attnum = 0, 0
				}
				p.cols = append(p.cols, meta)
			}
			continue
		}
		e, err := a.expr(rt.Val)
		if err != nil {
			return err
		}
		if e, err = a.resolveOutput(e); err != nil {
			return err
		}
		if len(srfsIn(e)) > 0 {
			p.srf = true
		}
		name := rt.Name
		if name == "" {
			name = outputName(rt.Val)
		}
		col := Column{Name: name, Type: e.typ()}
		if ce, ok := e.(*colExpr); ok && fb != nil && ce.i < len(fb.posMeta()) {
			if m := fb.posMeta()[ce.i]; m.Attnum > 0 {
				col.TableOID, col.Attnum = m.TableOID, m.Attnum
			}
		}
		p.targets = append(p.targets, e)
		p.locs = append(p.locs, exprLocation(rt.Val))
		p.cols = append(p.cols, col)
	}
	return nil
}

// posMeta returns the column metadata of each level-row position.
func (fb *fromBuilder) posMeta() []Column {
	out := make([]Column, 0, fb.sc.width)
	for _, l := range fb.leaves {
		out = append(out, l.src.columns()...)
	}
	return out
}

// groupExpr resolves a GROUP BY item: an output position, an input
// expression, or (failing that) an output column name, as PostgreSQL's
// SQL99 rule has it.
func groupExpr(a *analyzer, n *pg.Node, targets []*pg.Node, p *selectPlan) (expr, error) {
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
			i := int(iv.Ival.Ival)
			if i < 1 || i > len(p.targets) {
				return nil, posErr(pgerr.New(pgerr.InvalidColumnReference, "GROUP BY position %d is not in select list", i), c.Location)
			}
			if _, ok := p.targets[i-1].(*aggResult); ok {
				return nil, posErr(pgerr.New(pgerr.GroupingError, "aggregate functions are not allowed in GROUP BY"), c.Location)
			}
			return p.targets[i-1], nil
		}
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
		name := nodeName(cr.Fields[0])
		if _, _, _, err := a.sc.lookupColumn("", name, cr.Location); err != nil {
			for i, c := range p.cols {
				if c.Name == name {
					return p.targets[i], nil
				}
			}
		}
	}
	return a.expr(n)
}

// sortKey resolves an ORDER BY item: an output position, an output
// column name (which wins over an input column, as SQL92 says), or an
// expression over the input.
func compileSortKey(a *analyzer, by *pg.SortBy, p *selectPlan) (sortKey, error) {
	if by.UseOp != nil {
		return sortKey{}, pgerr.NotSupported("ORDER BY ... USING is not supported")
	}
	e, err := sortExpr(a, by.Node, p)
	if err != nil {
		return sortKey{}, err
	}
	if isUnknown(e) {
		if e, err = a.coerceUnknown(e, TypeText); err != nil {
			return sortKey{}, err
		}
	}
	if isArray(e.typ()) {
		return sortKey{}, pgerr.NotSupported("ordering by arrays is not supported")
	}
	return newSortKey(e, by), nil
}

func sortExpr(a *analyzer, n *pg.Node, p *selectPlan) (expr, error) {
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
			i := int(iv.Ival.Ival)
			if i < 1 || i > len(p.targets) {
				return nil, posErr(pgerr.New(pgerr.InvalidColumnReference, "ORDER BY position %d is not in select list", i), c.Location)
			}
			return &outputRef{i: i - 1, t: p.cols[i-1].Type}, nil
		}
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
		name := nodeName(cr.Fields[0])
		match := -1
		for i, c := range p.cols {
			if c.Name != name {
				continue
			}
			if match >= 0 && exprKey(p.targets[match]) != exprKey(p.targets[i]) {
				return nil, posErr(pgerr.New(pgerr.AmbiguousColumn, "ORDER BY \"%s\" is ambiguous", name), cr.Location)
			}
			if match < 0 {
				match = i
			}
		}
		if match >= 0 {
			return &outputRef{i: match, t: p.cols[match].Type}, nil
		}
	}
	return a.expr(n)
}

func distinctClause(a *analyzer, list []*pg.Node, p *selectPlan) error {
	if len(list) == 1 && (list[0] == nil || list[0].GetNode() == nil) {
		p.distinct = true
		for _, k := range p.sort {
			if _, ok := k.e.(*outputRef); ok {
				continue
			}
			key := exprKey(k.e)
			found := false
			for _, t := range p.targets {
				if key != "" && exprKey(t) == key {
					found = true
				}
			}
			if !found {
				return pgerr.New(pgerr.InvalidColumnReference, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
			}
		}
		return nil
	}
	for _, n := range list {
		e, err := sortExpr(a, n, p)
		if err != nil {
			return err
		}
		p.distinctOn = append(p.distinctOn, e)
	}
	// PostgreSQL: the DISTINCT ON expressions must match the leftmost
	// ORDER BY expressions.
	for i, d := range p.distinctOn {
		if i >= len(p.sort) {
			break
		}
		if sameSortTarget(d, p.sort[i].e, p) {
			continue
		}
		return posErr(pgerr.New(pgerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"), exprLocation(list[i]))
	}
	return nil
}

// sameSortTarget reports whether two ORDER BY / DISTINCT ON items denote
// the same value.
func sameSortTarget(a, b expr, p *selectPlan) bool {
	resolve := func(e expr) string {
		if o, ok := e.(*outputRef); ok {
			return exprKey(p.targets[o.i])
		}
		return exprKey(e)
	}
	ka, kb := resolve(a), resolve(b)
	return ka != "" && ka == kb
}

func limits(a *analyzer, sel *pg.SelectStmt, p *selectPlan) error {
	if sel.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return pgerr.NotSupported("FETCH ... WITH TIES is not supported")
	}
	for _, lim := range []struct {
		n   *pg.Node
		dst *expr
	}{{sel.LimitCount, &p.limit}, {sel.LimitOffset, &p.offset}} {
		if lim.n == nil {
			continue
		}
		e, err := a.expr(lim.n)
		if err != nil {
			return err
		}
		if c, ok := e.(*constExpr); ok && c.d.Null {
			continue // LIMIT NULL / LIMIT ALL
		}
		if e, err = a.castTo(e, TypeInt8, false); err != nil {
			return posErr(pgerr.From(err), exprLocation(lim.n))
		}
		*lim.dst = e
	}
	return nil
}

// checkGrouping rewrites the expressions of an aggregated query to read
// GROUP BY values, and rejects any other column of this level used
// outside an aggregate, unless the query groups by its table's primary
// key (functional dependency, as PostgreSQL allows).
func checkGrouping(a *analyzer, fb *fromBuilder, p *selectPlan) error {
	keys := make([]string, len(p.groupBy))
	for i, g := range p.groupBy {
		keys[i] = exprKey(g)
	}
	groupedCols := map[int]bool{}
	for _, g := range p.groupBy {
		if c, ok := g.(*colExpr); ok {
			groupedCols[c.i] = true
		}
	}
	var bad *colExpr
	rewrite := func(e expr) expr {
		if e == nil {
			return nil
		}
		return rewriteExpr(e, func(x expr) expr {
			if k := exprKey(x); k != "" {
				for i, gk := range keys {
					if gk == k {
						return &groupRef{idx: i, t: x.typ()}
					}
				}
			}
			if c, ok := x.(*colExpr); ok && bad == nil && !functionallyDependent(a, fb, c.i, groupedCols) {
				bad = c
			}
			return nil
		})
	}
	for i := range p.targets {
		p.targets[i] = rewrite(p.targets[i])
	}
	p.having = rewrite(p.having)
	for i := range p.sort {
		p.sort[i].e = rewrite(p.sort[i].e)
	}
	for i := range p.distinctOn {
		p.distinctOn[i] = rewrite(p.distinctOn[i])
	}
	if bad != nil {
		e := pgerr.New(pgerr.GroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", columnName(a, bad.i))
		e.Position = bad.loc
		return e
	}
	return nil
}

// functionallyDependent reports whether level-row position pos is
// determined by the grouped positions: its table's primary key columns
// are all grouped.
func functionallyDependent(a *analyzer, fb *fromBuilder, pos int, grouped map[int]bool) bool {
	if grouped[pos] || fb == nil {
		return grouped[pos]
	}
	for _, l := range fb.leaves {
		if pos < l.off || pos >= l.off+l.n {
			continue
		}
		ts, ok := l.src.(*tableSource)
		if !ok {
			return false
		}
		for _, ix := range a.s.cat().tableIndexes(ts.t) {
			if !ix.Primary {
				continue
			}
			for _, c := range ix.Cols {
				if !grouped[l.off+c] {
					return false
				}
			}
			return true
		}
	}
	return false
}

// columnName names a level-row position as alias.column for messages.
func columnName(a *analyzer, pos int) string {
	for _, r := range a.sc.rels {
		for _, c := range r.cols {
			if ce, ok := c.e.(*colExpr); ok && ce.i == pos {
				if r.alias == "" {
					return c.name
				}
				return r.alias + "." + c.name
			}
		}
	}
	return "?"
}

// run executes the plan, calling emit for each output row. The row
// passed to emit is valid only during the call.
func (x *Executor) runSelect(ec *evalCtx, p *selectPlan, emit func(row []Datum) error) error {
	ok, err := passes(ec, p.oneTime, nil)
	if err != nil || !ok && !p.grouped {
		return err
	}
	noRows := !ok // an aggregate over no rows still yields its one row
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
					return pgerr.New(pgerr.InvalidRowCountLimit, "LIMIT must not be negative")
				}
				return pgerr.New(pgerr.InvalidOffsetLimit, "OFFSET must not be negative")
			}
			*l.dst = v.I
		}
	}
	if limit == 0 && p.rowLocks == nil {
		return nil
	}
	buf := make([]Datum, p.width)
	scan := func(fn func() error) error {
		if noRows {
			return nil
		}
		if p.from == nil {
			return fn()
		}
		return x.runNode(ec, p.from, buf, func() error {
			if ec.tick++; ec.tick&1023 == 0 {
				if err := checkCancel(ec); err != nil {
					return err
				}
			}
			return fn()
		})
	}
	var emitted, skipped int64
	direct := func(out []Datum) error {
		if skipped < offset {
			skipped++
			return nil
		}
		if limit >= 0 && emitted >= limit {
			return errLimitReached
		}
		emitted++
		return emit(out)
	}
	buffered := p.grouped || len(p.sort) > 0 || p.distinct || len(p.distinctOn) > 0 || p.rowLocks != nil
	out := make([]Datum, len(p.targets))
	if !buffered {
		err := scan(func() error { return x.project(ec, p, buf, out, direct) })
		if err == errLimitReached {
			return nil
		}
		return err
	}

	type outRow struct {
		out   []Datum
		keys  []Datum
		level []Datum // the level row, for FOR UPDATE
	}
	var results []outRow
	deferred := p.postponedTargets()
	collect := func(row []Datum) error {
		project := func(ec *evalCtx, row, out []Datum, fn func([]Datum) error) error {
			return x.project(ec, p, row, out, fn)
		}
		if deferred != nil {
			project = func(ec *evalCtx, row, out []Datum, fn func([]Datum) error) error {
				return x.projectSome(ec, p, row, out, deferred, false, fn)
			}
		}
		return project(ec, row, out, func(o []Datum) error {
			r := outRow{out: append([]Datum(nil), o...)}
			if deferred != nil {
				r.level = append([]Datum(nil), row...)
			}
			if len(p.sort) > 0 || len(p.distinctOn) > 0 {
				prevOut := ec.outVals
				ec.outVals = r.out
				for _, k := range p.sort {
					v, err := k.e.eval(ec, row)
					if err != nil {
						return err
					}
					r.keys = append(r.keys, v)
				}
				for _, d := range p.distinctOn {
					v, err := d.eval(ec, row)
					if err != nil {
						return err
					}
					r.keys = append(r.keys, v)
				}
				ec.outVals = prevOut
			}
			if p.rowLocks != nil {
				r.level = append([]Datum(nil), row...)
			}
			results = append(results, r)
			return nil
		})
	}
	if p.grouped {
		if err := x.runGroups(ec, p, scan, buf, collect); err != nil {
			return err
		}
	} else if err := scan(func() error { return collect(buf) }); err != nil {
		return err
	}
	if p.distinct {
		seen := map[string]bool{}
		kept := results[:0]
		for _, r := range results {
			key := rowKey(r.out, p.cols)
			if !seen[key] {
				seen[key] = true
				kept = append(kept, r)
			}
		}
		results = kept
	}
	if len(p.sort) > 0 {
		var sortErr error
		sort.SliceStable(results, func(i, j int) bool {
			c, err := compareKeys(p.sort, results[i].keys, results[j].keys)
			if err != nil {
				sortErr = err
			}
			return c < 0
		})
		if sortErr != nil {
			return sortErr
		}
	}
	if len(p.distinctOn) > 0 {
		n := len(p.sort)
		keyCols := make([]Column, len(p.distinctOn))
		for i, d := range p.distinctOn {
			keyCols[i] = Column{Type: d.typ()}
		}
		kept := results[:0]
		prev := ""
		for i, r := range results {
			key := rowKey(r.keys[n:], keyCols)
			if i == 0 || key != prev {
				kept = append(kept, r)
			}
			prev = key
		}
		results = kept
	}
	for _, r := range results {
		if limit >= 0 && emitted >= limit {
			break
		}
		if p.rowLocks != nil {
			// as PostgreSQL's LockRows sits below Limit: rows OFFSET skips
			// are locked too, rows past LIMIT are not
			ok, changed, err := x.lockRows(ec, p.rowLocks, r.level)
			if err != nil {
				return err
			}
			if !ok {
				continue // SKIP LOCKED, or the row is gone or no longer qualifies
			}
			if changed {
				if err := x.project(ec, p, r.level, r.out, func([]Datum) error { return nil }); err != nil {
					return err
				}
			}
		}
		if deferred != nil { // computed as the rows leave the sort (and OFFSET skips them after)
			if err := x.projectSome(ec, p, r.level, r.out, deferred, true, func([]Datum) error { return nil }); err != nil {
				return err
			}
		}
		if skipped < offset {
			skipped++
			continue
		}
		emitted++
		if err := emit(r.out); err != nil {
			return err
		}
	}
	return nil
}

// postponedTargets are the select-list entries that a sorted query
// computes after sorting, as PostgreSQL's make_sort_input_target does:
// those calling volatile functions (nextval: the values then follow the
// ORDER BY, and a LIMIT stops them) that no sort key reads. nil: none, or
// the query is not a plain sorted one.
func (p *selectPlan) postponedTargets() []bool {
	if len(p.sort) == 0 || p.grouped || p.distinct || len(p.distinctOn) > 0 || p.srf || p.rowLocks != nil {
		return nil
	}
	var out []bool
	for i, t := range p.targets {
		if !exprVolatile(t) {
			continue
		}
		read := false
		for _, k := range p.sort {
			read = read || readsOutput(k.e, i)
		}
		if !read {
			if out == nil {
				out = make([]bool, len(p.targets))
			}
			out[i] = true
		}
	}
	return out
}

// projectSome computes the targets marked in which (or, with which
// false, the others), leaving the rest of out alone.
func (x *Executor) projectSome(ec *evalCtx, p *selectPlan, row, out []Datum, which []bool, marked bool, fn func([]Datum) error) error {
	for i, t := range p.targets {
		if which[i] != marked {
			continue
		}
		v, err := t.eval(ec, row)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return fn(out)
}

// exprVolatile reports whether e calls a volatile function at this
// query level.
func exprVolatile(e expr) bool {
	if f, ok := e.(*funcExpr); ok && f.volatile {
		return true
	}
	for _, c := range exprChildren(e) {
		if exprVolatile(*c) {
			return true
		}
	}
	return false
}

// readsOutput reports whether e reads output column i (ORDER BY 1).
func readsOutput(e expr, i int) bool {
	if o, ok := e.(*outputRef); ok && o.i == i {
		return true
	}
	for _, c := range exprChildren(e) {
		if readsOutput(*c, i) {
			return true
		}
	}
	return false
}

// rowKey encodes a row for DISTINCT.
func rowKey(vals []Datum, cols []Column) string {
	var key []byte
	for i, v := range vals {
		if v.Null {
			key = append(key, 0)
			continue
		}
		key = appendHashKey(append(key, 1), cols[i].Type, v)
	}
	return string(key)
}

// project computes the output row(s) for one input row: one row, or,
// when the select list calls set-returning functions, one per value of
// the longest set, the shorter ones padded with NULLs (ProjectSet).
func (x *Executor) project(ec *evalCtx, p *selectPlan, row, out []Datum, fn func([]Datum) error) error {
	if !p.srf {
		for i, t := range p.targets {
			v, err := t.eval(ec, row)
			if err != nil {
				return err
			}
			out[i] = v
		}
		return fn(out)
	}
	var srfs []*srfExpr
	for _, t := range p.targets {
		srfs = append(srfs, srfsIn(t)...)
	}
	sets := make([][]Datum, len(srfs))
	longest := 0
	for i, f := range srfs {
		if err := f.each(ec, row, func(d Datum) error {
			sets[i] = append(sets[i], d)
			return nil
		}); err != nil {
			return err
		}
		if len(sets[i]) > longest {
			longest = len(sets[i])
		}
	}
	defer func() {
		for _, f := range srfs {
			f.active = false
		}
	}()
	for k := 0; k < longest; k++ {
		for i, f := range srfs {
			f.active = true
			f.cur = NullDatum
			if k < len(sets[i]) {
				f.cur = sets[i][k]
			}
		}
		for i, t := range p.targets {
			v, err := t.eval(ec, row)
			if err != nil {
				return err
			}
			out[i] = v
		}
		if err := fn(out); err != nil {
			return err
		}
	}
	return nil
}

// runGroups aggregates the scanned rows by the GROUP BY values and calls
// fn with each group's representative row, with ec.aggVals and
// ec.groupVals set for it.
func (x *Executor) runGroups(ec *evalCtx, p *selectPlan, scan func(func() error) error, buf []Datum, fn func(row []Datum) error) error {
	type group struct {
		first  []Datum
		vals   []Datum
		states []aggState
	}
	var order []*group
	groups := map[string]*group{}
	vals := make([]Datum, len(p.groupBy))
	var key []byte
	err := scan(func() error {
		key = key[:0]
		for i, g := range p.groupBy {
			v, err := g.eval(ec, buf)
			if err != nil {
				return err
			}
			vals[i] = v
			if v.Null {
				key = append(key, 0)
			} else {
				key = appendHashKey(append(key, 1), g.typ(), v)
			}
		}
		gr := groups[string(key)]
		if gr == nil {
			gr = &group{first: append([]Datum(nil), buf...), vals: append([]Datum(nil), vals...), states: make([]aggState, len(p.aggs))}
			for i, r := range p.aggs {
				gr.states[i].ref = r
			}
			groups[string(key)] = gr
			order = append(order, gr)
		}
		for i := range gr.states {
			if err := gr.states[i].add(ec, buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(p.groupBy) == 0 && len(order) == 0 {
		gr := &group{first: make([]Datum, len(buf)), states: make([]aggState, len(p.aggs))}
		for i := range gr.first {
			gr.first[i] = NullDatum
		}
		for i, r := range p.aggs {
			gr.states[i].ref = r
		}
		order = append(order, gr)
	}
	// A subquery evaluated inside this query's projection runs on the
	// same evalCtx: put back what the enclosing level had.
	prevAggs, prevGroups := ec.aggVals, ec.groupVals
	defer func() { ec.aggVals, ec.groupVals = prevAggs, prevGroups }()
	for _, gr := range order {
		av := make([]Datum, len(gr.states))
		for i := range gr.states {
			v, err := gr.states[i].result()
			if err != nil {
				return err
			}
			av[i] = v
		}
		ec.aggVals, ec.groupVals = av, gr.vals
		if p.having != nil {
			h, err := p.having.eval(ec, gr.first)
			if err != nil {
				return err
			}
			if h.Null || h.I == 0 {
				continue
			}
		}
		if err := fn(gr.first); err != nil {
			return err
		}
	}
	return nil
}
