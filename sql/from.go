package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
)

// The FROM clause: items (tables, views, subqueries, functions) and the
// joins between them, compiled into a plan tree over one level row; then
// WHERE and ON conditions pushed as far down as their semantics allow and
// each join given its method (index nested loop, hash join, nested loop).

// maxFromItems bounds the FROM items of one query level (the planner
// keeps item sets in a 64-bit mask; a partitioned table is one item).
const maxFromItems = 64

type fromBuilder struct {
	a      *analyzer      // the level's analyzer; a.sc is the level scope
	sel    *pg.SelectStmt // the query, for its locking clause (nil: none)
	lock   *lockSpec      // the locking clause this query inherited
	sc     *scope
	nitems int
	itemOf []int // level-row position → item
	leaves []*leafNode
	deps   []uint64 // per item: the items its scan reads (LATERAL, index keys)
	rels   []relLock
	ons    []onCond // ON conditions, placed after WHERE is known
}

type onCond struct {
	j *joinNode
	e expr
}

// build compiles a FROM list (comma-separated items are cross joins).
func (fb *fromBuilder) build(from []*pg.Node) (planNode, error) {
	var root planNode
	for _, n := range from {
		node, err := fb.item(n)
		if err != nil {
			return nil, err
		}
		if root == nil {
			root = node
		} else {
			root = &joinNode{kind: joinInner, left: root, right: node}
		}
	}
	return root, nil
}

func (fb *fromBuilder) item(n *pg.Node) (planNode, error) {
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
	return nil, pgerr.NotSupported("this kind of FROM item (%s) is not supported", nodeKind(n))
}

// addLeaf places a source's columns in the level row and its names in
// the scope. nstar is how many leading columns * expands to.
func (fb *fromBuilder) addLeaf(src rowSource, alias string, aliases []*pg.Node, nstar int, table *TableDef, loc int32) (*leafNode, error) {
	if fb.nitems >= maxFromItems {
		return nil, pgerr.New(pgerr.ProgramLimitExceeded, "too many FROM items (at most %d per query level)", maxFromItems)
	}
	sc := fb.sc
	for _, r := range sc.rels {
		if r.alias == alias && alias != "" {
			return nil, pgerr.New(pgerr.DuplicateAlias, "table name \"%s\" specified more than once", alias)
		}
	}
	cols := src.columns()
	if len(aliases) > nstar {
		return nil, pgerr.New(pgerr.InvalidColumnReference, "table \"%s\" has %d columns available but %d columns specified", alias, nstar, len(aliases))
	}
	item := fb.nitems
	fb.nitems++
	off := sc.width
	sc.width += len(cols)
	rel := &nsRel{alias: alias, star: nstar, item: item, table: table}
	for j, c := range cols {
		name := c.Name
		if j < len(aliases) {
			name = nodeName(aliases[j])
		}
		meta := c
		meta.Name = name
		col := nsColumn{name: name, e: &colExpr{i: off + j, t: c.Type}, meta: meta, item: item}
		rel.cols = append(rel.cols, col)
		sc.unqual = append(sc.unqual, col)
		if j < nstar {
			sc.star = append(sc.star, col)
		}
		fb.itemOf = append(fb.itemOf, item)
	}
	sc.rels = append(sc.rels, rel)
	leaf := &leafNode{item: item, src: src, off: off, n: len(cols)}
	fb.leaves = append(fb.leaves, leaf)
	fb.deps = append(fb.deps, 0)
	return leaf, nil
}

