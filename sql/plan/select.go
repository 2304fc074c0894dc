package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// selectPlan is a compiled query: one level's FROM tree, filters,
// grouping, projection, ordering and limits. Set operations and VALUES
// lists are plans whose FROM is a single source producing their rows.
type SelectPlan struct {
	Cols []types.Column
	Rels []expr.RelLock // relation locks to take at each execution
	// correlated: the plan reads an enclosing query's row, so as a
	// subquery it is re-run for every outer row.
	Correlated bool

	From       PlanNode
	Width      int
	OneTime    []expr.Expr // conditions over no FROM item, checked once per run
	Targets    []expr.Expr
	locs       []int32 // where each target stands in the query (-1: nowhere)
	Srf        bool    // some target is a set-returning function
	Grouped    bool
	GroupBy    []expr.Expr
	Having     expr.Expr
	Aggs       []*expr.AggRef
	Sort       []expr.SortKey
	Distinct   bool
	DistinctOn []expr.Expr
	Limit      expr.Expr
	Offset     expr.Expr
	RowLocks   *RowLocking // FOR UPDATE / FOR SHARE

	// GroupSorted: the input arrives in group order and each group is
	// aggregated as it ends (GroupAggregate, groupagg.go); GroupRows is
	// the planner's estimate of the groups. GroupSortInput: the input is
	// sorted on GroupSortKeys (descending when GroupSortDesc, NULLs then
	// first) before it is grouped.
	GroupSorted    bool
	GroupRows      float64
	GroupSortInput bool
	GroupSortKeys  []expr.Expr
	GroupSortDesc  bool
	// DistinctRows is the planner's estimate of the rows DISTINCT [ON]
	// keeps of an ungrouped query (0: not estimated)
	DistinctRows float64

	// params are what a correlated subquery reads of the rows around it
	// (see expr.SublinkExpr.Params); paramsKnown when that is all its
	// result depends on
	params      []expr.Expr
	paramsKnown bool
}

// OuterParams returns the subquery's outer references (expr.ParamSubplan).
func (p *SelectPlan) OuterParams() ([]expr.Expr, bool) { return p.params, p.paramsKnown }

// outputRef reads an already-computed output column (ORDER BY 1 / alias).
type outputRef struct {
	i int
	t types.Type
}

func (o *outputRef) Type() types.Type { return o.t }
func (o *outputRef) Eval(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
	return ec.OutVals[o.i], nil
}

var ErrLimitReached = pgerr.New(pgerr.InternalError, "limit reached")

