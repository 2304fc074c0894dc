package plan

import (
	"math"

	"lockd/sql/expr"
)

// Choosing how each semi and anti join is done (semicost.go weighs the
// ways), and the join order search's steps for them (joinorder.go).

// semiLeaf is the ways to read a semi join's inner side when it is one
// FROM item, and what applying each takes.
type semiLeaf struct {
	in  semiInput
	l   *LeafNode
	ts  *TableSource
	ps  *PartitionedSource
	cs  condSet
	pcs condSet
	// plainCh, paramCh: the table's paths; keyConds: a partitioned
	// table's join keys as conditions reading the outer row
	plainCh, paramCh pathChoice
	keyConds         []expr.Expr
}

// semiLeafPaths finds how leaf l, the inner side of a semi join with
// equalities lkeys (outer) = rkeys (l's) and other conditions other,
// can be read: once, or once per each of outerRows outer rows through
// an index keyed by them. eqs are the equalities (for a partitioned
// table's run-time pruning); nil when only costs are wanted.
func (fb *fromBuilder) semiLeafPaths(l *LeafNode, lkeys, rkeys, eqs, other []expr.Expr, outerRows float64) *semiLeaf {
	c := fb.costs()
	b := fb.a.S
	sl := &semiLeaf{l: l}
	sl.in.lkeys, sl.in.rkeys, sl.in.other = lkeys, rkeys, other
	valOK := func(v expr.Expr) bool {
		m, opaque := expr.ExprRefs(v, fb.itemOf)
		return m == 0 && !opaque && !expr.IsVolatile(v)
	}
	switch src := l.Src.(type) {
	case *TableSource:
		sl.ts = src
		ri := fb.relInfo(l)
		sl.cs = condSet{}
		for _, f := range l.Filters {
			sl.cs.add(f, ri.colOf, valOK)
		}
		rows := clampRows(ri.size.tuples * ri.restrictSel(l.Filters, valOK))
		sl.plainCh, _ = src.bestPath(c, b, ri, sl.cs, l.Filters, rows, 1, false)
		sl.in.plain = sl.plainCh.cost
		sl.pcs = condSet{}
		for col, cc := range sl.cs {
			cp := *cc
			sl.pcs[col] = &cp
		}
		perLoop := rows
		keyCol := map[int]bool{}
		for i := range rkeys {
			col, t, ok := ri.colOf(rkeys[i])
			if !ok || !keyCompatible(t, lkeys[i].Type()) {
				continue
			}
			if cc := sl.pcs.at(col); cc.eq == nil {
				cc.eq, cc.eqJoin = lkeys[i], true
				perLoop *= ri.eqSel(col, nil)
				keyCol[col] = true
			}
		}
		if len(keyCol) == 0 {
			return sl
		}
		ch, ok := src.bestPath(c, b, ri, sl.pcs, l.Filters, clampRows(perLoop), outerRows, true)
		if !ok {
			return sl
		}
		sl.paramCh, sl.in.param, sl.in.paramOK = ch, ch.cost, true
		used := 0
		for i := 0; i < ch.ch.neq; i++ {
			if keyCol[ch.ch.ix.Cols[i]] {
				used++
			}
		}
		sl.in.indexed = used == len(rkeys) && len(other) == 0
		sl.in.paramQ = c.qualCost(other) + c.cpuOperator*float64(len(rkeys)-used)
	case *PartitionedSource:
		sl.ps = src
		t := b.Cat().Tables[src.root]
		ri := fb.relInfo(l)
		if t == nil || ri == nil {
			break
		}
		sum, nparts := partSizes(b, t)
		rows := clampRows(sum.tuples * ri.restrictSel(l.Filters, valOK))
		sl.in.plain = c.seqScanCost(sum, l.Filters, rows)
		for i, e := range eqs {
			if kc := fb.joinKeyCond(l, e.(*expr.BinopExpr), lkeys[i], rkeys[i]); kc != nil {
				sl.keyConds = append(sl.keyConds, kc)
			}
		}
		if nparts == 0 || eqs != nil && len(sl.keyConds) == 0 {
			break
		}
		// every partition's index scan on the key, per outer row (as
		// partitionedNestLoop costs it: run-time pruning is not
		// foreseen)
		part := relSize{pages: math.Max(1, sum.pages/float64(nparts)), tuples: math.Max(1, sum.tuples/float64(nparts))}
		perLoop := clampRows(rows / math.Min(sum.tuples, defaultNumDistinct))
		probe := c.indexScanCost(part, relSize{pages: math.Max(1, part.pages/3), tuples: part.tuples}, 1/math.Min(part.tuples, defaultNumDistinct), len(lkeys), l.Filters, perLoop/float64(nparts), outerRows, 1, 0, false, false)
		sl.in.param = pathCost{startup: probe.startup, total: probe.total * float64(nparts), rows: perLoop}
		sl.in.paramOK = fb.hasKeyIndex(l, rkeys)
		sl.in.paramQ = c.qualCost(other)
	default:
		rows := fb.leafRows(l)
		sl.in.plain = pathCost{total: rows * c.cpuTuple, rows: rows}
	}
	return sl
}