func (fb *fromBuilder) relation(rv *pg.RangeVar) (planNode, error) {
	s := fb.a.s
	alias := rv.Relname
	var aliases []*pg.Node
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
		aliases = rv.Alias.Colnames
	}
	if rv.Schemaname == "" {
		if def := fb.a.ctes.lookup(rv.Relname); def != nil {
			self := def.recursive && def.step == nil
			return fb.addLeaf(&cteSource{def: def, alias: alias, self: self}, alias, aliases, len(def.cols), nil, rv.Location)
		}
	}
	if v, ok := s.lookupView(rv); ok {
		return fb.addLeaf(&viewSource{v: v, s: s, alias: alias}, alias, aliases, len(v.cols), nil, rv.Location)
	}
	if q := s.rangeSequence(rv); q != nil { // seqcatalog.go
		return fb.sequenceLeaf(q, alias, aliases, rv.Location)
	}
	t, err := s.resolveTable(rv)
	if err != nil {
		return nil, err
	}
	if t.Partitioned() {
		// locked at plan time: the parent; the partitions that survive
		// pruning are locked at each execution (partscan.go)
		ps := newPartitionedSource(t, alias, locks.AccessShareLock)
		ps.only = !rv.Inh
		fb.rels = append(fb.rels, ps.relLocks()...)
		return fb.addLeaf(ps, alias, aliases, len(t.Cols), t, rv.Location)
	}
	ts := newTableSource(t, alias)
	fb.rels = append(fb.rels, tableLocks(s.cat(), t, locks.AccessShareLock)...)
	return fb.addLeaf(ts, alias, aliases, len(t.Cols), t, rv.Location)
}

// lookupView finds a system view named by rv: unqualified or pg_catalog
// names only (pg_catalog is searched before public, as in PostgreSQL).
func (s *Backend) lookupView(rv *pg.RangeVar) (*view, bool) {
	if rv.Schemaname != "" && rv.Schemaname != "pg_catalog" {
		return nil, false
	}
	v, ok := s.views[rv.Relname]
	return v, ok
}

func (fb *fromBuilder) subselect(rs *pg.RangeSubselect) (planNode, error) {
	sel := rs.Subquery.GetSelectStmt()
	if sel == nil {
		return nil, pgerr.NotSupported("this kind of subquery in FROM is not supported")
	}
	if rs.Alias == nil {
		return nil, pgerr.New(pgerr.SyntaxError, "subquery in FROM must have an alias").
			WithHint("For example, FROM (SELECT ...) [AS] foo.")
	}
	parent := fb.sc.parent
	if rs.Lateral {
		parent = fb.sc
		saved := fb.sc.visHi
		fb.sc.visHi = fb.nitems
		defer func() { fb.sc.visHi = saved }()
	}
	sa := fb.a.childWith(parent)
	if !rs.Lateral {
		sa.hiddenSc = fb.sc
	}
	if fb.sel != nil {
		sa.inheritLock = subLock(fb.sel, fb.lock, rs.Alias.Aliasname)
	}
	sub, err := compileQuery(sa, sel)
	if err != nil {
		return nil, err
	}
	src := &subquerySource{alias: rs.Alias.Aliasname, plan: sub}
	for _, c := range sub.cols {
		c.TableOID, c.Attnum = 0, 0
		src.cols = append(src.cols, c)
	}
	fb.rels = append(fb.rels, sub.rels...)
	leaf, err := fb.addLeaf(src, rs.Alias.Aliasname, rs.Alias.Colnames, len(src.cols), nil, -1)
	if err != nil {
		return nil, err
	}
	if rs.Lateral && sub.correlated {
		leaf.lateral = true
		fb.deps[leaf.item] = 1<<uint(leaf.item) - 1 // any earlier item
	}
	return leaf, nil
}