// compileQuery compiles a query whose enclosing level is a.parentSc.
func compileQuery(a *analyze.Analyzer, sel *pg.SelectStmt) (*SelectPlan, error) {
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
	if rv, aggs, ok := analyze.MinMaxQuery(sel); ok && minMaxByIndex(a, rv, aggs) {
		sel = analyze.RewriteMinMax(sel, aggs) // ordered.go
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
func compileSubquery(a *analyze.Analyzer, sel *pg.SelectStmt) (*SelectPlan, error) {
	return compileQuery(a.ChildWith(a.Sc), sel)
}

func compileSimple(a *analyze.Analyzer, sel *pg.SelectStmt) (*SelectPlan, error) {
	sc := analyze.NewScope(a.ParentSc)
	sc.Hidden = a.HiddenSc
	la := a.Level(sc)
	fb := &fromBuilder{a: la, sc: sc, sel: sel, lock: a.InheritLock}
	root, err := fb.Build(sel.FromClause)
	if err != nil {
		return nil, err
	}
	p := &SelectPlan{From: root}

	var where []expr.Expr
	if sel.WhereClause != nil {
		wa := la.NoAggs("WHERE")
		if fb.canPullUp() {
			wa.SublinkHook = fb.pullUpHook(sel.WhereClause, nil, nil) // semijoin.go
		}
		w, err := wa.Expr(sel.WhereClause)
		if err != nil {
			return nil, err
		}
		if w, err = wa.AsBool(w, "WHERE", -1); err != nil {
			return nil, err
		}
		where = dropPulled(conjuncts(w))
	}

	var aggs []*expr.AggRef
	la.Aggs = &aggs
	la.AllowSRF = true
	la.AggCtx = "SELECT"
	if err := targetList(la, fb, sel.TargetList, p); err != nil {
		return nil, err
	}
	la.AllowSRF = false

	ga := la.NoAggs("GROUP BY")
	for _, g := range sel.GroupClause {
		e, err := groupExpr(ga, g, sel.TargetList, p)
		if err != nil {
			return nil, err
		}
		p.GroupBy = append(p.GroupBy, e)
	}
	la.AggCtx = ""
	if sel.HavingClause != nil {
		h, err := la.Expr(sel.HavingClause)
		if err != nil {
			return nil, err
		}
		if p.Having, err = la.AsBool(h, "HAVING", -1); err != nil {
			return nil, err
		}
	}
	for _, sb := range sel.SortClause {
		k, err := compileSortKey(la, sb.GetSortBy(), p)
		if err != nil {
			return nil, err
		}
		p.Sort = append(p.Sort, k)
	}
	if len(sel.DistinctClause) > 0 {
		if err := distinctClause(la, sel.DistinctClause, p); err != nil {
			return nil, err
		}
	}
	if err := limits(la.NoAggs("LIMIT"), sel, p); err != nil {
		return nil, err
	}
	p.Aggs = aggs
	if len(aggs) > 0 || len(p.GroupBy) > 0 || p.Having != nil {
		p.Grouped = true
		if err := checkGrouping(la, fb, p); err != nil {
			return nil, err
		}
	}
	if len(sel.LockingClause) > 0 || a.InheritLock != nil {
		if err := rowLockClause(la, sel, p, fb, a.InheritLock, root, where); err != nil {
			return nil, err
		}
	}
	// what the query reads, with the ON conditions and those of the semi
	// and anti joins pulled up from its WHERE clause (they read their own
	// items' columns)
	read := append([]expr.Expr(nil), where...)
	for _, on := range fb.ons {
		read = append(read, on.e)
	}
	for _, s := range fb.semis {
		read = append(append(read, s.conds...), s.local...)
	}
	if need, all := readColumns(fb, p, read); !all {
		presetNeed(fb, need) // indexonly.go
	}
	if p.RowLocks == nil {
		root, where = fb.reorder(root, where) // joinorder.go
		root = fb.insertSemis(root)           // semiplan.go
		p.From = root
	}
	fb.query = p // for the order a merge join gives (mergejoin.go)
	if p.OneTime, err = fb.place(root, where); err != nil {
		return nil, err
	}
	fb.chooseGroupAgg(p) // groupagg.go
	fb.estimateDistinct(p)
	mergeOrder(p) // mergejoin.go
	orderByIndex(la.S, p)
	limitDecoding(fb, p)
	fb.markPlanOnly()
	p.Width = sc.Width
	p.Rels = fb.rels
	p.Correlated = sc.Correlated
	return p, nil
}

// targetList compiles the select list, expanding * and t.*.
func targetList(a *analyze.Analyzer, fb *fromBuilder, list []*pg.Node, p *SelectPlan) error {
	for _, t := range list {
		rt := t.GetResTarget()
		if cr := analyze.StarRef(rt.Val); cr != nil {
			var cols []analyze.NsColumn
			if len(cr.Fields) == 1 {
				if a.Sc.Width == 0 && len(a.Sc.Rels) == 0 {
					return expr.PosErr(pgerr.New(pgerr.SyntaxError, "SELECT * with no tables specified is not valid"), cr.Location)
				}
				cols = a.Sc.Star
			} else {
				q := analyze.NodeName(cr.Fields[len(cr.Fields)-2])
				rel := a.Sc.RelByAlias(q)
				if rel == nil {
					return expr.PosErr(pgerr.New(pgerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", q), cr.Location)
				}
				cols = rel.Cols[:rel.Star]
			}
			for _, c := range cols {
				p.Targets = append(p.Targets, c.E)
				p.locs = append(p.locs, cr.Location)
				meta := c.Meta
				if meta.Attnum < 0 {
					meta.TableOID, meta.Attnum = 0, 0
				}
				p.Cols = append(p.Cols, meta)
			}
			continue
		}
		e, err := a.Expr(rt.Val)
		if err != nil {
			return err
		}
		if e, err = a.ResolveOutput(e); err != nil {
			return err
		}
		if len(expr.SrfsIn(e)) > 0 {
			p.Srf = true
		}
		name := rt.Name
		if name == "" {
			name = analyze.OutputName(rt.Val)
		}
		col := types.Column{Name: name, Type: e.Type()}
		if ce, ok := e.(*expr.ColExpr); ok && fb != nil && ce.I < len(fb.posMeta()) {
			if m := fb.posMeta()[ce.I]; m.Attnum > 0 {
				col.TableOID, col.Attnum = m.TableOID, m.Attnum
			}
		}
		p.Targets = append(p.Targets, e)
		p.locs = append(p.locs, analyze.ExprLocation(rt.Val))
		p.Cols = append(p.Cols, col)
	}
	return nil
}

// posMeta returns the column metadata of each level-row position.
func (fb *fromBuilder) posMeta() []types.Column {
	out := make([]types.Column, 0, fb.sc.Width)
	for _, l := range fb.leaves {
		out = append(out, l.Src.columns()...)
	}
	return out
}

// groupExpr resolves a GROUP BY item: an output position, an input
// expression, or (failing that) an output column name, as PostgreSQL's
// SQL99 rule has it.
func groupExpr(a *analyze.Analyzer, n *pg.Node, targets []*pg.Node, p *SelectPlan) (expr.Expr, error) {
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
			i := int(iv.Ival.Ival)
			if i < 1 || i > len(p.Targets) {
				return nil, expr.PosErr(pgerr.New(pgerr.InvalidColumnReference, "GROUP BY position %d is not in select list", i), c.Location)
			}
			if _, ok := p.Targets[i-1].(*expr.AggResult); ok {
				return nil, expr.PosErr(pgerr.New(pgerr.GroupingError, "aggregate functions are not allowed in GROUP BY"), c.Location)
			}
			return p.Targets[i-1], nil
		}
	}
	if name, loc, ok := analyze.BareColumnName(n); ok {
		if _, _, _, err := a.Sc.LookupColumn("", name, loc); err != nil {
			for i, c := range p.Cols {
				if c.Name == name {
					return p.Targets[i], nil
				}
			}
		}
	}
	return a.Expr(n)
}

// sortKey resolves an ORDER BY item: an output position, an output
// column name (which wins over an input column, as SQL92 says), or an
// expression over the input.
func compileSortKey(a *analyze.Analyzer, by *pg.SortBy, p *SelectPlan) (expr.SortKey, error) {
	if by.UseOp != nil {
		return expr.SortKey{}, pgerr.NotSupported("ORDER BY ... USING is not supported")
	}
	e, err := sortExpr(a, by.Node, p)
	if err != nil {
		return expr.SortKey{}, err
	}
	if analyze.IsUnknown(e) {
		if e, err = a.CoerceUnknown(e, types.TypeText); err != nil {
			return expr.SortKey{}, err
		}
	}
	if types.IsArray(e.Type()) {
		return expr.SortKey{}, pgerr.NotSupported("ordering by arrays is not supported")
	}
	return expr.NewSortKey(e, by), nil
}

func sortExpr(a *analyze.Analyzer, n *pg.Node, p *SelectPlan) (expr.Expr, error) {
	if c := n.GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
			i := int(iv.Ival.Ival)
			if i < 1 || i > len(p.Targets) {
				return nil, expr.PosErr(pgerr.New(pgerr.InvalidColumnReference, "ORDER BY position %d is not in select list", i), c.Location)
			}
			return &outputRef{i: i - 1, t: p.Cols[i-1].Type}, nil
		}
	}
	if name, loc, ok := analyze.BareColumnName(n); ok {
		match := -1
		for i, c := range p.Cols {
			if c.Name != name {
				continue
			}
			if match >= 0 && expr.ExprKey(p.Targets[match]) != expr.ExprKey(p.Targets[i]) {
				return nil, expr.PosErr(pgerr.New(pgerr.AmbiguousColumn, "ORDER BY \"%s\" is ambiguous", name), loc)
			}
			if match < 0 {
				match = i
			}
		}
		if match >= 0 {
			return &outputRef{i: match, t: p.Cols[match].Type}, nil
		}
	}
	return a.Expr(n)
}