// hasKeyIndex reports whether partitioned leaf l's table has an index
// whose first column is one of the keys, so that each partition can be
// read through it per outer row.
func (fb *fromBuilder) hasKeyIndex(l *LeafNode, rkeys []expr.Expr) bool {
	ri := fb.relInfo(l)
	if ri == nil {
		return false
	}
	for _, k := range rkeys {
		col, _, ok := ri.colOf(k)
		if !ok {
			continue
		}
		for _, ix := range fb.a.S.Cat().TableIndexes(ri.t) {
			if ix.Cols[0] == col {
				return true
			}
		}
	}
	return false
}

// apply makes the leaf read as method m chose; it reports whether the
// leaf then reads the outer row (a nested loop).
func (sl *semiLeaf) apply(fb *fromBuilder, param bool) bool {
	switch {
	case sl.ts != nil && param:
		sl.ts.apply(sl.paramCh, sl.pcs)
		sl.l.Est = sl.paramCh.cost
		return sl.ts.keysReadLevel
	case sl.ts != nil:
		sl.ts.apply(sl.plainCh, sl.cs)
		sl.l.Est = sl.plainCh.cost
	case sl.ps != nil:
		fb.filterPartitioned(sl.l, sl.ps, sl.keyConds, param)
		return sl.ps.level
	}
	return false
}

