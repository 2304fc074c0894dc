package plan

import (
	"math"
	"sort"

	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// Bitmap scans. A Bitmap Heap Scan reads the heap pages that one or more
// index scans found, in block order, each page once: the index scans
// (Bitmap Index Scan) collect tuple ids into a bitmap, BitmapAnd
// intersects bitmaps and BitmapOr unites them (sql/exec/tidbitmap.go).
// They are PostgreSQL's answer to a condition that selects too many rows
// for an index scan's random heap reads and too few for a sequential
// scan, to an OR of conditions each of which an index answers, and to
// two conditions on different indexes that together select few rows.
//
// The planner builds them as PostgreSQL's create_index_paths does: every
// index path with index conditions is a candidate, and so is, for each OR
// of the table's conditions, a BitmapOr whose arms are the best bitmap
// (choose_bitmap_and) of the index paths each arm's conditions allow
// (generate_bitmap_or_paths); choose_bitmap_and then picks the cheapest
// heap scan over one candidate or an AND of several, and that heap scan
// competes with the sequential and index scans on cost. Costs are
// costsize.c's: cost_bitmap_tree_node, cost_bitmap_and_node,
// cost_bitmap_or_node and cost_bitmap_heap_scan with compute_bitmap_pages.

// BitmapOp is the kind of a bitmap tree node.
type BitmapOp uint8

const (
	BitmapIndexScan BitmapOp = iota // one index's tuple ids
	BitmapAnd                       // the intersection of its kids'
	BitmapOr                        // the union of its kids'
)

// BitmapNode is one node of a bitmap scan's tree. It is planner output
// read by the executor; it is not changed after planning.
type BitmapNode struct {
	Op BitmapOp
	// Scan (BitmapIndexScan) is the index and its bounds, as an index
	// scan of the table would have them (useChoice): the executor reads
	// its key ranges (their values may read the level row: a nested
	// loop's outer row)
	Scan *TableSource
	Kids []*BitmapNode

	ch      indexChoice // BitmapIndexScan: the index path
	cs      condSet
	conds   []expr.Expr // the table's conditions it carries out
	orConds []expr.Expr // BitmapOr: the ORs it carries out whole
	// cost is cost_bitmap_tree_node's (what choose_bitmap_and sorts and
	// the heap scan starts with), sel the fraction of the table's rows it
	// selects, shown its plan node's costs and rows for EXPLAIN, pages the
	// index pages under it (get_indexpath_pages)
	cost  float64
	sel   float64
	shown pathCost
	pages float64
	param bool // an index condition reads a nested loop's outer row

	// Recheck (the tree's root) are the table's conditions it carries
	// out, which a lossy page's rows are checked against again: by the
	// FROM item's filters, which hold them, or with OwnRow (a partition's
	// scan, whose conditions read its own row) by the scan itself
	Recheck []expr.Expr
	OwnRow  bool
	heap    pathCost // the heap scan's cost (the tree's root)
}

// indexPathNode makes the Bitmap Index Scan of index path ch under
// conditions cs: its index cost (btcostestimate's, for loops runs) and
// cost_bitmap_tree_node's charge for handling the bitmap per row of the
// table's estimated rows (the index path's rows, as PostgreSQL counts
// them).
func (ts *TableSource) indexPathNode(c *costs, b *expr.Backend, ri *relInfo, ch indexChoice, cs condSet, rows, loops float64) *BitmapNode {
	sel := ri.indexSel(ch, cs)
	isz := indexSize(b, ch.ix, ri.size)
	ic := c.btreeCost(ri.size, isz, sel, nIndexQuals(ch, cs), loops, saScans(ch, cs), ch.exact && ch.ix.Unique && !ch.null)
	scan := &TableSource{T: ts.T, alias: ts.alias, cols: ts.cols, Defs: ts.Defs}
	scan.useChoice(ch, cs)
	scan.conds = cs
	n := &BitmapNode{Op: BitmapIndexScan, Scan: scan, ch: ch, cs: cs, sel: sel, pages: isz.pages,
		param: usesJoinKey(ch, cs)}
	n.conds = usedConds(ch, cs)
	n.shown = pathCost{total: ic.total, rows: clampRows(sel * ri.size.tuples)}
	n.cost = ic.total + 0.1*c.cpuOperator*rows
	return n
}

// usedConds lists the conditions index path ch carries out.
func usedConds(ch indexChoice, cs condSet) []expr.Expr {
	var out []expr.Expr
	for i := 0; i < ch.neq; i++ {
		if cc := cs[ch.ix.Cols[i]]; cc != nil && cc.eqSrc != nil {
			out = append(out, cc.eqSrc)
		}
	}
	if ch.neq < len(ch.ix.Cols) && (ch.in || ch.rng) {
		if cc := cs[ch.ix.Cols[ch.neq]]; cc != nil {
			if ch.in {
				out = append(out, cc.inSrc)
			} else {
				for _, s := range []expr.Expr{cc.loSrc, cc.hiSrc, cc.notNullSrc} {
					if s != nil {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// indexPaths lists the index paths conditions cs allow on ts's indexes
// (those with index conditions), as build_index_paths makes them. With
// param only those using a join key.
func (ts *TableSource) indexPaths(b *expr.Backend, cs condSet, param bool) []indexChoice {
	var out []indexChoice
	for _, ix := range b.Cat().TableIndexes(ts.T) {
		ch := pinned(ix, cs)
		if !ch.in && !ch.rng && ch.neq < len(ix.Cols) {
			if cc := cs[ix.Cols[ch.neq]]; cc != nil && (cc.lo != nil || cc.hi != nil || cc.notNull) {
				ch.rng = true
			}
		}
		if ch.neq == 0 && !ch.in && !ch.rng {
			continue
		}
		if param && !usesJoinKey(ch, cs) {
			continue
		}
		out = append(out, ch)
	}
	return out
}

// bitmapPath is the cheapest Bitmap Heap Scan of ts under conditions cs,
// as create_index_paths builds it: choose_bitmap_and over the index paths
// and the BitmapOrs of the table's ORs. quals are all the table's
// conditions, rows the rows they keep (per loop); with param, the bitmap
// must use a join key (pcs holds them), and its index paths are costed
// for loops runs.
func (ts *TableSource) bitmapPath(c *costs, b *expr.Backend, ri *relInfo, cs condSet, quals []expr.Expr, rows, loops float64, param bool) (pathChoice, bool) {
	var cands []*BitmapNode
	if param {
		for _, ch := range ts.indexPaths(b, cs, true) {
			cands = append(cands, ts.indexPathNode(c, b, ri, ch, cs, rows, loops))
		}
		if len(cands) == 0 {
			return pathChoice{}, false
		}
		// the restriction paths combine with the join paths
		plain := condSet{}
		for col, cc := range cs {
			if !cc.eqJoin {
				plain[col] = cc
			}
		}
		for _, ch := range ts.indexPaths(b, plain, false) {
			cands = append(cands, ts.indexPathNode(c, b, ri, ch, plain, clampRows(ri.size.tuples*ri.restrictSel(quals, isRowFree)), 1))
		}
	} else {
		for _, ch := range ts.indexPaths(b, cs, false) {
			cands = append(cands, ts.indexPathNode(c, b, ri, ch, cs, rows, 1))
		}
	}
	cands = append(cands, ts.orPaths(c, b, ri, quals, rows)...)
	if len(cands) == 0 {
		return pathChoice{}, false
	}
	tree := ts.chooseBitmapAnd(c, ri, cands, quals, rows, loops, cs)
	if param && !tree.param {
		return pathChoice{}, false
	}
	if !param {
		loops = 1
	}
	return pathChoice{bitmap: tree, cost: c.bitmapHeapCost(ri.size, tree, quals, joinQuals(cs), rows, loops)}, true
}

// joinQuals counts the join conditions a parameterised scan checks on
// each row besides the table's own (the join keys of cs).
func joinQuals(cs condSet) int {
	n := 0
	for _, cc := range cs {
		if cc.eqJoin {
			n++
		}
	}
	return n
}

// orPaths builds a BitmapOr for each OR among quals each of whose arms
// some index answers (generate_bitmap_or_paths): an arm's index paths use
// its conditions, with the table's other conditions as further index
// conditions, and the arm is the best AND of them; one arm no index
// answers rules the OR out.
func (ts *TableSource) orPaths(c *costs, b *expr.Backend, ri *relInfo, quals []expr.Expr, rows float64) []*BitmapNode {
	var out []*BitmapNode
	for _, q := range quals {
		or, ok := q.(*expr.BoolExpr)
		if !ok || or.Op != expr.BoolOr {
			continue
		}
		node := &BitmapNode{Op: BitmapOr}
		whole := true
		for _, arm := range or.Args {
			armConds := conjuncts(arm)
			cs := condSet{}
			for _, a := range armConds {
				cs.add(a, ri.colOf, isRowFree)
			}
			mine := map[expr.Expr]bool{}
			for _, cc := range cs {
				for _, s := range []expr.Expr{cc.eqSrc, cc.inSrc, cc.loSrc, cc.hiSrc, cc.notNullSrc} {
					if s != nil {
						mine[s] = true
					}
				}
			}
			for _, o := range quals {
				if o != q {
					cs.add(o, ri.colOf, isRowFree)
				}
			}
			var paths []*BitmapNode
			for _, ch := range ts.indexPaths(b, cs, false) {
				uses := false
				for _, u := range usedConds(ch, cs) {
					uses = uses || mine[u]
				}
				if uses {
					paths = append(paths, ts.indexPathNode(c, b, ri, ch, cs, rows, 1))
				}
			}
			if len(paths) == 0 {
				node = nil
				break
			}
			armSel := clampProb(ri.restrictSel(armConds, isRowFree))
			kid := ts.chooseBitmapAnd(c, ri, paths, quals, clampRows(armSel*ri.size.tuples), 1, cs)
			node.Kids = append(node.Kids, kid)
			// the OR is carried out whole when each arm's index
			// conditions are exactly its conditions
			done := map[expr.Expr]bool{}
			for _, u := range kid.allConds() {
				done[u] = true
			}
			for _, a := range armConds {
				whole = whole && done[a]
			}
		}
		if node == nil {
			continue
		}
		c.orNodeCost(node, ri)
		if whole {
			node.orConds = []expr.Expr{q}
		}
		out = append(out, node)
	}
	return out
}

// allConds lists the conditions a bitmap tree carries out, ORs whole.
func (n *BitmapNode) allConds() []expr.Expr {
	switch n.Op {
	case BitmapIndexScan:
		return n.conds
	case BitmapOr:
		return n.orConds
	}
	var out []expr.Expr
	for _, k := range n.Kids {
		out = append(out, k.allConds()...)
	}
	return out
}

// clauses is the set of conditions n uses, for choose_bitmap_and's
// redundancy test: an OR counts as itself.
func (n *BitmapNode) clauses(into map[expr.Expr]bool) {
	switch n.Op {
	case BitmapIndexScan:
		for _, e := range n.conds {
			into[e] = true
		}
	case BitmapOr:
		for _, e := range n.orConds {
			into[e] = true
		}
	default:
		for _, k := range n.Kids {
			k.clauses(into)
		}
	}
}

// orNodeCost is cost_bitmap_or_node: the arms' costs, their selectivities
// summed (at most 1), and 100 operators for each arm after the first that
// is not an index scan.
func (c *costs) orNodeCost(n *BitmapNode, ri *relInfo) {
	total, sel := 0.0, 0.0
	for i, k := range n.Kids {
		total += k.cost
		sel += k.sel
		if i > 0 && k.Op != BitmapIndexScan {
			total += 100 * c.cpuOperator
		}
		n.pages += k.pages
		n.param = n.param || k.param
	}
	n.sel = math.Min(sel, 1)
	n.cost = total
	n.shown = pathCost{startup: total, total: total, rows: clampRows(n.sel * ri.size.tuples)}
}

// andNode is cost_bitmap_and_node's BitmapAnd of kids: their costs and
// 100 operators for each after the first, their selectivities
// multiplied.
func (c *costs) andNode(kids []*BitmapNode, ri *relInfo) *BitmapNode {
	n := &BitmapNode{Op: BitmapAnd, Kids: kids, sel: 1}
	for i, k := range kids {
		n.cost += k.cost
		n.sel *= k.sel
		if i > 0 {
			n.cost += 100 * c.cpuOperator
		}
		n.pages += k.pages
		n.param = n.param || k.param
	}
	n.shown = pathCost{startup: n.cost, total: n.cost, rows: clampRows(n.sel * ri.size.tuples)}
	return n
}

// chooseBitmapAnd is choose_bitmap_and: of paths with the same
// conditions the cheapest stays; the rest, by cost then selectivity, each
// lead an AND group to which each later path not sharing a condition is
// added if it makes the heap scan cheaper; the cheapest group wins.
func (ts *TableSource) chooseBitmapAnd(c *costs, ri *relInfo, paths []*BitmapNode, quals []expr.Expr, rows, loops float64, cs condSet) *BitmapNode {
	if len(paths) == 1 {
		return paths[0]
	}
	nj := joinQuals(cs)
	heap := func(n *BitmapNode) float64 {
		l := 1.0
		if n.param {
			l = loops
		}
		return c.bitmapHeapCost(ri.size, n, quals, nj, rows, l).total
	}
	type usage struct {
		n       *BitmapNode
		clauses map[expr.Expr]bool
	}
	var us []usage
	for _, p := range paths {
		cl := map[expr.Expr]bool{}
		p.clauses(cl)
		dup := -1
		for i := range us {
			if sameSet(us[i].clauses, cl) {
				dup = i
				break
			}
		}
		if dup < 0 {
			us = append(us, usage{p, cl})
		} else if heap(p) < heap(us[dup].n) {
			us[dup] = usage{p, cl}
		}
	}
	if len(us) == 1 {
		return us[0].n
	}
	sort.SliceStable(us, func(i, j int) bool {
		a, b := us[i].n, us[j].n
		if a.cost != b.cost {
			return a.cost < b.cost
		}
		return a.sel < b.sel
	})
	var best *BitmapNode
	bestCost := 0.0
	for i := range us {
		group := []*BitmapNode{us[i].n}
		sofar := heap(us[i].n)
		seen := map[expr.Expr]bool{}
		for e := range us[i].clauses {
			seen[e] = true
		}
		single := us[i].n
		for j := i + 1; j < len(us); j++ {
			overlap := false
			for e := range us[j].clauses {
				overlap = overlap || seen[e]
			}
			if overlap {
				continue
			}
			try := append(append([]*BitmapNode(nil), group...), us[j].n)
			if cost := heap(c.andNode(try, ri)); cost < sofar {
				group, sofar = try, cost
				for e := range us[j].clauses {
					seen[e] = true
				}
			}
		}
		if best == nil || sofar < bestCost {
			bestCost = sofar
			if len(group) == 1 {
				best = single
			} else {
				best = c.andNode(group, ri)
			}
		}
	}
	return best
}

func sameSet(a, b map[expr.Expr]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for e := range a {
		if !b[e] {
			return false
		}
	}
	return true
}

// bitmapHeapCost is cost_bitmap_heap_scan over bitmap tree n for a table
// of size sz whose conditions quals (and njoin join conditions) are
// checked on each row fetched, rows rows coming out per loop: the tree's
// cost to start, then the heap pages compute_bitmap_pages estimates, each
// costing between random_page_cost and seq_page_cost by the fraction of
// the table read, and the rows fetched — more of them when the bitmap
// outgrows work_mem and pages turn lossy.
func (c *costs) bitmapHeapCost(sz relSize, n *BitmapNode, quals []expr.Expr, njoin int, rows, loops float64) pathCost {
	T := math.Max(sz.pages, 1)
	tuples := clampRows(n.sel * sz.tuples)
	fetched := 2 * T * tuples / (2*T + tuples)
	heapPages := math.Min(fetched, sz.pages)
	maxEntries := float64(bitmapEntries(c.workMem))
	if loops > 1 {
		fetched = c.pagesFetched(tuples*loops, sz.pages, sz.pages+n.pages) / loops
	}
	if fetched >= T {
		fetched = T
	} else {
		fetched = math.Ceil(fetched)
	}
	if maxEntries < heapPages {
		lossy := math.Max(0, heapPages-maxEntries/2)
		exact := heapPages - lossy
		if lossy > 0 {
			tuples = clampRows(n.sel*(exact/heapPages)*sz.tuples + (lossy/heapPages)*sz.tuples)
		}
	}
	perPage := c.randomPage
	if fetched >= 2 {
		perPage = c.randomPage - (c.randomPage-c.seqPage)*math.Sqrt(fetched/T)
	}
	startup := n.cost
	run := fetched*perPage + (c.cpuTuple+c.qualCost(quals)+float64(njoin)*c.cpuOperator)*tuples
	pc := pathCost{startup: startup, total: startup + run, rows: rows}
	if !c.bitmapscan {
		pc.startup += disableCost
		pc.total += disableCost
	}
	return pc
}

// bitmapEntries is tbm_calculate_entries: the page table entries
// workMem bytes hold (a PagetableEntry of 48 bytes and a hash slot's two
// pointers each), at least 16.
func bitmapEntries(workMem int64) int64 {
	n := workMem / (48 + 16)
	return max(n, 16)
}

// Indexes lists the indexes the tree reads, in plan order.
func (n *BitmapNode) Indexes(out []*catalog.IndexDef) []*catalog.IndexDef {
	if n.Op == BitmapIndexScan {
		return append(out, n.Scan.Index)
	}
	for _, k := range n.Kids {
		out = k.Indexes(out)
	}
	return out
}

// RecheckSet is the set of the table's conditions the bitmap carries out:
// on a lossy page they are checked again, and EXPLAIN ANALYZE counts the
// rows they remove as Rows Removed by Index Recheck.
func (n *BitmapNode) RecheckSet() map[expr.Expr]bool {
	out := map[expr.Expr]bool{}
	for _, e := range n.allConds() {
		out[e] = true
	}
	return out
}

// considerBitmap makes partition scan ts a bitmap scan when one costs
// less than the scan its conditions where (over its own row) chose.
func (ts *TableSource) considerBitmap(b *expr.Backend, where expr.Expr) {
	if where == nil {
		return
	}
	c := costsOf(b)
	ri := newRelInfo(b, ts.T, tableColumn(ts.cols, 0, len(ts.Defs)))
	quals := conjuncts(where)
	cs := condSet{}
	for _, q := range quals {
		cs.add(q, ri.colOf, isRowFree)
	}
	rows := clampRows(ri.size.tuples * ri.restrictSel(quals, isRowFree))
	bp, ok := ts.bitmapPath(c, b, ri, cs, quals, rows, 1, false)
	if !ok {
		return
	}
	cur := c.seqScanCost(ri.size, quals, rows)
	if ts.Index != nil {
		ch := pinned(ts.Index, cs)
		ch.rng = ch.rng || ts.Lo != nil || ts.Hi != nil || ts.NotNull
		cur = c.indexScanCost(ri.size, indexSize(b, ts.Index, ri.size), ri.indexSel(ch, cs), nIndexQuals(ch, cs), nonIndexQuals(quals, ch, cs), rows, 1, saScans(ch, cs), ri.indexCorrelation(ts.Index), ch.exact && ts.Index.Unique && !ch.null, ts.IndexOnly)
	}
	if bp.cost.total < cur.total {
		ts.IndexOnly = false
		ts.apply(bp, cs)
		bp.bitmap.OwnRow = true
	}
}

// bitmapProbe is the cost of a bitmap scan of a table of size sz for one
// of loops runs through an index of size isz whose nkeys join keys select
// sel of its rows, rows rows per run coming out (a partition's
// parameterised bitmap scan, for weighing a nested loop).
func (c *costs) bitmapProbe(sz, isz relSize, sel float64, nkeys int, quals []expr.Expr, rows, loops float64) pathCost {
	ic := c.btreeCost(sz, isz, sel, nkeys, loops, 1, false)
	n := &BitmapNode{Op: BitmapIndexScan, sel: sel, pages: isz.pages, cost: ic.total + 0.1*c.cpuOperator*rows}
	return c.bitmapHeapCost(sz, n, quals, nkeys, rows, loops)
}

// topNSortCost is cost_sort of in's rows kept to the first limit:
// a bounded heap when the rows are more than twice the limit, else a
// quicksort of them all (two operators a comparison), all before the
// first row; then an operator per row.
func (c *costs) topNSortCost(in pathCost, limit float64) pathCost {
	n := math.Max(in.rows, 2)
	cmp := 2 * c.cpuOperator
	startup := in.total
	if n > 2*limit {
		startup += cmp * n * math.Log2(2*limit)
	} else {
		startup += cmp * n * math.Log2(n)
	}
	return pathCost{startup: startup, total: startup + c.cpuOperator*n, rows: in.rows}
}

// limitCost is what reading the first limit rows of pc costs (a Limit
// node): its startup and that fraction of the rest.
func (c *costs) limitCost(pc pathCost, limit float64) float64 {
	if pc.rows <= limit || pc.rows <= 0 {
		return pc.total
	}
	return pc.startup + (pc.total-pc.startup)*limit/pc.rows
}

// ScanIndexes lists the indexes a scan of ts reads: its index scan's, or
// every index of its bitmap tree (each of which the executor opens, as
// PostgreSQL's ExecInitBitmapIndexScan does).
func (ts *TableSource) ScanIndexes() []*catalog.IndexDef {
	switch {
	case ts.Index != nil:
		return []*catalog.IndexDef{ts.Index}
	case ts.Bitmap != nil:
		return ts.Bitmap.Indexes(nil)
	}
	return nil
}