func distinctClause(a *analyze.Analyzer, list []*pg.Node, p *SelectPlan) error {
	if len(list) == 1 && (list[0] == nil || list[0].GetNode() == nil) {
		p.Distinct = true
		for _, k := range p.Sort {
			if _, ok := k.E.(*outputRef); ok {
				continue
			}
			key := expr.ExprKey(k.E)
			found := false
			for _, t := range p.Targets {
				if key != "" && expr.ExprKey(t) == key {
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
		p.DistinctOn = append(p.DistinctOn, e)
	}
	// PostgreSQL: the DISTINCT ON expressions must match the leftmost
	// ORDER BY expressions.
	for i, d := range p.DistinctOn {
		if i >= len(p.Sort) {
			break
		}
		if sameSortTarget(d, p.Sort[i].E, p) {
			continue
		}
		return expr.PosErr(pgerr.New(pgerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"), analyze.ExprLocation(list[i]))
	}
	return nil
}

// sameSortTarget reports whether two ORDER BY / DISTINCT ON items denote
// the same value.
func sameSortTarget(a, b expr.Expr, p *SelectPlan) bool {
	resolve := func(e expr.Expr) string {
		if o, ok := e.(*outputRef); ok {
			return expr.ExprKey(p.Targets[o.i])
		}
		return expr.ExprKey(e)
	}
	ka, kb := resolve(a), resolve(b)
	return ka != "" && ka == kb
}

func limits(a *analyze.Analyzer, sel *pg.SelectStmt, p *SelectPlan) error {
	if sel.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		return pgerr.NotSupported("FETCH ... WITH TIES is not supported")
	}
	for _, lim := range []struct {
		n   *pg.Node
		dst *expr.Expr
	}{{sel.LimitCount, &p.Limit}, {sel.LimitOffset, &p.Offset}} {
		if lim.n == nil {
			continue
		}
		e, err := a.Expr(lim.n)
		if err != nil {
			return err
		}
		if c, ok := e.(*expr.ConstExpr); ok && c.D.Null {
			continue // LIMIT NULL / LIMIT ALL
		}
		if e, err = a.CastTo(e, types.TypeInt8, false); err != nil {
			return expr.PosErr(pgerr.From(err), analyze.ExprLocation(lim.n))
		}
		*lim.dst = e
	}
	return nil
}

// checkGrouping rewrites the expressions of an aggregated query to read
// GROUP BY values, and rejects any other column of this level used
// outside an aggregate, unless the query groups by its table's primary
// key (functional dependency, as PostgreSQL allows).
func checkGrouping(a *analyze.Analyzer, fb *fromBuilder, p *SelectPlan) error {
	keys := make([]string, len(p.GroupBy))
	for i, g := range p.GroupBy {
		keys[i] = expr.ExprKey(g)
	}
	groupedCols := map[int]bool{}
	for _, g := range p.GroupBy {
		if c, ok := g.(*expr.ColExpr); ok {
			groupedCols[c.I] = true
		}
	}
	var bad *expr.ColExpr
	rewrite := func(e expr.Expr) expr.Expr {
		if e == nil {
			return nil
		}
		return expr.RewriteExpr(e, func(x expr.Expr) expr.Expr {
			if k := expr.ExprKey(x); k != "" {
				for i, gk := range keys {
					if gk == k {
						return &expr.GroupRef{Idx: i, T: x.Type()}
					}
				}
			}
			if c, ok := x.(*expr.ColExpr); ok && bad == nil && !functionallyDependent(a, fb, c.I, groupedCols) {
				bad = c
			}
			return nil
		})
	}
	for i := range p.Targets {
		p.Targets[i] = rewrite(p.Targets[i])
	}
	p.Having = rewrite(p.Having)
	for i := range p.Sort {
		p.Sort[i].E = rewrite(p.Sort[i].E)
	}
	for i := range p.DistinctOn {
		p.DistinctOn[i] = rewrite(p.DistinctOn[i])
	}
	if bad != nil {
		e := pgerr.New(pgerr.GroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", columnName(a, bad.I))
		e.Position = bad.Loc
		return e
	}
	return nil
}

// functionallyDependent reports whether level-row position pos is
// determined by the grouped positions: its table's primary key columns
// are all grouped.
func functionallyDependent(a *analyze.Analyzer, fb *fromBuilder, pos int, grouped map[int]bool) bool {
	if grouped[pos] || fb == nil {
		return grouped[pos]
	}
	for _, l := range fb.leaves {
		if pos < l.Off || pos >= l.Off+l.N {
			continue
		}
		ts, ok := l.Src.(*TableSource)
		if !ok {
			return false
		}
		for _, ix := range a.S.Cat().TableIndexes(ts.T) {
			if !ix.Primary {
				continue
			}
			for _, c := range ix.Cols {
				if !grouped[l.Off+c] {
					return false
				}
			}
			return true
		}
	}
	return false
}

// columnName names a level-row position as alias.column for messages.
func columnName(a *analyze.Analyzer, pos int) string {
	for _, r := range a.Sc.Rels {
		for _, c := range r.Cols {
			if ce, ok := c.E.(*expr.ColExpr); ok && ce.I == pos {
				if r.Alias == "" {
					return c.Name
				}
				return r.Alias + "." + c.Name
			}
		}
	}
	return "?"
}

// postponedTargets are the select-list entries that a sorted query
// computes after sorting, as PostgreSQL's make_sort_input_target does:
// those calling volatile functions (nextval: the values then follow the
// ORDER BY, and a LIMIT stops them) that no sort key reads. nil: none, or
// the query is not a plain sorted one.
func (p *SelectPlan) PostponedTargets() []bool {
	if len(p.Sort) == 0 || p.Grouped || p.Distinct || len(p.DistinctOn) > 0 || p.Srf || p.RowLocks != nil {
		return nil
	}
	var out []bool
	for i, t := range p.Targets {
		if !exprVolatile(t) {
			continue
		}
		read := false
		for _, k := range p.Sort {
			read = read || readsOutput(k.E, i)
		}
		if !read {
			if out == nil {
				out = make([]bool, len(p.Targets))
			}
			out[i] = true
		}
	}
	return out
}

// exprVolatile reports whether e calls a volatile function at this
// query level.
func exprVolatile(e expr.Expr) bool {
	if f, ok := e.(*expr.FuncExpr); ok && f.Volatile {
		return true
	}
	for _, c := range expr.ExprChildren(e) {
		if exprVolatile(*c) {
			return true
		}
	}
	return false
}

// readsOutput reports whether e reads output column i (ORDER BY 1).
func readsOutput(e expr.Expr, i int) bool {
	if o, ok := e.(*outputRef); ok && o.i == i {
		return true
	}
	for _, c := range expr.ExprChildren(e) {
		if readsOutput(*c, i) {
			return true
		}
	}
	return false
}

// rowKey encodes a row for DISTINCT.
func RowKey(vals []types.Datum, cols []types.Column) string {
	var key []byte
	for i, v := range vals {
		if v.Null {
			key = append(key, 0)
			continue
		}
		key = types.AppendHashKey(append(key, 1), cols[i].Type, v)
	}
	return string(key)
}

func (*SelectPlan) IsSubplan() {}
