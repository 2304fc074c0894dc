package plan

import (
	"math"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// The FROM clause: items (tables, views, subqueries, functions) and the
// joins between them, compiled into a plan tree over one level row; then
// WHERE and ON conditions pushed as far down as their semantics allow and
// each join given its method (index nested loop, hash join, nested loop).

// maxFromItems bounds the FROM items of one query level (the planner
// keeps item sets in a 64-bit mask; a partitioned table is one item).
const maxFromItems = 64

type fromBuilder struct {
	a      *analyze.Analyzer // the level's analyzer; a.sc is the level scope
	sel    *pg.SelectStmt    // the query, for its locking clause (nil: none)
	lock   *analyze.LockSpec // the locking clause this query inherited
	sc     *analyze.Scope
	nitems int
	itemOf []int // level-row position → item
	leaves []*LeafNode
	deps   []uint64 // per item: the items its scan reads (LATERAL, index keys)
	rels   []expr.RelLock
	ons    []onCond // ON conditions, placed after WHERE is known
	// planning by cost (estimate.go)
	keepSides  bool       // hash joins hash their right side (UPDATE/DELETE ... FROM read the target's side in order)
	orderConds []joinCond // the conditions join order search weighs (joinorder.go)
	cost       *costs
	infos      map[int]*relInfo // by item
	// subqueries pulled up into semi and anti joins (semijoin.go), and
	// the inner joins whose ON clauses may hold such
	semis     []*semiJoin
	innerPath map[*pg.JoinExpr]bool
	query     *SelectPlan // the query whose FROM clause this is, once placed
}

type onCond struct {
	j *JoinNode
	e expr.Expr
}

// build compiles a FROM list (comma-separated items are cross joins).
func (fb *fromBuilder) Build(from []*pg.Node) (PlanNode, error) {
	if fb.canPullUp() {
		for _, n := range from {
			fb.markInnerPath(n)
		}
	}
	var root PlanNode
	for _, n := range from {
		node, err := fb.item(n)
		if err != nil {
			return nil, err
		}
		if root == nil {
			root = node
		} else {
			root = &JoinNode{Kind: JoinInner, Left: root, Right: node}
		}
	}
	return root, nil
}

func (fb *fromBuilder) item(n *pg.Node) (PlanNode, error) {
	switch {
	case n.GetRangeVar() != nil:
		return fb.relation(n.GetRangeVar())
	case n.GetRangeSubselect() != nil:
		return fb.subselect(n.GetRangeSubselect())
	case n.GetRangeFunction() != nil:
		return fb.function(n.GetRangeFunction())
	case n.GetJoinExpr() != nil:
		return fb.join(n.GetJoinExpr())
	}
	return nil, pgerr.NotSupported("this kind of FROM item (%s) is not supported", analyze.NodeKind(n))
}

// addLeaf places a source's columns in the level row and its names in
// the scope. nstar is how many leading columns * expands to.
func (fb *fromBuilder) addLeaf(src RowSource, alias string, aliases []*pg.Node, nstar int, table *catalog.TableDef, loc int32) (*LeafNode, error) {
	if fb.nitems >= maxFromItems {
		return nil, pgerr.New(pgerr.ProgramLimitExceeded, "too many FROM items (at most %d per query level)", maxFromItems)
	}
	sc := fb.sc
	for _, r := range sc.Rels {
		if r.Alias == alias && alias != "" {
			return nil, pgerr.New(pgerr.DuplicateAlias, "table name \"%s\" specified more than once", alias)
		}
	}
	cols := src.columns()
	if len(aliases) > nstar {
		return nil, pgerr.New(pgerr.InvalidColumnReference, "table \"%s\" has %d columns available but %d columns specified", alias, nstar, len(aliases))
	}
	item := fb.nitems
	fb.nitems++
	off := sc.Width
	sc.Width += len(cols)
	rel := &analyze.NsRel{Alias: alias, Star: nstar, Item: item, Table: table}
	for j, c := range cols {
		name := c.Name
		if j < len(aliases) {
			name = analyze.NodeName(aliases[j])
		}
		meta := c
		meta.Name = name
		col := analyze.NsColumn{Name: name, E: &expr.ColExpr{I: off + j, T: c.Type}, Meta: meta, Item: item}
		rel.Cols = append(rel.Cols, col)
		sc.Unqual = append(sc.Unqual, col)
		if j < nstar {
			sc.Star = append(sc.Star, col)
		}
		fb.itemOf = append(fb.itemOf, item)
	}
	sc.Rels = append(sc.Rels, rel)
	leaf := &LeafNode{item: item, Src: src, Off: off, N: len(cols)}
	fb.leaves = append(fb.leaves, leaf)
	fb.deps = append(fb.deps, 0)
	return leaf, nil
}

func (fb *fromBuilder) relation(rv *pg.RangeVar) (PlanNode, error) {
	s := fb.a.S
	alias := rv.Relname
	var aliases []*pg.Node
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
		aliases = rv.Alias.Colnames
	}
	if rv.Schemaname == "" {
		if def := fb.a.Ctes.Lookup(rv.Relname); def != nil {
			self := def.Recursive && def.Step == nil
			if cteCorrelated(def) {
				// it reads an enclosing query's row, so this query does
				// too; and it is rerun for each row it is read for: a
				// subquery reading it depends on more than its own outer
				// references
				fb.sc.Correlated = true
				fb.sc.Record(analyze.OuterRef{})
			}
			return fb.addLeaf(&CteSource{Def: def, alias: alias, Self: self}, alias, aliases, len(def.Cols), nil, rv.Location)
		}
	}
	if v, ok := s.LookupView(rv); ok {
		return fb.addLeaf(&ViewSource{V: v, s: s, alias: alias}, alias, aliases, len(v.Cols), nil, rv.Location)
	}
	if q := s.RangeSequence(rv); q != nil { // sql/expr/catalogview.go
		return fb.sequenceLeaf(q, alias, aliases, rv.Location)
	}
	t, err := s.ResolveTable(rv)
	if err != nil {
		return nil, err
	}
	if t.Partitioned() {
		// locked at plan time: the parent; the partitions that survive
		// pruning are locked at each execution (partitions.go)
		ps := newPartitionedSource(t, alias, locks.AccessShareLock)
		ps.Only = !rv.Inh
		fb.rels = append(fb.rels, ps.relLocks()...)
		return fb.addLeaf(ps, alias, aliases, len(t.Cols), t, rv.Location)
	}
	ts := NewTableSource(t, alias)
	fb.rels = append(fb.rels, tableLocks(s.Cat(), t, locks.AccessShareLock)...)
	return fb.addLeaf(ts, alias, aliases, len(t.Cols), t, rv.Location)
}