func (fb *fromBuilder) function(rf *pg.RangeFunction) (planNode, error) {
	la := fb.a.level(fb.sc)
	la.aggCtx = "functions in FROM"
	saved := fb.sc.visHi
	fb.sc.visHi = fb.nitems
	f, err := functionItem(la, rf)
	fb.sc.visHi = saved
	if err != nil {
		return nil, err
	}
	var argMask uint64
	var args []expr
	if f.srf != nil {
		args = f.srf.args
	} else {
		args = []expr{f.scalar}
	}
	for _, e := range args {
		m, opaque := exprRefs(e, fb.itemOf)
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
	leaf, err := fb.addLeaf(f, f.alias, aliases, len(f.cols), nil, -1)
	if err != nil {
		return nil, err
	}
	fb.deps[leaf.item] = argMask
	return leaf, nil
}

func (fb *fromBuilder) join(je *pg.JoinExpr) (planNode, error) {
	sc := fb.sc
	firstItem := fb.nitems
	startUnqual, startStar, startRels := len(sc.unqual), len(sc.star), len(sc.rels)
	left, err := fb.item(je.Larg)
	if err != nil {
		return nil, err
	}
	leftUnqual, leftStar := len(sc.unqual), len(sc.star)
	right, err := fb.item(je.Rarg)
	if err != nil {
		return nil, err
	}
	j := &joinNode{left: left, right: right}
	switch je.Jointype {
	case pg.JoinType_JOIN_INNER:
		j.kind = joinInner
	case pg.JoinType_JOIN_LEFT:
		j.kind = joinLeft
	case pg.JoinType_JOIN_RIGHT:
		j.kind = joinRight
	case pg.JoinType_JOIN_FULL:
		j.kind = joinFull
	default:
		return nil, pgerr.NotSupported("join type %s is not supported", je.Jointype.String())
	}
	// ON and USING see only the items of this join.
	savedLo, savedHi := sc.visLo, sc.visHi
	sc.visLo, sc.visHi = firstItem, fb.nitems
	defer func() { sc.visLo, sc.visHi = savedLo, savedHi }()
	la := fb.a.level(sc)
	la.aggCtx = "JOIN conditions"

	var using []string
	if je.IsNatural {
		// common column names of the two sides, in the left side's order
		rightNames := map[string]bool{}
		for _, c := range sc.star[leftStar:] {
			rightNames[c.name] = true
		}
		for _, c := range sc.star[startStar:leftStar] {
			if rightNames[c.name] {
				using = append(using, c.name)
			}
		}
	}
	for _, u := range je.UsingClause {
		using = append(using, nodeName(u))
	}
	if je.IsNatural || len(je.UsingClause) > 0 {
		leftCols := append([]nsColumn(nil), sc.unqual[startUnqual:leftUnqual]...)
		rightCols := append([]nsColumn(nil), sc.unqual[leftUnqual:]...)
		leftStarCols := append([]nsColumn(nil), sc.star[startStar:leftStar]...)
		rightStarCols := append([]nsColumn(nil), sc.star[leftStar:]...)
		var merged []nsColumn
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
			eq, err := la.binop("=", lc.e, rc.e, -1)
			if err != nil {
				return nil, err
			}
			fb.ons = append(fb.ons, onCond{j, eq})
			col := nsColumn{name: name, item: -1, meta: Column{Name: name}}
			switch j.kind {
			case joinRight:
				col.e, col.meta.Type = rc.e, rc.e.typ()
			case joinFull:
				items, t, err := la.unify([]expr{lc.e, rc.e}, "JOIN/USING", -1)
				if err != nil {
					return nil, err
				}
				col.e, col.meta.Type = &coalesceExpr{t: t, args: items}, t
			default:
				col.e, col.meta = lc.e, lc.meta
			}
			merged = append(merged, col)
		}
		without := func(cs []nsColumn) []nsColumn {
			var out []nsColumn
			for _, c := range cs {
				if !isUsing[c.name] {
					out = append(out, c)
				}
			}
			return out
		}
		sc.unqual = append(append(append(sc.unqual[:startUnqual], merged...), without(leftCols)...), without(rightCols)...)
		sc.star = append(append(append(sc.star[:startStar], merged...), without(leftStarCols)...), without(rightStarCols)...)
	}
	if je.Quals != nil {
		if je.IsNatural || len(je.UsingClause) > 0 {
			return nil, pgerr.New(pgerr.SyntaxError, "syntax error: JOIN with both USING and ON")
		}
		q, err := la.expr(je.Quals)
		if err != nil {
			return nil, err
		}
		if q, err = la.asBool(q, "JOIN/ON", -1); err != nil {
			return nil, err
		}
		for _, c := range conjuncts(q) {
			fb.ons = append(fb.ons, onCond{j, c})
		}
	}
	if je.Alias != nil {
		// A join alias hides the names inside the join.
		rel := &nsRel{alias: je.Alias.Aliasname, item: -1}
		for i, c := range sc.star[startStar:] {
			if i < len(je.Alias.Colnames) {
				c.name = nodeName(je.Alias.Colnames[i])
				c.meta.Name = c.name
			}
			c.item = -1
			rel.cols = append(rel.cols, c)
		}
		rel.star = len(rel.cols)
		for _, r := range sc.rels[startRels:] {
			r.alias = ""
		}
		sc.rels = append(sc.rels, rel)
		sc.unqual = append(sc.unqual[:startUnqual], rel.cols...)
		sc.star = append(sc.star[:startStar], rel.cols...)
	}
	return j, nil
}

