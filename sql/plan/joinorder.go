package plan

import (
	"math/bits"

	"lockd/sql/expr"
)

// Join order. A FROM clause of inner joins alone (comma-separated items,
// INNER JOIN ... ON, CROSS JOIN) may be joined in any order; the written
// order can be ruinous (from a, b, c where a.x = c.x and b.y = c.y joins
// a with b unconditionally first). Like PostgreSQL's
// standard_join_search, the planner tries the orders by dynamic
// programming over the sets of items — here left-deep ones, each item
// joined to the set before it, preferring items a join condition
// connects — and keeps the cheapest, for up to join_collapse_limit (8)
// items (two items included: either may be the outer side of a nested
// loop). Outer joins, LATERAL items and joins of more items keep the
// written order.

// maxReorder is PostgreSQL's join_collapse_limit default.
const maxReorder = 8

// joinCond is a condition of the FROM clause with the items it reads.
type joinCond struct {
	e    expr.Expr
	mask uint64
}

// reorder returns root rebuilt in the cheapest order when it is a tree
// of inner joins the planner may reorder, and where with every ON
// condition of it added (they are placed by the items they read).
func (fb *fromBuilder) reorder(root PlanNode, where []expr.Expr) (PlanNode, []expr.Expr) {
	root, where = fb.reduceSemis(root, where) // semiplan.go
	semiUnits := fb.orderSemis()
	nitems := fb.nitems - bits.OnesCount64(fb.semiItems())
	if nitems+len(semiUnits) > maxReorder {
		semiUnits = nil
	}
	if fb.keepSides || root == nil || nitems+len(semiUnits) < 2 || nitems > maxReorder {
		return root, where
	}
	var leaves []*LeafNode
	ok := true
	var walk func(n PlanNode)
	walk = func(n PlanNode) {
		switch x := n.(type) {
		case *LeafNode:
			if fb.deps[x.item] != 0 || x.Lateral {
				ok = false
			}
			leaves = append(leaves, x)
		case *JoinNode:
			if x.Kind != JoinInner {
				ok = false
			}
			walk(x.Left)
			walk(x.Right)
		}
	}
	walk(root)
	if !ok || len(leaves) != nitems {
		return root, where
	}
	var semis []*semiJoin // parallel to leaves: the semi join an item does
	if len(semiUnits) > 0 {
		semis = make([]*semiJoin, len(leaves))
		for _, s := range semiUnits {
			leaves = append(leaves, s.root.(*LeafNode))
			semis = append(semis, s)
		}
	}
	all := append([]expr.Expr(nil), where...)
	for _, on := range fb.ons {
		all = append(all, on.e)
	}
	var conds []joinCond
	full := uint64(1)<<uint(fb.nitems) - 1
	for _, c := range all {
		m, opaque := expr.ExprRefs(c, fb.itemOf)
		if opaque || expr.IsVolatile(c) {
			return root, where // keep its place in the written tree
		}
		if m == 0 {
			continue
		}
		conds = append(conds, joinCond{c, m & full})
	}
	fb.orderConds = conds
	order := fb.bestOrder(leaves, conds, semis)
	if order == nil {
		return root, where
	}
	tree := fb.orderTree(leaves, semis, order) // semichoose.go
	fb.ons = nil
	return tree, all
}

// orderState is the cheapest left-deep order found for a set of items
// (startup: its cost before the first row, which breaks the ties of semi
// joins' orders, semichoose.go).
type orderState struct {
	cost, rows float64
	order      []int // indexes into the leaves
	ok         bool
	startup    float64
}