func (fb *fromBuilder) subselect(rs *pg.RangeSubselect) (PlanNode, error) {
	sel := rs.Subquery.GetSelectStmt()
	if sel == nil {
		return nil, pgerr.NotSupported("this kind of subquery in FROM is not supported")
	}
	if rs.Alias == nil {
		return nil, pgerr.New(pgerr.SyntaxError, "subquery in FROM must have an alias").
			WithHint("For example, FROM (SELECT ...) [AS] foo.")
	}
	parent := fb.sc.Parent
	if rs.Lateral {
		parent = fb.sc
		saved := fb.sc.VisHi
		fb.sc.VisHi = fb.nitems
		defer func() { fb.sc.VisHi = saved }()
	}
	sa := fb.a.ChildWith(parent)
	if !rs.Lateral {
		sa.HiddenSc = fb.sc
	}
	if fb.sel != nil {
		sa.InheritLock = subLock(fb.sel, fb.lock, rs.Alias.Aliasname)
	}
	sub, err := compileQuery(sa, sel)
	if err != nil {
		return nil, err
	}
	src := &SubquerySource{alias: rs.Alias.Aliasname, Plan: sub}
	for _, c := range sub.Cols {
		c.TableOID, c.Attnum = 0, 0
		src.cols = append(src.cols, c)
	}
	fb.rels = append(fb.rels, sub.Rels...)
	leaf, err := fb.addLeaf(src, rs.Alias.Aliasname, rs.Alias.Colnames, len(src.cols), nil, -1)
	if err != nil {
		return nil, err
	}
	if rs.Lateral && sub.Correlated {
		leaf.Lateral = true
		fb.deps[leaf.item] = 1<<uint(leaf.item) - 1 // any earlier item
	} else if sub.Correlated {
		// it reads a row of a query around this one: so does this one
		fb.sc.Correlated = true
	}
	return leaf, nil
}

func (fb *fromBuilder) function(rf *pg.RangeFunction) (PlanNode, error) {
	la := fb.a.Level(fb.sc)
	la.AggCtx = "functions in FROM"
	saved := fb.sc.VisHi
	fb.sc.VisHi = fb.nitems
	f, err := functionItem(la, rf)
	fb.sc.VisHi = saved
	if err != nil {
		return nil, err
	}
	var argMask uint64
	var args []expr.Expr
	if f.Srf != nil {
		args = f.Srf.Args
	} else {
		args = []expr.Expr{f.Scalar}
	}
	for _, e := range args {
		m, opaque := expr.ExprRefs(e, fb.itemOf)
		if opaque {
			m = 1<<uint(fb.nitems) - 1
		}
		argMask |= m
	}
	f.level = argMask != 0
	var aliases []*pg.Node
	if rf.Alias != nil {
		aliases = rf.Alias.Colnames
	}
	leaf, err := fb.addLeaf(f, f.alias, aliases, len(f.Cols), nil, -1)
	if err != nil {
		return nil, err
	}
	fb.deps[leaf.item] = argMask
	return leaf, nil
}