func findOne(cols []nsColumn, name, side string) (nsColumn, error) {
	var found *nsColumn
	for i := range cols {
		if cols[i].name == name {
			if found != nil {
				return nsColumn{}, pgerr.New(pgerr.AmbiguousColumn, "common column name \"%s\" appears more than once in %s table", name, side)
			}
			found = &cols[i]
		}
	}
	if found == nil {
		return nsColumn{}, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", name, side)
	}
	return *found, nil
}

// conjuncts splits an AND tree.
func conjuncts(e expr) []expr {
	if b, ok := e.(*boolExpr); ok && b.op == boolAnd {
		var out []expr
		for _, a := range b.args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []expr{e}
}

// subquerySource is a subquery in FROM.
type subquerySource struct {
	alias string
	cols  []Column
	plan  *selectPlan
}

func (q *subquerySource) name() string      { return q.alias }
func (q *subquerySource) columns() []Column { return q.cols }
func (x *Executor) scanSubquery(ec *evalCtx, q *subquerySource, fn func([]Datum) error) error {
	return x.runSelect(ec, q.plan, fn)
}

// placeFilters distributes the WHERE conjuncts and ON conditions over the
// tree, returns the conjuncts to evaluate once per execution (they read
// no FROM item), and chooses each join's method.
func (fb *fromBuilder) place(root planNode, where []expr) (oneTime []expr, err error) {
	all := uint64(1)<<uint(fb.nitems) - 1
	for _, c := range where {
		m, opaque := exprRefs(c, fb.itemOf)
		switch {
		case opaque:
			m = all
		case m == 0 && !isVolatile(c):
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
		m, opaque := exprRefs(on.e, fb.itemOf)
		if opaque {
			m = j.mask()
		}
		switch j.kind {
		case joinInner:
			if m == 0 {
				m = j.mask()
			}
			pushDown(j, on.e, m)
		case joinLeft:
			if m != 0 && m&^j.right.mask() == 0 && !opaque {
				pushDown(j.right, on.e, m)
			} else {
				j.cond = append(j.cond, on.e)
			}
		case joinRight:
			if m != 0 && m&^j.left.mask() == 0 && !opaque {
				pushDown(j.left, on.e, m)
			} else {
				j.cond = append(j.cond, on.e)
			}
		default:
			j.cond = append(j.cond, on.e)
		}
	}
	if root != nil {
		if err := fb.chooseMethods(root); err != nil {
			return nil, err
		}
	}
	return oneTime, nil
}

// pushDown attaches conjunct c (reading items m) to the lowest node that
// covers m, never into the nullable side of an outer join.
func pushDown(n planNode, c expr, m uint64) {
	switch x := n.(type) {
	case *leafNode:
		x.filters = append(x.filters, c)
	case *joinNode:
		lm, rm := x.left.mask(), x.right.mask()
		if m&^lm == 0 && (x.kind == joinInner || x.kind == joinLeft) {
			pushDown(x.left, c, m)
			return
		}
		if m&^rm == 0 && (x.kind == joinInner || x.kind == joinRight) {
			pushDown(x.right, c, m)
			return
		}
		x.filters = append(x.filters, c)
	}
}

// chooseMethods picks, bottom-up, index lookups for table leaves and a
// method for each join.
func (fb *fromBuilder) chooseMethods(n planNode) error {
	switch x := n.(type) {
	case *leafNode:
		fb.leafIndex(x, nil, nil)
	case *joinNode:
		if err := fb.chooseMethods(x.left); err != nil {
			return err
		}
		if x.kind == joinInner {
			// conditions of an inner join are join conditions
			x.cond = append(x.cond, x.filters...)
			x.filters = nil
		}
		lm, rm := x.left.mask(), x.right.mask()
		var rest []expr
		for _, c := range x.cond {
			if l, r, ok := equiKey(c, lm, rm, fb.itemOf); ok {
				x.lkeys = append(x.lkeys, l)
				x.rkeys = append(x.rkeys, r)
				x.keyTypes = append(x.keyTypes, l.typ())
				continue
			}
			rest = append(rest, c)
		}
		x.cond = rest
		if leaf, ok := x.right.(*leafNode); ok && (x.kind == joinInner || x.kind == joinLeft) {
			if fb.leafIndex(leaf, x.lkeys, x.rkeys) {
				fb.deps[leaf.item] |= lm
			}
		} else if err := fb.chooseMethods(x.right); err != nil {
			return err
		}
		if fb.dependsOn(x.right, lm) {
			if x.kind == joinRight || x.kind == joinFull {
				return pgerr.New(pgerr.InvalidColumnReference, "invalid reference to FROM-clause entry").
					WithDetail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
			}
			x.rescan = true
		}
	}
	return nil
}

// dependsOn reports whether some leaf under n reads items in m.
func (fb *fromBuilder) dependsOn(n planNode, m uint64) bool {
	switch x := n.(type) {
	case *leafNode:
		return fb.deps[x.item]&m != 0
	case *joinNode:
		return fb.dependsOn(x.left, m) || fb.dependsOn(x.right, m)
	}
	return false
}

// equiKey recognises `l = r` with l reading only the left side and r only
// the right (or the reverse), both of one type.
func equiKey(c expr, lm, rm uint64, itemOf []int) (expr, expr, bool) {
	b, ok := c.(*binopExpr)
	if !ok || b.op != "=" || b.l.typ().OID != b.r.typ().OID || isVolatile(b) {
		return nil, nil, false
	}
	m1, o1 := exprRefs(b.l, itemOf)
	m2, o2 := exprRefs(b.r, itemOf)
	if o1 || o2 || m1 == 0 || m2 == 0 {
		return nil, nil, false
	}
	switch {
	case m1&^lm == 0 && m2&^rm == 0:
		return b.l, b.r, true
	case m1&^rm == 0 && m2&^lm == 0:
		return b.r, b.l, true
	}
	return nil, nil, false
}

// leafIndex turns a table leaf into an index lookup when its filters (or
// the equality keys of the join above it, right side = this leaf) pin an
// index. It reports whether the lookup reads the left side of that join.
func (fb *fromBuilder) leafIndex(l *leafNode, lkeys, rkeys []expr) bool {
	if ps, ok := l.src.(*partitionedSource); ok {
		// prune, and choose index lookups per partition, with the
		// filters of this item alone, shifted to the item's positions
		var conds []expr
		for _, c := range l.filters {
			if m, opaque := exprRefs(c, fb.itemOf); opaque || m&^l.mask() != 0 {
				continue
			}
			if sc, ok := shiftColumns(c, -l.off); ok {
				conds = append(conds, sc)
			}
		}
		var where expr
		switch len(conds) {
		case 0:
		case 1:
			where = conds[0]
		default:
			where = &boolExpr{op: boolAnd, args: conds}
		}
		ps.filter(fb.a.s.cat(), where)
		return false
	}
	ts, ok := l.src.(*tableSource)
	if !ok {
		return false
	}
	cat := fb.a.s.cat()
	userCols := len(ts.defs)
	eq := map[int]expr{}
	for _, c := range l.filters {
		b, ok := c.(*binopExpr)
		if !ok || b.op != "=" {
			continue
		}
		for _, side := range [2][2]expr{{b.l, b.r}, {b.r, b.l}} {
			col, ok := side[0].(*colExpr)
			if !ok || col.i < l.off || col.i >= l.off+userCols {
				continue
			}
			if m, opaque := exprRefs(side[1], fb.itemOf); m == 0 && !opaque && !isVolatile(side[1]) {
				eq[col.i-l.off] = side[1]
				break
			}
		}
	}
	fromJoin := map[int]bool{}
	for i := range rkeys {
		col, ok := rkeys[i].(*colExpr)
		if !ok || col.i < l.off || col.i >= l.off+userCols {
			continue
		}
		if _, have := eq[col.i-l.off]; !have {
			eq[col.i-l.off] = lkeys[i]
			fromJoin[col.i-l.off] = true
		}
	}
	used := ts.useIndexKeys(cat, eq)
	for _, c := range used {
		if fromJoin[c] {
			ts.keysReadLevel = true
		}
	}
	return ts.keysReadLevel
}

// shiftColumns copies e with every column position moved by delta, for
// the expressions partition pruning and index choice look at; ok is false
// for any other kind of expression.
func shiftColumns(e expr, delta int) (expr, bool) {
	if delta == 0 {
		return e, true
	}
	list := func(es []expr) ([]expr, bool) {
		out := make([]expr, len(es))
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
	case *colExpr:
		c := *x
		c.i += delta
		return &c, true
	case *constExpr, *paramExpr, *outerExpr:
		return e, true
	case *binopExpr:
		l, ok1 := shiftColumns(x.l, delta)
		r, ok2 := shiftColumns(x.r, delta)
		if !ok1 || !ok2 {
			return nil, false
		}
		b := *x
		b.l, b.r = l, r
		return &b, true
	case *castExpr:
		a, ok := shiftColumns(x.arg, delta)
		if !ok {
			return nil, false
		}
		c := *x
		c.arg = a
		return &c, true
	case *boolExpr:
		args, ok := list(x.args)
		if !ok {
			return nil, false
		}
		return &boolExpr{op: x.op, args: args}, true
	case *inExpr:
		a, ok1 := shiftColumns(x.arg, delta)
		l, ok2 := list(x.list)
		if !ok1 || !ok2 {
			return nil, false
		}
		c := *x
		c.arg, c.list = a, l
		return &c, true
	case *nullTestExpr:
		a, ok := shiftColumns(x.arg, delta)
		if !ok {
			return nil, false
		}
		return &nullTestExpr{arg: a, isNull: x.isNull}, true
	}
	return nil, false
}

// markPlanOnly marks the index locks of tables the plan reads without
// those indexes: the planner takes them, a cached generic plan does not.
func (fb *fromBuilder) markPlanOnly() {
	cat := fb.a.s.cat()
	used := map[uint32]bool{}
	owner := map[uint32]bool{}
	for _, l := range fb.leaves {
		ts, ok := l.src.(*tableSource)
		if !ok {
			continue
		}
		for _, ix := range cat.tableIndexes(ts.t) {
			owner[ix.OID] = true
		}
		if ts.index != nil {
			used[ts.index.OID] = true
		}
	}
	for i := range fb.rels {
		if o := fb.rels[i].oid; owner[o] && !used[o] {
			fb.rels[i].planOnly = true
		}
	}
}