// bestOrder runs the dynamic programming and returns the order of the
// leaves (their indexes), or nil to keep the written one.
func (fb *fromBuilder) bestOrder(leaves []*LeafNode, conds []joinCond, semis []*semiJoin) []int {
	n := len(leaves)
	c := fb.costs()
	// each item alone: its rows after its own conditions and the cost of
	// reading it
	base := make([]orderState, n)
	local := make([][]expr.Expr, n)
	for i, l := range leaves {
		if semis != nil && semis[i] != nil {
			// a semi join's item alone: its rows made unique
			local[i] = semis[i].local
			base[i] = fb.semiBase(semis[i], l) // semichoose.go
			base[i].order = []int{i}
			continue
		}
		for _, jc := range conds {
			if jc.mask == l.mask() {
				local[i] = append(local[i], jc.e)
			}
		}
		rows, cost := fb.itemEstimate(l, local[i])
		base[i] = orderState{cost: cost, rows: rows, order: []int{i}, ok: true}
	}
	best := make([]orderState, 1<<uint(n))
	for i := range base {
		best[1<<uint(i)] = base[i]
	}
	itemMask := func(set uint64) uint64 {
		var m uint64
		for i := 0; i < n; i++ {
			if set&(1<<uint(i)) != 0 {
				m |= leaves[i].mask()
			}
		}
		return m
	}
	for set := uint64(1); set < 1<<uint(n); set++ {
		if bits.OnesCount64(set) < 2 {
			continue
		}
		sm := itemMask(set)
		// items a condition connects to the rest come first; if none
		// is, a cross join it is
		for pass := 0; pass < 2 && !best[set].ok; pass++ {
			for i := 0; i < n; i++ {
				bit := uint64(1) << uint(i)
				if set&bit == 0 || !best[set&^bit].ok {
					continue
				}
				prev := best[set&^bit]
				pm := itemMask(set &^ bit)
				if semis != nil {
					if st, handled := fb.semiTransition(semis, leaves, base, local, set&^bit, i, prev, pm); handled {
						if st.ok && (!best[set].ok || fuzzyBetter(pathCost{startup: st.startup, total: st.cost}, pathCost{startup: best[set].startup, total: best[set].cost})) {
							best[set] = st
						}
						continue
					}
				}
				lm := leaves[i].mask()
				connected := false
				sel := 1.0
				nkeys := 0
				for _, jc := range conds {
					if jc.mask&lm != 0 && jc.mask&pm != 0 && jc.mask&^sm == 0 {
						connected = true
						if b, ok := jc.e.(*expr.BinopExpr); ok && b.Op == "=" {
							l, r, ok := equiKey(b, pm, lm, fb.itemOf)
							if ok {
								sel *= fb.keySel(l, r)
								nkeys++
								continue
							}
						}
						sel *= defaultIneqSel
					}
				}
				if pass == 0 && !connected {
					continue
				}
				rows := clampRows(prev.rows * base[i].rows * sel)
				var join float64
				startup := prev.startup
				if nkeys > 0 {
					// hash the smaller side
					inner, outer := base[i].rows, prev.rows
					if outer < inner {
						inner, outer = outer, inner
					}
					join = base[i].cost + c.hashJoinCost(outer, inner, rows, nkeys)
					startup += base[i].cost
					if nl, ok := fb.paramCost(leaves[i], local[i], pm, prev.rows); ok && nl < join {
						join, startup = nl, prev.startup
					}
				} else {
					join = base[i].cost + c.cpuTuple*prev.rows*base[i].rows
				}
				cost := prev.cost + join
				if !best[set].ok || cost < best[set].cost {
					best[set] = orderState{cost: cost, rows: rows, startup: startup, order: append(append([]int(nil), prev.order...), i), ok: true}
				}
			}
		}
	}
	return best[1<<uint(n)-1].order
}

// itemEstimate is the rows a FROM item gives under its own conditions
// and the cost of reading it once.
func (fb *fromBuilder) itemEstimate(l *LeafNode, local []expr.Expr) (rows, cost float64) {
	saved := l.Filters
	l.Filters = local
	defer func() { l.Filters = saved }()
	rows = fb.leafRows(l)
	ri := fb.relInfo(l)
	if ri == nil {
		return rows, rows * fb.costs().cpuTuple
	}
	c := fb.costs()
	if ts, ok := l.Src.(*TableSource); ok {
		cs := condSet{}
		valOK := func(v expr.Expr) bool {
			m, opaque := expr.ExprRefs(v, fb.itemOf)
			return m == 0 && !opaque && !expr.IsVolatile(v)
		}
		for _, f := range local {
			cs.add(f, ri.colOf, valOK)
		}
		p, _ := ts.bestPath(c, fb.a.S, ri, cs, local, rows, 1, false)
		return rows, p.cost.total
	}
	return rows, c.seqScanCost(ri.size, local, rows).total
}

// paramCost is the cost of reading table leaf l once per row of the
// items prev (outerRows of them) through an index keyed by a join
// condition between them, if it has such an index.
func (fb *fromBuilder) paramCost(l *LeafNode, local []expr.Expr, prev uint64, outerRows float64) (float64, bool) {
	ts, ok := l.Src.(*TableSource)
	if !ok {
		return 0, false
	}
	ri := fb.relInfo(l)
	c := fb.costs()
	valOK := func(v expr.Expr) bool {
		m, opaque := expr.ExprRefs(v, fb.itemOf)
		return m == 0 && !opaque && !expr.IsVolatile(v)
	}
	cs := condSet{}
	for _, f := range local {
		cs.add(f, ri.colOf, valOK)
	}
	rows := clampRows(ri.size.tuples * ri.restrictSel(local, valOK))
	perLoop := rows
	keyed := false
	// join keys: equalities between a column of l and the previous items
	for _, jc := range fb.condsBetween(l.mask(), prev) {
		b, ok := jc.(*expr.BinopExpr)
		if !ok || b.Op != "=" {
			continue
		}
		outer, inner, ok := equiKey(b, prev, l.mask(), fb.itemOf)
		if !ok {
			continue
		}
		col, t, ok := ri.colOf(inner)
		if !ok || !keyCompatible(t, outer.Type()) {
			continue
		}
		if cc := cs.at(col); cc.eq == nil {
			cc.eq, cc.eqJoin = outer, true
			perLoop *= ri.eqSel(col, nil)
			keyed = true
		}
	}
	if !keyed {
		return 0, false
	}
	p, ok := ts.bestPath(c, fb.a.S, ri, cs, local, clampRows(perLoop), outerRows, true)
	if !ok {
		return 0, false
	}
	return outerRows*p.cost.total + c.cpuTuple*outerRows*clampRows(perLoop), true
}

// condsBetween returns the conditions (of the ones reorder collected)
// that read items a and b and nothing else outside them.
func (fb *fromBuilder) condsBetween(a, b uint64) []expr.Expr {
	var out []expr.Expr
	for _, jc := range fb.orderConds {
		if jc.mask&a != 0 && jc.mask&b != 0 && jc.mask&^(a|b) == 0 {
			out = append(out, jc.e)
		}
	}
	return out
}