func (fb *fromBuilder) join(je *pg.JoinExpr) (PlanNode, error) {
	sc := fb.sc
	firstItem := fb.nitems
	startUnqual, startStar, startRels := len(sc.Unqual), len(sc.Star), len(sc.Rels)
	left, err := fb.item(je.Larg)
	if err != nil {
		return nil, err
	}
	leftUnqual, leftStar := len(sc.Unqual), len(sc.Star)
	right, err := fb.item(je.Rarg)
	if err != nil {
		return nil, err
	}
	j := &JoinNode{Left: left, Right: right}
	switch je.Jointype {
	case pg.JoinType_JOIN_INNER:
		j.Kind = JoinInner
	case pg.JoinType_JOIN_LEFT:
		j.Kind = JoinLeft
	case pg.JoinType_JOIN_RIGHT:
		j.Kind = JoinRight
	case pg.JoinType_JOIN_FULL:
		j.Kind = JoinFull
	default:
		return nil, pgerr.NotSupported("join type %s is not supported", je.Jointype.String())
	}
	// ON and USING see only the items of this join.
	savedLo, savedHi := sc.VisLo, sc.VisHi
	sc.VisLo, sc.VisHi = firstItem, fb.nitems
	defer func() { sc.VisLo, sc.VisHi = savedLo, savedHi }()
	la := fb.a.Level(sc)
	la.AggCtx = "JOIN conditions"

	var using []string
	if je.IsNatural {
		// common column names of the two sides, in the left side's order
		rightNames := map[string]bool{}
		for _, c := range sc.Star[leftStar:] {
			rightNames[c.Name] = true
		}
		for _, c := range sc.Star[startStar:leftStar] {
			if rightNames[c.Name] {
				using = append(using, c.Name)
			}
		}
	}
	for _, u := range je.UsingClause {
		using = append(using, analyze.NodeName(u))
	}
	if je.IsNatural || len(je.UsingClause) > 0 {
		leftCols := append([]analyze.NsColumn(nil), sc.Unqual[startUnqual:leftUnqual]...)
		rightCols := append([]analyze.NsColumn(nil), sc.Unqual[leftUnqual:]...)
		leftStarCols := append([]analyze.NsColumn(nil), sc.Star[startStar:leftStar]...)
		rightStarCols := append([]analyze.NsColumn(nil), sc.Star[leftStar:]...)
		var merged []analyze.NsColumn
		isUsing := map[string]bool{}
		for _, name := range using {
			if isUsing[name] {
				return nil, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" appears more than once in USING clause", name)
			}
			isUsing[name] = true
			lc, err := findOne(leftCols, name, "left")
			if err != nil {
				return nil, err
			}
			rc, err := findOne(rightCols, name, "right")
			if err != nil {
				return nil, err
			}
			eq, err := la.Binop("=", lc.E, rc.E, -1)
			if err != nil {
				return nil, err
			}
			fb.ons = append(fb.ons, onCond{j, eq})
			col := analyze.NsColumn{Name: name, Item: -1, Meta: types.Column{Name: name}}
			switch j.Kind {
			case JoinRight:
				col.E, col.Meta.Type = rc.E, rc.E.Type()
			case JoinFull:
				items, t, err := la.Unify([]expr.Expr{lc.E, rc.E}, "JOIN/USING", -1)
				if err != nil {
					return nil, err
				}
				col.E, col.Meta.Type = &expr.CoalesceExpr{T: t, Args: items}, t
			default:
				col.E, col.Meta = lc.E, lc.Meta
			}
			merged = append(merged, col)
		}
		without := func(cs []analyze.NsColumn) []analyze.NsColumn {
			var out []analyze.NsColumn
			for _, c := range cs {
				if !isUsing[c.Name] {
					out = append(out, c)
				}
			}
			return out
		}
		sc.Unqual = append(append(append(sc.Unqual[:startUnqual], merged...), without(leftCols)...), without(rightCols)...)
		sc.Star = append(append(append(sc.Star[:startStar], merged...), without(leftStarCols)...), without(rightStarCols)...)
	}
	if je.Quals != nil {
		if je.IsNatural || len(je.UsingClause) > 0 {
			return nil, pgerr.New(pgerr.SyntaxError, "syntax error: JOIN with both USING and ON")
		}
		if j.Kind == JoinInner && fb.innerPath[je] {
			la.SublinkHook = fb.pullUpHook(je.Quals, nil, j) // semijoin.go
		}
		q, err := la.Expr(je.Quals)
		if err != nil {
			return nil, err
		}
		if q, err = la.AsBool(q, "JOIN/ON", -1); err != nil {
			return nil, err
		}
		for _, c := range dropPulled(conjuncts(q)) {
			fb.ons = append(fb.ons, onCond{j, c})
		}
	}
	if je.Alias != nil {
		// A join alias hides the names inside the join.
		rel := &analyze.NsRel{Alias: je.Alias.Aliasname, Item: -1}
		for i, c := range sc.Star[startStar:] {
			if i < len(je.Alias.Colnames) {
				c.Name = analyze.NodeName(je.Alias.Colnames[i])
				c.Meta.Name = c.Name
			}
			c.Item = -1
			rel.Cols = append(rel.Cols, c)
		}
		rel.Star = len(rel.Cols)
		for _, r := range sc.Rels[startRels:] {
			r.Alias = ""
		}
		sc.Rels = append(sc.Rels, rel)
		sc.Unqual = append(sc.Unqual[:startUnqual], rel.Cols...)
		sc.Star = append(sc.Star[:startStar], rel.Cols...)
	}
	return j, nil
}