// filterPartitioned prunes partitioned leaf l and chooses its
// partitions' scans with its own conditions and, when param, the join's
// keys read from the outer row (run-time pruning and index scans per
// outer row), as leafIndex does for an inner join.
func (fb *fromBuilder) filterPartitioned(l *LeafNode, src *PartitionedSource, keyConds []expr.Expr, param bool) {
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
	if param && len(keyConds) > 0 {
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
	src.b = fb.a.S
	src.filter(fb.a.S.Cat(), where)
}

// treeCost roughly estimates reading a join tree once: its leaves'
// costs and a tuple's CPU per row it gives.
func (fb *fromBuilder) treeCost(n PlanNode) pathCost {
	c := fb.costs()
	switch x := n.(type) {
	case *LeafNode:
		if x.Est.total > 0 {
			return x.Est
		}
		rows := fb.leafRows(x)
		return pathCost{total: rows * c.cpuTuple, rows: rows}
	case *JoinNode:
		l, r := fb.treeCost(x.Left), fb.treeCost(x.Right)
		rows := fb.estRows(x)
		if x.semi != nil && x.Est.total > 0 && !x.UniqueLeft {
			return pathCost{startup: l.startup + x.Est.startup, total: l.total + x.Est.total, rows: rows}
		}
		if x.Rescan {
			return pathCost{startup: l.startup + r.startup, total: l.total + l.rows*r.total + c.cpuTuple*rows, rows: rows}
		}
		// the inner side read (and hashed or kept) before the first row
		return pathCost{startup: l.startup + r.total, total: l.total + r.total + c.cpuTuple*rows, rows: rows}
	}
	return pathCost{}
}

// chooseSemi decides how semi or anti join x (its equalities split into
// keys, eqs the conditions they came from) is done, and how its inner
// side is read.
func (fb *fromBuilder) chooseSemi(x *JoinNode, eqs []expr.Expr) error {
	s := x.semi
	lm := x.Left.mask()
	outerRows := fb.estRows(x.Left)
	var sl, treeLeaf *semiLeaf
	var in semiInput
	if leaf, ok := x.Right.(*LeafNode); ok {
		sl = fb.semiLeafPaths(leaf, x.Lkeys, x.Rkeys, eqs, x.Cond, outerRows)
		in = sl.in
	} else {
		if err := fb.chooseMethods(x.Right); err != nil {
			return err
		}
		in = semiInput{plain: fb.treeCost(x.Right), lkeys: x.Lkeys, rkeys: x.Rkeys, other: x.Cond, tree: true}
		if tl, pc, ok := fb.treeParam(x, in.plain, outerRows); ok {
			treeLeaf = tl
			in.param, in.paramOK = pc, true
			in.paramQ = fb.costs().qualCost(x.Cond) + fb.costs().cpuOperator*float64(len(x.Lkeys))
		}
	}
	in.anti = x.Kind == JoinAnti
	if len(x.Rkeys) > 0 && !s.lhsAll {
		in.groups = fb.estimateGroups(x.Rkeys, in.plain.rows)
		in.uniqOK = fb.hashMemOK(x.Rkeys, in.groups)
	}
	ch := fb.bestSemi(in, outerRows)
	rows := fb.semiRows(x)
	if sl != nil && sl.apply(fb, ch.method == semiParam) {
		fb.deps[sl.l.item] |= lm
	}
	if treeLeaf != nil && ch.method == semiParam && treeLeaf.apply(fb, true) {
		fb.deps[treeLeaf.l.item] |= lm
	}
	if fb.dependsOn(x.Right, lm) {
		x.Rescan = true
	}
	switch ch.method {
	case semiMaterial, semiPlainLoop:
		x.Rescan = x.Rescan || ch.method == semiPlainLoop
		// every condition a Join Filter; a semi join's equalities read
		// as PostgreSQL prints those it derives from them, outer first
		var conds []expr.Expr
		for i, e := range eqs {
			b := *e.(*expr.BinopExpr)
			if !in.anti {
				b.L, b.R = x.Lkeys[i], x.Rkeys[i]
			}
			conds = append(conds, &b)
		}
		x.Cond = append(conds, x.Cond...)
		x.Lkeys, x.Rkeys, x.KeyTypes = nil, nil, nil
	case semiUnique:
		x.Kind = JoinInner
		x.UniqueRight = true
		x.UniqKeys, x.UniqTypes, x.UniqRows = x.Rkeys, keyTypes(x.Rkeys), in.groups
	}
	x.Est = pathCost{startup: ch.cost.startup, total: ch.cost.total, rows: rows}
	return nil
}

// treeParam is the inner join tree of semi join x read once per outer
// row with its first table read through an index keyed by the outer
// row (PostgreSQL's parameterised join path): that table's ways, and
// the tree's cost per outer row, the tree costing plain read once. Only
// a table no outer join makes nullable within the tree, whose columns
// some of x's equalities read, qualifies.
func (fb *fromBuilder) treeParam(x *JoinNode, plain pathCost, outerRows float64) (*semiLeaf, pathCost, bool) {
	n := x.Right
	for {
		j, ok := n.(*JoinNode)
		if !ok {
			break
		}
		switch {
		case j.UniqueLeft || j.Rescan:
			return nil, pathCost{}, false
		case j.Kind == JoinInner, j.Kind == JoinLeft, j.Kind == JoinSemi, j.Kind == JoinAnti:
			n = j.Left
		default:
			return nil, pathCost{}, false
		}
	}
	l, ok := n.(*LeafNode)
	if !ok {
		return nil, pathCost{}, false
	}
	if _, ok := l.Src.(*TableSource); !ok {
		return nil, pathCost{}, false
	}
	var lk, rk []expr.Expr
	for i := range x.Rkeys {
		if m, opaque := expr.ExprRefs(x.Rkeys[i], fb.itemOf); !opaque && m == l.mask() {
			lk, rk = append(lk, x.Lkeys[i]), append(rk, x.Rkeys[i])
		}
	}
	if len(rk) == 0 {
		return nil, pathCost{}, false
	}
	sl := fb.semiLeafPaths(l, lk, rk, nil, nil, outerRows)
	if !sl.in.paramOK {
		return nil, pathCost{}, false
	}
	// the tree's work before its first row (the inner sides it hashes or
	// keeps) is done at each run; the rest shrinks with the rows the
	// table gives
	once := sl.in.plain
	p := sl.in.param
	frac := math.Min(1, p.rows/math.Max(once.rows, 1))
	startup := math.Max(0, plain.startup-once.startup) + p.startup
	run := math.Max(0, (plain.total-plain.startup)-(once.total-once.startup))*frac + p.total - p.startup
	pc := pathCost{startup: startup, total: startup + run, rows: clampRows(plain.rows * frac)}
	return sl, pc, true
}

// ---- the join order search's steps (joinorder.go's bestOrder)

// orderSemis returns the semi and anti joins the join order search
// places: those of the query's own WHERE or ON clauses over one FROM
// item whose conditions read known items.
func (fb *fromBuilder) orderSemis() []*semiJoin {
	var out []*semiJoin
	for _, s := range fb.semis {
		fb.prepSemi(s)
		if s.outer != nil || s.reduced || len(s.nested) > 0 || s.lhsAll {
			continue
		}
		if _, ok := s.root.(*LeafNode); ok {
			out = append(out, s)
		}
	}
	return out
}

// semiItems is the set of FROM items of the pulled-up subqueries that
// are not the query's own (those not made inner joins).
func (fb *fromBuilder) semiItems() uint64 {
	var m uint64
	for _, s := range fb.semis {
		if !s.reduced {
			m |= s.items
		}
	}
	return m
}

// semiBase is the join order search's state for semi join s alone: its
// rows made unique, to join the query's items as the outer side
// (JOIN_UNIQUE_OUTER); not ok when that cannot be.
func (fb *fromBuilder) semiBase(s *semiJoin, l *LeafNode) orderState {
	if s.anti || !s.keyed {
		return orderState{}
	}
	saved := l.Filters
	l.Filters = s.local
	defer func() { l.Filters = saved }()
	sl := fb.semiLeafPaths(l, s.lkeys, s.rkeys, nil, nil, 1)
	groups := fb.estimateGroups(s.rkeys, sl.in.plain.rows)
	if !fb.hashMemOK(s.rkeys, groups) {
		return orderState{}
	}
	u := fb.uniqueCost(sl.in.plain, len(s.rkeys), groups)
	return orderState{cost: u.total, startup: u.startup, rows: groups, ok: true}
}

// semiTransition is the join order search's step of joining item i of
// leaves to the items of prevSet (state prev, items pm) when a semi
// join is involved: i is a semi join's item (it joins when the items it
// reads are there), or prevSet is a semi join's unique-ified rows, which
// join the one item their conditions read. handled is false for an
// ordinary step.
func (fb *fromBuilder) semiTransition(semis []*semiJoin, leaves []*LeafNode, base []orderState, local [][]expr.Expr, prevSet uint64, i int, prev orderState, pm uint64) (st orderState, handled bool) {
	open := -1
	for j, s := range semis {
		if s != nil && prevSet&(1<<uint(j)) != 0 && s.lhs&^pm != 0 {
			open = j
		}
	}
	if s := semis[i]; s != nil {
		if open >= 0 || s.lhs&^pm != 0 {
			return orderState{}, true
		}
		rows, pc := fb.semiStep(s, leaves[i], prev.rows)
		return orderState{cost: prev.cost + pc.total, startup: prev.startup + pc.startup, rows: rows, order: append(append([]int(nil), prev.order...), i), ok: true}, true
	}
	if open < 0 {
		return orderState{}, false
	}
	s := semis[open]
	if prevSet != 1<<uint(open) || s.lhs&^leaves[i].mask() != 0 {
		return orderState{}, true
	}
	rows, pc := fb.uniqueOuterStep(s, leaves[open], leaves[i], local[i], base[open], base[i])
	return orderState{cost: pc.total, startup: pc.startup, rows: rows, order: []int{open, i}, ok: true}, true
}

// semiStep is the rows and cost of semi join s (its item l) done after
// outer items giving outerRows rows.
func (fb *fromBuilder) semiStep(s *semiJoin, l *LeafNode, outerRows float64) (rows float64, cost pathCost) {
	saved := l.Filters
	l.Filters = s.local
	defer func() { l.Filters = saved }()
	sl := fb.semiLeafPaths(l, s.lkeys, s.rkeys, nil, s.rest, outerRows)
	in := sl.in
	in.anti = s.anti
	if len(s.rkeys) > 0 {
		in.groups = fb.estimateGroups(s.rkeys, in.plain.rows)
		in.uniqOK = fb.hashMemOK(s.rkeys, in.groups)
	}
	ch := fb.bestSemi(in, outerRows)
	jsel, _ := fb.semiSel(s.lkeys, s.rkeys, s.rest, in.plain.rows)
	if s.anti {
		jsel = 1 - jsel
	}
	return clampRows(outerRows * jsel), ch.cost
}

// uniqueOuterStep is the rows and cost of semi join s's unique-ified
// rows (of its item sl, state bs) joined with item il (local
// conditions iLocal, state bi) as the inner side: hashed, or read per
// unique row through an index keyed by it.
func (fb *fromBuilder) uniqueOuterStep(s *semiJoin, sl, il *LeafNode, iLocal []expr.Expr, bs, bi orderState) (rows float64, cost pathCost) {
	c := fb.costs()
	savedS, savedI := sl.Filters, il.Filters
	sl.Filters, il.Filters = s.local, iLocal
	defer func() { sl.Filters, il.Filters = savedS, savedI }()
	innerRows := fb.leafRows(sl)
	jsel, _ := fb.semiSel(s.lkeys, s.rkeys, s.rest, innerRows)
	rows = clampRows(bi.rows * jsel)
	outer := pathCost{startup: bs.startup, total: bs.cost, rows: bs.rows}
	inner := pathCost{total: bi.cost, rows: bi.rows}
	best := c.innerHashCost(outer, inner, len(s.lkeys), fb.bucketSize(s.lkeys, bi.rows), rows)
	// the item read through an index per unique row
	if ts, ok := il.Src.(*TableSource); ok {
		ri := fb.relInfo(il)
		valOK := func(v expr.Expr) bool {
			m, opaque := expr.ExprRefs(v, fb.itemOf)
			return m == 0 && !opaque && !expr.IsVolatile(v)
		}
		cs := condSet{}
		for _, f := range iLocal {
			cs.add(f, ri.colOf, valOK)
		}
		perLoop := clampRows(ri.size.tuples * ri.restrictSel(iLocal, valOK))
		keyed := false
		for k := range s.lkeys {
			col, t, ok := ri.colOf(s.lkeys[k])
			if !ok || !keyCompatible(t, s.rkeys[k].Type()) {
				continue
			}
			if cc := cs.at(col); cc.eq == nil {
				cc.eq, cc.eqJoin = s.rkeys[k], true
				perLoop *= ri.eqSel(col, nil)
				keyed = true
			}
		}
		if keyed {
			perLoop = clampRows(perLoop)
			if p, ok := ts.bestPath(c, fb.a.S, ri, cs, iLocal, perLoop, bs.rows, true); ok {
				nl := pathCost{startup: bs.startup + p.cost.startup, total: bs.cost + bs.rows*p.cost.total + c.cpuTuple*bs.rows*perLoop}
				if !c.nestloop {
					nl.startup += disableCost
					nl.total += disableCost
				}
				if fuzzyBetter(nl, best) {
					best = nl
				}
			}
		}
	}
	return rows, best
}

// orderTree builds the left-deep tree of a join order: the semi joins'
// items joined as semi or anti joins, or, first in the order, made
// unique and joined as the outer side of an inner join.
func (fb *fromBuilder) orderTree(leaves []*LeafNode, semis []*semiJoin, order []int) PlanNode {
	var tree PlanNode = leaves[order[0]]
	for k, i := range order[1:] {
		j := &JoinNode{Kind: JoinInner, Left: tree, Right: leaves[i]}
		switch {
		case semis == nil:
		case semis[i] != nil:
			s := semis[i]
			j.Kind, j.semi, s.node = s.kind(), s, j
		case k == 0 && semis[order[0]] != nil:
			s := semis[order[0]]
			j.UniqueLeft, j.semi, s.node = true, s, j
		}
		tree = j
	}
	return tree
}
