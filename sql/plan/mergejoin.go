package plan

import (
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Merge joins. Once chooseMethods has picked a hash join or a nested
// loop for a join with equality keys, considerMerge weighs merging the
// two sides in key order instead, with the paths PostgreSQL 15's
// joinpath.c generates:
//
//   - both sides sorted, each read its cheapest way (sort_inner_and_outer;
//     a side whose cheapest way already gives the key order is not sorted);
//   - the outer side read in key order along an index, the inner side
//     sorted or read along an index too (match_unsorted_outer with
//     generate_mergejoin_paths);
//
// and for an inner join the same with the sides swapped (PostgreSQL tries
// both rels as the outer one). A side is in key order when it is a table
// read along an index whose next column, after those pinned by equality,
// is the key (the pathkeys of an index scan); a merge join over several
// keys sorts. Costs are initial_cost_mergejoin and final_cost_mergejoin
// (mergecost.go) with mergejoinscansel's fractions of each side read:
// a scan stops once the other side's largest key is passed, so a small
// sorted table merged with a large indexed one reads only the start of
// the index.

// mergeInfo is what EXPLAIN needs to cost a merge join as the planner did.
type mergeInfo struct {
	outerFrac, innerFrac scanFraction
	keyRows              float64
	innerUnique          bool // no mark and restore: unique keys, no other condition
	uniqueKeys           bool // the inner keys are unique (innerrel_is_unique)
}

// mergeSide is a way to give one side of a merge join in key order.
type mergeSide struct {
	in   sortedInput
	path *pathChoice // a table leaf's scan to use (nil: as it is)
	cs   condSet     // the conditions path was chosen under
}

// considerMerge makes x a merge join when that is cheaper than the method
// chosen. outerRows is the estimate of x.Left's rows.
func (fb *fromBuilder) considerMerge(x *JoinNode, outerRows float64) {
	if len(x.Lkeys) == 0 || x.UniqueLeft || x.UniqueRight || x.semi != nil || fb.keepSides || fb.lock != nil ||
		(fb.sel != nil && len(fb.sel.LockingClause) > 0) {
		return
	}
	if x.Kind == JoinFull && len(x.Cond) > 0 {
		return
	}
	for _, t := range x.KeyTypes {
		if !orderedKey(t) {
			return
		}
	}
	// a right side that reads the left row only through its index keys
	// (a parameterised scan) can be read on its own instead
	lm := x.Left.mask()
	var param *LeafNode
	if fb.dependsOn(x.Right, lm) {
		leaf, ok := x.Right.(*LeafNode)
		if !ok || leaf.Lateral {
			return
		}
		ts, ok := leaf.Src.(*TableSource)
		if !ok || !ts.keysReadLevel {
			return
		}
		param = leaf
	}
	if fb.dependsOn(x.Left, x.Right.mask()) || leafPartitioned(x.Left) || leafPartitioned(x.Right) {
		return
	}
	c := fb.costs()
	ms := mergeSettingsOf(fb.a.S)
	rows := x.Est.rows
	innerRows := fb.estRows(x.Right)

	// the cost of the method chosen
	var cur float64
	rightPlain := estTotal(x.Right)
	if param != nil {
		p, _ := fb.plainPath(param)
		rightPlain = p.cost.total
	}
	switch {
	case x.Rescan:
		cur = estTotal(x.Left) + outerRows*estTotal(x.Right) + c.cpuTuple*rows
		if !c.nestloop {
			cur += disableCost
		}
	default:
		o, i := outerRows, innerRows
		ow, iw := fb.nodeWidth(x.Left), fb.nodeWidth(x.Right)
		if x.Kind == JoinRight || x.HashLeft {
			o, i, ow, iw = i, o, iw, ow
		}
		st, run := c.hashBatchIO(ms, o, ow, i, iw)
		cur = estTotal(x.Left) + rightPlain + c.hashJoinCost(o, i, rows, len(x.Lkeys)) + st + run
		if !c.hashjoin {
			cur += disableCost
		}
	}

	keySel := 1.0
	for i := range x.Lkeys {
		keySel *= fb.keySel(x.Lkeys[i], x.Rkeys[i])
	}
	keyRows := clampRows(outerRows * innerRows * keySel)
	qual := c.qualCost(x.Cond)

	type cand struct {
		est          mergeEstimate
		outer, inner mergeSide
		swap         bool
		of, inf      scanFraction
		unique       bool
	}
	var best *cand
	try := func(swap bool) {
		left, right := x.Left, x.Right
		lkeys, rkeys := x.Lkeys, x.Rkeys
		lrows, rrows := outerRows, innerRows
		if swap {
			left, right, lkeys, rkeys, lrows, rrows = right, left, rkeys, lkeys, rrows, lrows
		}
		unique := len(x.Cond) == 0 && len(x.Filters) == 0 && fb.uniqueKeys(rkeys)
		of, inf := fb.mergeScanSel(lkeys[0], rkeys[0])
		kind := x.Kind
		if swap && kind == JoinRight {
			kind = JoinLeft
		}
		switch kind {
		case JoinLeft:
			of = scanFraction{0, 1}
		case JoinRight:
			inf = scanFraction{0, 1}
		case JoinFull:
			of, inf = scanFraction{0, 1}, scanFraction{0, 1}
		}
		lsorted, lcheap := fb.mergeSides(left, lkeys, lrows)
		rsorted, rcheap := fb.mergeSides(right, rkeys, rrows)
		consider := func(o, i mergeSide) {
			est := c.mergeJoinCost(ms, o.in, i.in, of, inf, len(lkeys), keyRows, rows, qual, unique)
			// of two orders costing the same within add_path's fuzz,
			// the one PostgreSQL generates first: the earlier FROM item
			// outer
			// (a right join is planned as the left join of its sides
			// swapped first)
			if best != nil && swap != best.swap && fuzzyEqual(est.cost.total, best.est.cost.total) &&
				fuzzyEqual(est.cost.startup, best.est.cost.startup) {
				if x.Kind != JoinRight && (x.Left.mask() < x.Right.mask()) == swap {
					return
				}
				best = nil
			}
			if best == nil || est.cost.total < best.est.cost.total {
				best = &cand{est: est, outer: o, inner: i, swap: swap, of: of, inf: inf, unique: unique}
			}
		}
		// sort_inner_and_outer
		consider(lcheap, rcheap)
		// match_unsorted_outer: an outer side in key order, the inner
		// sorted or in key order
		if lsorted != nil {
			consider(*lsorted, rcheap)
			if rsorted != nil {
				consider(*lsorted, *rsorted)
			}
		}
	}
	try(false)
	if x.Kind == JoinInner || x.Kind == JoinRight && param == nil {
		try(true)
	}
	if best == nil {
		return
	}
	// an ORDER BY the merge gives needs no Sort after it; the other
	// methods pay for one
	if p := fb.query; p != nil && p.From == x && !p.Grouped && !p.Distinct && len(p.DistinctOn) == 0 && len(p.Sort) > 0 {
		lk, rk := x.Lkeys, x.Rkeys
		if best.swap {
			lk, rk = rk, lk
		}
		if sortedBy(p, x.Kind, lk, rk) {
			cur += c.sortCost(rows, fb.nodeWidth(x), ms.workMem).total
		}
	}
	if !(best.est.cost.total < cur) {
		return
	}
	// merge: undo a parameterised scan, swap the sides if the other one
	// is the outer, read each side as chosen
	if param != nil {
		fb.deps[param.item] &^= lm
		p, cs := fb.plainPath(param)
		param.Src.(*TableSource).apply(p, cs)
		param.Est = p.cost
	}
	if best.swap {
		x.Left, x.Right = x.Right, x.Left
		x.Lkeys, x.Rkeys = x.Rkeys, x.Lkeys
		if x.Kind == JoinRight {
			x.Kind = JoinLeft
		}
	}
	x.Rescan, x.HashLeft = false, false
	x.Merge = true
	x.SortLeft, x.SortRight = best.outer.in.sort, best.inner.in.sort
	x.MaterializeRight = best.est.materialize
	for _, s := range []struct {
		n    PlanNode
		side mergeSide
	}{{x.Left, best.outer}, {x.Right, best.inner}} {
		if s.side.path == nil {
			continue
		}
		leaf := s.n.(*LeafNode)
		ts := leaf.Src.(*TableSource)
		ts.apply(*s.side.path, s.side.cs)
		ts.Backward = false
		leaf.Est = s.side.path.cost
	}
	x.mergeInfo = &mergeInfo{outerFrac: best.of, innerFrac: best.inf, keyRows: keyRows, innerUnique: best.unique, uniqueKeys: fb.uniqueKeys(x.Rkeys)}
}

// leafPartitioned reports whether n is a partitioned table's leaf (an
// Append, in no key order; lockd has no Merge Append).
func leafPartitioned(n PlanNode) bool {
	l, ok := n.(*LeafNode)
	if !ok {
		return false
	}
	_, ok = l.Src.(*PartitionedSource)
	return ok
}

// plainPath is the cheapest way to read table leaf l on its own, without
// the join's keys, and the conditions it uses.
func (fb *fromBuilder) plainPath(l *LeafNode) (pathChoice, condSet) {
	ts := l.Src.(*TableSource)
	ri := fb.relInfo(l)
	cs := fb.leafConds(l, ri)
	p, _ := ts.bestPath(fb.costs(), fb.a.S, ri, cs, l.Filters, fb.leafRows(l), 1, false)
	return p, cs
}

// leafConds are leaf l's own conditions as index bounds.
func (fb *fromBuilder) leafConds(l *LeafNode, ri *relInfo) condSet {
	valOK := func(v expr.Expr) bool {
		m, opaque := expr.ExprRefs(v, fb.itemOf)
		return m == 0 && !opaque && !expr.IsVolatile(v)
	}
	cs := condSet{}
	for _, f := range l.Filters {
		cs.add(f, ri.colOf, valOK)
	}
	return cs
}

// mergeSides returns the ways side n (of about rows rows) can be given in
// the order of keys: along an index, if it is a table with one that has
// that order (nil otherwise), and its cheapest way, sorted unless that is
// already in order.
func (fb *fromBuilder) mergeSides(n PlanNode, keys []expr.Expr, rows float64) (*mergeSide, mergeSide) {
	width := fb.nodeWidth(n)
	cheap := mergeSide{in: sortedInput{cost: pathCost{total: estTotal(n), rows: rows}, width: width, sort: true}}
	leaf, ok := n.(*LeafNode)
	if !ok || leaf.Lateral || len(keys) != 1 {
		if l, ok := n.(*LeafNode); ok {
			cheap.in.cost = l.Est
			cheap.in.cost.rows = rows
		}
		return nil, cheap
	}
	ts, ok := leaf.Src.(*TableSource)
	if !ok {
		cheap.in.cost = leaf.Est
		cheap.in.cost.rows = rows
		return nil, cheap
	}
	ri := fb.relInfo(leaf)
	plain, cs := fb.plainPath(leaf)
	cheap.in.cost = plain.cost
	cheap.in.cost.rows = rows
	cheap.path, cheap.cs = &plain, cs
	col, _, ok := ri.colOf(keys[0])
	if !ok {
		return nil, cheap
	}
	c := fb.costs()
	var sorted *mergeSide
	for _, ix := range fb.a.S.Cat().TableIndexes(ts.T) {
		ch := pinned(ix, cs)
		if ch.exact || !ordersBy(ix, ch.neq, []int{col}) {
			continue
		}
		ch.in, ch.rng = false, false
		if cc := cs[ix.Cols[ch.neq]]; cc != nil {
			ch.rng = cc.lo != nil || cc.hi != nil || cc.notNull
		}
		only := c.indexonly && ts.coveredBy(ix)
		pc := c.indexScanCost(ri.size, indexSize(fb.a.S, ix, ri.size), ri.indexSel(ch, cs), nIndexQuals(ch, cs), nonIndexQuals(leaf.Filters, ch, cs), rows, 1, saScans(ch, cs), ri.indexCorrelation(ix), false, only)
		pc.rows = rows
		if sorted == nil || pc.total < sorted.in.cost.total {
			p := pathChoice{ch: ch, cost: pc}
			sorted = &mergeSide{in: sortedInput{cost: pc, width: width}, path: &p, cs: cs}
		}
	}
	// the cheapest way already in key order needs no Sort
	if plain.ch.ix != nil && ordersBy(plain.ch.ix, plain.ch.neq, []int{col}) && !plain.ch.in {
		cheap.in.sort = false
	}
	return sorted, cheap
}

// uniqueKeys reports whether keys include a column of a table that a
// unique index covers alone: each row on the other side matches at most
// one (innerrel_is_unique, for single-column keys).
func (fb *fromBuilder) uniqueKeys(keys []expr.Expr) bool {
	for _, k := range keys {
		if ri, c, ok := fb.keyColumn(k); ok && ri.unique[c] {
			return true
		}
	}
	return false
}

// nodeWidth estimates the bytes of a row of n: the columns of a table
// read above its scan at their average width from ANALYZE, or their
// type's (the width of PostgreSQL's path target); 32 else.
func (fb *fromBuilder) nodeWidth(n PlanNode) float64 {
	switch x := n.(type) {
	case *LeafNode:
		ri := fb.relInfo(x)
		if ri == nil {
			return 32
		}
		ts, _ := x.Src.(*TableSource)
		w := 0.0
		for i := range ri.t.Cols {
			if ts != nil && ts.need != nil && !ts.needCol(i) {
				continue // only the columns read above the scan
			}
			if cs := ri.colStats(i); cs != nil && cs.AvgWidth > 0 {
				w += float64(cs.AvgWidth)
				continue
			}
			w += float64(typeWidth(ri.t.Cols[i].Type()))
		}
		return w
	case *JoinNode:
		return fb.nodeWidth(x.Left) + fb.nodeWidth(x.Right)
	}
	return 32
}

// mergeScanSel is mergejoinscansel for the first merge key l = r (l on
// the outer side): the fraction of each side read before the first match
// (the rows below the other side's smallest key) and where its scan
// stops (the rows up to the other side's largest key). Only estimates
// from statistics count; of the two ends only the smaller is believed,
// of the two starts the larger.
func (fb *fromBuilder) mergeScanSel(l, r expr.Expr) (outer, inner scanFraction) {
	outer, inner = scanFraction{0, 1}, scanFraction{0, 1}
	lri, lc, lok := fb.keyColumn(l)
	rri, rc, rok := fb.keyColumn(r)
	if !lok || !rok {
		return
	}
	lmin, lmax, ok1 := lri.variableRange(lc)
	rmin, rmax, ok2 := rri.variableRange(rc)
	if !ok1 || !ok2 {
		return
	}
	lt, rt := lri.t.Cols[lc].Type(), rri.t.Cols[rc].Type()
	sel := func(ri *relInfo, c int, op string, d types.Datum, t types.Type) (float64, bool) {
		s := ri.ineqSel(c, op, &expr.ConstExpr{T: t, D: d})
		return s, s != defaultIneqSel
	}
	if s, ok := sel(lri, lc, "<=", rmax, rt); ok {
		outer.end = s
	}
	if s, ok := sel(rri, rc, "<=", lmax, lt); ok {
		inner.end = s
	}
	switch {
	case outer.end > inner.end:
		outer.end = 1
	case outer.end < inner.end:
		inner.end = 1
	default:
		outer.end, inner.end = 1, 1
	}
	if s, ok := sel(lri, lc, "<", rmin, rt); ok {
		outer.start = s
	}
	if s, ok := sel(rri, rc, "<", lmin, lt); ok {
		inner.start = s
	}
	switch {
	case outer.start < inner.start:
		outer.start = 0
	case outer.start > inner.start:
		inner.start = 0
	default:
		outer.start, inner.start = 0, 0
	}
	if outer.start >= outer.end {
		outer = scanFraction{0, 1}
	}
	if inner.start >= inner.end {
		inner = scanFraction{0, 1}
	}
	return
}

// variableRange is get_variable_range: the smallest and largest values
// ANALYZE saw in column c, from its histogram's ends and its most common
// values.
func (ri *relInfo) variableRange(c int) (lo, hi types.Datum, ok bool) {
	cs := ri.colStats(c)
	if cs == nil {
		return lo, hi, false
	}
	cmp := comparatorOf(ri.t.Cols[c].Type())
	consider := func(d types.Datum) {
		if d.Null {
			return
		}
		if !ok || cmp(d, lo) < 0 {
			lo = d
		}
		if !ok || cmp(d, hi) > 0 {
			hi = d
		}
		ok = true
	}
	if h := cs.Histogram; len(h) > 0 {
		consider(h[0])
		consider(h[len(h)-1])
	}
	for _, m := range cs.MCV {
		consider(m)
	}
	return lo, hi, ok
}

// sortedBy reports whether the rows of a merge join of kind kind on keys
// lkeys = rkeys (lkeys the outer side's) come in p's ORDER BY order: one
// key, ascending with NULLs last, that is the first merge key — the outer
// side's, or for an inner join either side's (they are equal). A right or
// full join gives no order (build_join_pathkeys): its unmatched inner rows
// have NULL outer keys.
func sortedBy(p *SelectPlan, kind joinKind, lkeys, rkeys []expr.Expr) bool {
	if len(p.Sort) != 1 || (kind != JoinInner && kind != JoinLeft) {
		return false
	}
	k := p.Sort[0]
	if k.Desc() || k.NullsFirst() {
		return false
	}
	e := k.E
	if o, ok := e.(*outputRef); ok {
		e = p.Targets[o.i]
	}
	key := expr.ExprKey(e)
	if key == expr.ExprKey(lkeys[0]) {
		return true
	}
	return kind == JoinInner && key == expr.ExprKey(rkeys[0])
}

// mergeOrder drops p's Sort when the merge join at the top of its FROM
// tree gives that order.
func mergeOrder(p *SelectPlan) {
	x, ok := p.From.(*JoinNode)
	if !ok || !x.Merge || p.Grouped || p.Distinct || len(p.DistinctOn) > 0 || p.Srf || p.RowLocks != nil {
		return
	}
	if sortedBy(p, x.Kind, x.Lkeys, x.Rkeys) {
		p.Sort = nil
	}
}