func findOne(cols []analyze.NsColumn, name, side string) (analyze.NsColumn, error) {
	var found *analyze.NsColumn
	for i := range cols {
		if cols[i].Name == name {
			if found != nil {
				return analyze.NsColumn{}, pgerr.New(pgerr.AmbiguousColumn, "common column name \"%s\" appears more than once in %s table", name, side)
			}
			found = &cols[i]
		}
	}
	if found == nil {
		return analyze.NsColumn{}, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", name, side)
	}
	return *found, nil
}

// conjuncts splits an AND tree.
func conjuncts(e expr.Expr) []expr.Expr {
	if b, ok := e.(*expr.BoolExpr); ok && b.Op == expr.BoolAnd {
		var out []expr.Expr
		for _, a := range b.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []expr.Expr{e}
}

// placeFilters distributes the WHERE conjuncts and ON conditions over the
// tree, returns the conjuncts to evaluate once per execution (they read
// no FROM item), and chooses each join's method.
func (fb *fromBuilder) place(root PlanNode, where []expr.Expr) (oneTime []expr.Expr, err error) {
	// the query's own items: not those of its pulled-up subqueries, which
	// its conditions cannot read (semijoin.go)
	all := (uint64(1)<<uint(fb.nitems) - 1) &^ fb.semiItems()
	for _, c := range where {
		m, opaque := expr.ExprRefs(c, fb.itemOf)
		switch {
		case opaque:
			m = all
		case m == 0 && !expr.IsVolatile(c):
			oneTime = append(oneTime, c)
			continue
		case m == 0:
			m = all
		}
		if root == nil {
			oneTime = append(oneTime, c)
			continue
		}
		pushDown(root, c, m)
	}
	for _, on := range fb.ons {
		j := on.j
		m, opaque := expr.ExprRefs(on.e, fb.itemOf)
		if opaque {
			m = j.mask()
		}
		switch j.Kind {
		case JoinInner:
			if m == 0 {
				m = j.mask()
			}
			pushDown(j, on.e, m)
		case JoinLeft:
			if m != 0 && m&^j.Right.mask() == 0 && !opaque {
				pushDown(j.Right, on.e, m)
			} else {
				j.Cond = append(j.Cond, on.e)
			}
		case JoinRight:
			if m != 0 && m&^j.Left.mask() == 0 && !opaque {
				pushDown(j.Left, on.e, m)
			} else {
				j.Cond = append(j.Cond, on.e)
			}
		default:
			j.Cond = append(j.Cond, on.e)
		}
	}
	fb.placeSemiConds() // semiplan.go
	if root != nil {
		if err := fb.chooseMethods(root); err != nil {
			return nil, err
		}
	}
	return oneTime, nil
}

// pushDown attaches conjunct c (reading items m) to the lowest node that
// covers m, never into the nullable side of an outer join.
func pushDown(n PlanNode, c expr.Expr, m uint64) {
	switch x := n.(type) {
	case *LeafNode:
		x.Filters = append(x.Filters, c)
	case *JoinNode:
		lm, rm := x.Left.mask(), x.Right.mask()
		semi := x.Kind == JoinSemi || x.Kind == JoinAnti
		if m&^lm == 0 && (x.Kind == JoinInner || x.Kind == JoinLeft || semi) {
			pushDown(x.Left, c, m)
			return
		}
		if m&^rm == 0 && (x.Kind == JoinInner || x.Kind == JoinRight || semi) {
			pushDown(x.Right, c, m)
			return
		}
		x.Filters = append(x.Filters, c)
	}
}

// chooseMethods picks, bottom-up, index lookups for table leaves and a
// method for each join.
func (fb *fromBuilder) chooseMethods(n PlanNode) error {
	switch x := n.(type) {
	case *LeafNode:
		fb.leafIndex(x, nil, nil, nil, 0)
	case *JoinNode:
		if err := fb.chooseMethods(x.Left); err != nil {
			return err
		}
		if x.Kind == JoinInner {
			// conditions of an inner join are join conditions
			x.Cond = append(x.Cond, x.Filters...)
			x.Filters = nil
		}
		lm, rm := x.Left.mask(), x.Right.mask()
		var rest, eqs []expr.Expr
		for _, c := range x.Cond {
			if l, r, ok := equiKey(c, lm, rm, fb.itemOf); ok {
				x.Lkeys = append(x.Lkeys, l)
				x.Rkeys = append(x.Rkeys, r)
				x.KeyTypes = append(x.KeyTypes, l.Type())
				eqs = append(eqs, c)
				continue
			}
			rest = append(rest, c)
		}
		x.Cond = rest
		if x.Kind == JoinSemi || x.Kind == JoinAnti {
			return fb.chooseSemi(x, eqs) // semichoose.go
		}
		outerRows := fb.estRows(x.Left)
		if x.UniqueLeft {
			// a semi join's rows made unique, joined as the outer side
			x.UniqKeys, x.UniqTypes = x.Lkeys, keyTypes(x.Lkeys)
			x.UniqRows = fb.estimateGroups(x.Lkeys, outerRows)
			outerRows = x.UniqRows
		}
		if leaf, ok := x.Right.(*LeafNode); ok && (x.Kind == JoinInner || x.Kind == JoinLeft) {
			if fb.leafIndex(leaf, x.Lkeys, x.Rkeys, eqs, outerRows) {
				fb.deps[leaf.item] |= lm
			}
		} else if err := fb.chooseMethods(x.Right); err != nil {
			return err
		}
		x.Est.rows = fb.estRows(x)
		x.hash = fb.hashInfoOf(x)
		if fb.dependsOn(x.Right, lm) {
			if x.Kind == JoinRight || x.Kind == JoinFull {
				return pgerr.New(pgerr.InvalidColumnReference, "invalid reference to FROM-clause entry").
					WithDetail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
			}
			x.Rescan = true
		} else if x.Kind == JoinInner && len(x.Lkeys) > 0 && !fb.keepSides {
			x.HashLeft = fb.hashLeft(x, outerRows)
		}
		fb.considerMerge(x, outerRows) // mergejoin.go
	}
	return nil
}

// hashLeft reports whether an inner hash join should hash its left side
// (of lr rows):
// PostgreSQL keeps the cheaper of the two orders, and of two within 1% of
// each other (add_path's fuzz factor) the one with the lower start-up
// cost — the one that hashes the cheaper input, which matters when one
// side is costly to read (a condition running a subquery per row).
func (fb *fromBuilder) hashLeft(x *JoinNode, lr float64) bool {
	c := fb.costs()
	rr := fb.estRows(x.Right)
	lc, rc := estTotal(x.Left), estTotal(x.Right)
	n := len(x.Lkeys)
	hashR := lc + rc + c.hashJoinCost(lr, rr, x.Est.rows, n)
	hashL := lc + rc + c.hashJoinCost(rr, lr, x.Est.rows, n)
	if hi := x.hash; hi != nil {
		// final_cost_hashjoin's costs, as EXPLAIN shows them
		left, right := pathCost{total: lc, rows: lr}, pathCost{total: rc, rows: rr}
		qp := c.qualCost(x.Cond) + c.qualCost(x.Filters)
		hashR = c.hashJoinPathCost(left, right, n, hi.bucket[0], hi.unique[0], hi.keySel, hi.sel, qp).total
		hashL = c.hashJoinPathCost(right, left, n, hi.bucket[1], hi.unique[1], hi.keySel, hi.sel, qp).total
	}
	if fuzzyEqual(hashL, hashR) {
		return lc < rc
	}
	return hashL < hashR
}

// fuzzyEqual reports whether two path costs are within 1% of each other
// (compare_path_costs_fuzzily's STD_FUZZ_FACTOR).
func fuzzyEqual(a, b float64) bool {
	return a <= b*1.01 && b <= a*1.01
}

// dependsOn reports whether some leaf under n reads items in m.
func (fb *fromBuilder) dependsOn(n PlanNode, m uint64) bool {
	switch x := n.(type) {
	case *LeafNode:
		return fb.deps[x.item]&m != 0
	case *JoinNode:
		return fb.dependsOn(x.Left, m) || fb.dependsOn(x.Right, m)
	}
	return false
}

// equiKey recognises `l = r` with l reading only the left side and r only
// the right (or the reverse), both of one type.
func equiKey(c expr.Expr, lm, rm uint64, itemOf []int) (expr.Expr, expr.Expr, bool) {
	b, ok := c.(*expr.BinopExpr)
	if !ok || b.Op != "=" || b.L.Type().OID != b.R.Type().OID || expr.IsVolatile(b) {
		return nil, nil, false
	}
	m1, o1 := expr.ExprRefs(b.L, itemOf)
	m2, o2 := expr.ExprRefs(b.R, itemOf)
	if o1 || o2 || m1 == 0 || m2 == 0 {
		return nil, nil, false
	}
	switch {
	case m1&^lm == 0 && m2&^rm == 0:
		return b.L, b.R, true
	case m1&^rm == 0 && m2&^lm == 0:
		return b.R, b.L, true
	}
	return nil, nil, false
}

// leafIndex chooses how a table leaf is read: by a sequential scan or an
// index its filters bound, and — when it is the right side of a join
// with equality keys (lkeys = rkeys, from the conditions eqs) over the
// rows of the left side, of which there are about outerRows — whether
// the join reads it once and hashes it, or once per left row through an
// index keyed by the left row's values (and, partitioned, pruned per
// left row). It reports whether the leaf reads the left side, which
// makes the join a nested loop.
func (fb *fromBuilder) leafIndex(l *LeafNode, lkeys, rkeys, eqs []expr.Expr, outerRows float64) bool {
	b := fb.a.S
	c := fb.costs()
	valOK := func(v expr.Expr) bool {
		m, opaque := expr.ExprRefs(v, fb.itemOf)
		return m == 0 && !opaque && !expr.IsVolatile(v)
	}
	switch src := l.Src.(type) {
	case *PartitionedSource:
		// prune, and choose index scans per partition, with the filters
		// of this item alone, shifted to the item's positions
		var conds []expr.Expr
		for _, f := range l.Filters {
			if m, opaque := expr.ExprRefs(f, fb.itemOf); opaque || m&^l.mask() != 0 {
				continue
			}
			if sc, ok := shiftColumns(f, -l.Off); ok {
				conds = append(conds, sc)
				if src.origOf == nil {
					src.origOf = map[expr.Expr]expr.Expr{}
				}
				src.origOf[sc] = f
			}
		}
		// and, when a nested loop is cheaper, with the join's keys read
		// from the level row for each outer row: run-time pruning of the
		// inner side and index scans keyed by the outer row, PostgreSQL's
		// parameterised Append
		var keyConds []expr.Expr
		for i, e := range eqs {
			if kc := fb.joinKeyCond(l, e.(*expr.BinopExpr), lkeys[i], rkeys[i]); kc != nil {
				keyConds = append(keyConds, kc)
			}
		}
		if len(keyConds) > 0 && fb.partitionedNestLoop(l, src, len(eqs), outerRows) {
			conds = append(conds, keyConds...)
			src.level = true
		}
		var where expr.Expr
		switch len(conds) {
		case 0:
		case 1:
			where = conds[0]
		default:
			where = &expr.BoolExpr{Op: expr.BoolAnd, Args: conds}
		}
		src.b = b
		src.filter(b.Cat(), where)
		return src.level
	case *TableSource:
		ri := fb.relInfo(l)
		cs := condSet{}
		for _, f := range l.Filters {
			cs.add(f, ri.colOf, valOK)
		}
		rows := clampRows(ri.size.tuples * ri.restrictSel(l.Filters, valOK))
		plain, _ := src.bestPath(c, b, ri, cs, l.Filters, rows, 1, false)
		// the join's keys as index conditions on this table's columns
		pcs := condSet{}
		for col, cc := range cs {
			cp := *cc
			pcs[col] = &cp
		}
		perLoop := rows
		keyed := false
		for i := range rkeys {
			col, t, ok := ri.colOf(rkeys[i])
			if !ok || !keyCompatible(t, lkeys[i].Type()) {
				continue
			}
			if cc := pcs.at(col); cc.eq == nil {
				cc.eq, cc.eqJoin = lkeys[i], true
				perLoop *= ri.eqSel(col, nil)
				keyed = true
			}
		}
		if keyed {
			perLoop = clampRows(perLoop)
			param, ok := src.bestPath(c, b, ri, pcs, l.Filters, perLoop, outerRows, true)
			joinRows := outerRows * perLoop
			nl := outerRows*param.cost.total + c.cpuTuple*joinRows
			hash := plain.cost.total + c.hashJoinCost(outerRows, plain.cost.rows, joinRows, len(rkeys))
			if !c.nestloop {
				nl += disableCost
			}
			if !c.hashjoin {
				hash += disableCost
			}
			if ok && nl < hash {
				src.apply(param, pcs)
				l.Est = param.cost
				return src.keysReadLevel
			}
		}
		src.apply(plain, cs)
		l.Est = plain.cost
		return false
	}
	return false
}

// partitionedNestLoop weighs reading partitioned leaf l once per outer
// row, through an index on the key in each partition, against reading
// every partition once and hashing. As in PostgreSQL 15, the nested
// loop's cost counts every partition's index scan at every loop: the
// planner does not discount the partitions run-time pruning will skip
// (which it cannot know), so for the 2024 thread's join PostgreSQL — and
// lockd — hash the outer side's few rows and scan the inner partitions.
func (fb *fromBuilder) partitionedNestLoop(l *LeafNode, ps *PartitionedSource, nkeys int, outerRows float64) bool {
	b := fb.a.S
	c := fb.costs()
	t := b.Cat().Tables[ps.root]
	if t == nil {
		return false
	}
	sum, nparts := partSizes(b, t)
	if nparts == 0 {
		return false
	}
	ri := fb.relInfo(l)
	rows := clampRows(sum.tuples * ri.restrictSel(l.Filters, func(v expr.Expr) bool {
		m, opaque := expr.ExprRefs(v, fb.itemOf)
		return m == 0 && !opaque
	}))
	// every partition's index scan on the key, per outer row
	part := relSize{pages: math.Max(1, sum.pages/float64(nparts)), tuples: math.Max(1, sum.tuples/float64(nparts))}
	perLoop := clampRows(rows / math.Min(sum.tuples, defaultNumDistinct))
	isz := relSize{pages: math.Max(1, part.pages/3), tuples: part.tuples}
	sel := 1 / math.Min(part.tuples, defaultNumDistinct)
	probe := c.indexScanCost(part, isz, sel, nkeys, l.Filters, perLoop/float64(nparts), outerRows, 1, 0, false, false)
	// or each partition's bitmap scan on the key, if cheaper
	if bm := c.bitmapProbe(part, isz, sel, nkeys, l.Filters, perLoop/float64(nparts), outerRows); bm.total < probe.total {
		probe = bm
	}
	nl := outerRows*probe.total*float64(nparts) + c.cpuTuple*outerRows*perLoop
	hash := c.seqScanCost(sum, l.Filters, rows).total + c.hashJoinCost(outerRows, rows, outerRows*perLoop, nkeys)
	if !c.nestloop {
		nl += disableCost
	}
	if !c.hashjoin {
		hash += disableCost
	}
	return nl < hash
}

// joinKeyCond rewrites the join condition b (lkey = rkey, in either
// order) for a scan of leaf l: rkey over l's own columns, lkey read from
// the level row. nil when rkey is not a plain column of l.
func (fb *fromBuilder) joinKeyCond(l *LeafNode, b *expr.BinopExpr, lkey, rkey expr.Expr) expr.Expr {
	if _, _, ok := tableColumn(l.Src.columns(), l.Off, l.N-NumSysCols)(rkey); !ok {
		return nil
	}
	r, ok := shiftColumns(rkey, -l.Off)
	if !ok {
		return nil
	}
	c := *b
	if b.L == lkey {
		c.L, c.R = &expr.LevelExpr{E: lkey}, r
	} else {
		c.L, c.R = r, &expr.LevelExpr{E: lkey}
	}
	return &c
}

// shiftColumns copies e with every column position moved by delta, for
// the expressions partition pruning and index choice look at; ok is false
// for any other kind of expression.
func shiftColumns(e expr.Expr, delta int) (expr.Expr, bool) {
	if delta == 0 {
		return e, true
	}
	list := func(es []expr.Expr) ([]expr.Expr, bool) {
		out := make([]expr.Expr, len(es))
		for i, x := range es {
			y, ok := shiftColumns(x, delta)
			if !ok {
				return nil, false
			}
			out[i] = y
		}
		return out, true
	}
	switch x := e.(type) {
	case *expr.ColExpr:
		c := *x
		c.I += delta
		return &c, true
	case *expr.ConstExpr, *expr.ParamExpr, *expr.OuterExpr, *expr.LevelExpr:
		return e, true
	case *expr.BinopExpr:
		l, ok1 := shiftColumns(x.L, delta)
		r, ok2 := shiftColumns(x.R, delta)
		if !ok1 || !ok2 {
			return nil, false
		}
		b := *x
		b.L, b.R = l, r
		return &b, true
	case *expr.CastExpr:
		a, ok := shiftColumns(x.Arg, delta)
		if !ok {
			return nil, false
		}
		c := *x
		c.Arg = a
		return &c, true
	case *expr.BoolExpr:
		args, ok := list(x.Args)
		if !ok {
			return nil, false
		}
		return &expr.BoolExpr{Op: x.Op, Args: args}, true
	case *expr.InExpr:
		a, ok1 := shiftColumns(x.Arg, delta)
		l, ok2 := list(x.List)
		if !ok1 || !ok2 {
			return nil, false
		}
		c := *x
		c.Arg, c.List = a, l
		return &c, true
	case *expr.NullTestExpr:
		a, ok := shiftColumns(x.Arg, delta)
		if !ok {
			return nil, false
		}
		return &expr.NullTestExpr{Arg: a, IsNull: x.IsNull}, true
	}
	return nil, false
}

// markPlanOnly marks the index locks of tables the plan reads without
// those indexes: the planner takes them, a cached generic plan does not.
func (fb *fromBuilder) markPlanOnly() {
	cat := fb.a.S.Cat()
	used := map[uint32]bool{}
	owner := map[uint32]bool{}
	for _, l := range fb.leaves {
		ts, ok := l.Src.(*TableSource)
		if !ok {
			continue
		}
		for _, ix := range cat.TableIndexes(ts.T) {
			owner[ix.OID] = true
		}
		for _, ix := range ts.ScanIndexes() {
			used[ix.OID] = true
		}
	}
	for i := range fb.rels {
		if o := fb.rels[i].Oid; owner[o] && !used[o] {
			fb.rels[i].PlanOnly = true
		}
	}
}

// sequenceLeaf adds a sequence to the FROM clause, read under
// AccessShareLock as a table is.
func (fb *fromBuilder) sequenceLeaf(q *catalog.SequenceDef, alias string, aliases []*pg.Node, loc int32) (PlanNode, error) {
	src := &SeqSource{Q: q, alias: alias}
	for i, c := range catalog.SeqColumns {
		src.cols = append(src.cols, types.Column{Name: c.Name, Type: c.Type, TableOID: q.OID, Attnum: int16(i + 1)})
	}
	src.cols = append(src.cols, // its one tuple is (0,1)
		types.Column{Name: "ctid", Type: types.TypeTid, TableOID: q.OID, Attnum: -1},
		types.Column{Name: "tableoid", Type: types.TypeOid, TableOID: q.OID, Attnum: -6})
	fb.rels = append(fb.rels, expr.RelLock{Oid: q.OID, Mode: locks.AccessShareLock})
	return fb.addLeaf(src, alias, aliases, len(catalog.SeqColumns), nil, loc)
}

// functionItem compiles a RangeFunction.
func functionItem(a *analyze.Analyzer, rf *pg.RangeFunction) (*FuncSource, error) {
	if len(rf.Functions) != 1 || rf.IsRowsfrom {
		return nil, pgerr.NotSupported("ROWS FROM with several functions is not supported")
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) > 1 && items[1] != nil && items[1].GetList() != nil && len(items[1].GetList().Items) > 0 {
		return nil, pgerr.NotSupported("column definition lists for functions are not supported")
	}
	name, e, err := a.FromFunction(items[0])
	if err != nil {
		return nil, err
	}
	f := &FuncSource{alias: name}
	colName := name
	if sf, ok := e.(*expr.SrfExpr); ok {
		f.Srf = sf
	} else {
		if e, err = a.ResolveOutput(e); err != nil {
			return nil, err
		}
		f.Scalar = e
	}
	// a function with a named output column keeps that name under a
	// table alias; others take the alias
	outName, named := funcs.SrfOutputNames[name]
	if named {
		colName = outName
	}
	if rf.Alias != nil {
		f.alias = rf.Alias.Aliasname
		if !named {
			colName = f.alias
		}
		if len(rf.Alias.Colnames) > 0 {
			colName = analyze.NodeName(rf.Alias.Colnames[0])
		}
	}
	f.Cols = []types.Column{{Name: colName, Type: e.Type()}}
	if sf, ok := e.(*expr.SrfExpr); ok && sf.Cols != nil {
		// a record of several columns: named by the function's OUT
		// parameters, or by the alias's column list
		f.Cols = append([]types.Column(nil), sf.Cols...)
		if rf.Alias != nil {
			for i, n := range rf.Alias.Colnames {
				if i < len(f.Cols) {
					f.Cols[i].Name = analyze.NodeName(n)
				}
			}
		}
	}
	if rf.Ordinality {
		f.Ordinality = true
		on := "ordinality"
		if rf.Alias != nil && len(rf.Alias.Colnames) > 1 {
			on = analyze.NodeName(rf.Alias.Colnames[1])
		}
		f.Cols = append(f.Cols, types.Column{Name: on, Type: types.TypeInt8})
	}
	if rf.Alias != nil && len(rf.Alias.Colnames) > len(f.Cols) {
		return nil, pgerr.New(pgerr.SyntaxError, "too many column aliases specified for function %s", name)
	}
	return f, nil
}
