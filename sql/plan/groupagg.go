package plan

import (
	"math"

	"lockd/sql/expr"
)

// Sorted aggregation. A grouped query over one table whose groups an
// index gives in order can aggregate each group as its rows arrive
// (PostgreSQL's GroupAggregate, AGG_SORTED) instead of hashing every
// group first (HashAggregate, AGG_HASHED). cost_agg charges both the same
// CPU per input row and per group, so the choice comes down to the input:
// the cheapest way to read the table for hashing, an index scan in the
// group order for sorting. Within add_path's 1% fuzz the sorted plan wins,
// since it gives its first group at once (lower start-up cost) and an
// order besides; an ORDER BY of the group keys then needs no Sort, while
// the hashed plan sorts its groups.
//
// Not done here (docs/planner.md): sorting the input to group it (a Sort
// under a GroupAggregate, which PostgreSQL picks when the hash table
// would not fit in hash_mem), and grouping over a join.

// GroupSorted (SelectPlan) marks a grouped query that aggregates its input
// in group order; GroupRows is the planner's estimate of its groups.

// chooseGroupAgg decides between hashed and sorted aggregation for p and,
// when sorting wins, reads p's table along the index that gives the group
// order and drops an ORDER BY that order satisfies.
func (fb *fromBuilder) chooseGroupAgg(p *SelectPlan) {
	if !p.Grouped || len(p.GroupBy) == 0 {
		return
	}
	in := fb.estRows0(p.From)
	p.GroupRows = clampRows(math.Min(in, fb.estimateGroups(p.GroupBy, in)))
	if p.Distinct || len(p.DistinctOn) > 0 || p.RowLocks != nil || p.Srf || len(p.OneTime) > 0 {
		return
	}
	leaf, ok := p.From.(*LeafNode)
	if !ok || leaf.Lateral {
		return
	}
	ts, ok := leaf.Src.(*TableSource)
	if !ok || ts.InArgs != nil || ts.InArr != nil {
		return
	}
	colOf := tableColumn(ts.cols, leaf.Off, len(ts.Defs))
	cs := ts.conds
	if cs == nil {
		cs = condSet{}
	}
	// the group columns in the order to sort them: the ORDER BY's when it
	// names the same columns ascending (preprocess_groupclause), else the
	// GROUP BY's; columns pinned by equality are the same in every row
	keyCol := func(e expr.Expr) (int, bool) {
		if o, ok := e.(*outputRef); ok {
			e = p.Targets[o.i]
		}
		if g, ok := e.(*expr.GroupRef); ok && g.Idx < len(p.GroupBy) {
			e = p.GroupBy[g.Idx]
		}
		if _, cast := e.(*expr.CastExpr); cast {
			return 0, false
		}
		c, t, ok := colOf(e)
		return c, ok && orderedKey(t)
	}
	var groupCols []int
	seen := map[int]bool{}
	for _, g := range p.GroupBy {
		c, ok := keyCol(g)
		if !ok {
			return
		}
		if !seen[c] {
			seen[c] = true
			groupCols = append(groupCols, c)
		}
	}
	// an ORDER BY of the group columns, all ascending (NULLs last) or all
	// descending (NULLs first), is the order of a forward or backward
	// index scan; any other ORDER BY sorts the groups in either plan
	sortCols, sortOK := []int(nil), len(p.Sort) > 0
	desc := sortOK && p.Sort[0].Desc()
	for _, k := range p.Sort {
		c, ok := keyCol(k.E)
		if !ok || k.Desc() != desc || k.NullsFirst() != desc || !seen[c] {
			sortOK = false
			break
		}
		sortCols = append(sortCols, c)
	}
	if sortOK && len(sortCols) == len(groupCols) {
		groupCols = sortCols
	} else {
		sortOK, desc = false, false
	}
	var cols []int
	for _, c := range groupCols {
		if cc := cs[c]; cc != nil && cc.eq != nil {
			continue
		}
		cols = append(cols, c)
	}
	c := fb.costs()
	ms := mergeSettingsOf(fb.a.S)
	ri := fb.relInfo(leaf)
	if ri == nil {
		return
	}
	rows := fb.leafRows(leaf)
	groups := p.GroupRows
	// what aggregating costs beyond its input: the same for both
	// strategies (cost_agg), the hashed one paying it before its first row
	perRow := c.cpuOperator*float64(len(p.Aggs)) + c.cpuOperator*float64(len(p.GroupBy))
	aggRun := perRow*rows + c.cpuTuple*groups
	if p.Having != nil {
		aggRun += c.opCost(p.Having) * groups
	}
	hashed := leaf.Est.total + aggRun
	if !ms.hashagg {
		hashed += disableCost
	}
	if sortOK {
		hashed += c.sortCost(groups, 0, ms.workMem).total
	}
	// the sorted input: the chosen scan if it already reads in the group
	// order, else the cheapest index scan that does
	var best pathChoice
	found := false
	if ts.Index != nil && ordersBy(ts.Index, len(ts.KeyArgs), cols) {
		best, found = pathChoice{ch: indexChoice{ix: ts.Index}, cost: leaf.Est}, true
	}
	if !found {
		for _, ix := range fb.a.S.Cat().TableIndexes(ts.T) {
			ch := pinned(ix, cs)
			if ch.exact || !ordersBy(ix, ch.neq, cols) {
				continue
			}
			ch.in = false
			ch.rng = false
			if ch.neq < len(ix.Cols) {
				if cc := cs[ix.Cols[ch.neq]]; cc != nil {
					ch.rng = cc.lo != nil || cc.hi != nil || cc.notNull
				}
			}
			only := c.indexonly && ts.coveredBy(ix)
			sel := ri.indexSel(ch, cs)
			pc := c.indexScanCost(ri.size, indexSize(fb.a.S, ix, ri.size), sel, nIndexQuals(ch, cs), nonIndexQuals(leaf.Filters, ch, cs), rows, 1, ri.indexCorrelation(ix), false, only)
			if !found || pc.total < best.cost.total {
				best, found = pathChoice{ch: ch, cost: pc}, true
			}
		}
	}
	if !found {
		return
	}
	sorted := best.cost.total + aggRun
	if sorted > hashed*1.01 {
		return
	}
	if best.ch.ix != ts.Index || len(ts.KeyArgs) != best.ch.neq {
		ts.apply(best, cs)
		leaf.Est = best.cost
	}
	ts.Backward = desc
	p.GroupSorted = true
	if sortOK {
		p.Sort = nil
	}
}

// estRows0 is estRows of a FROM tree, one row without one.
func (fb *fromBuilder) estRows0(n PlanNode) float64 {
	if n == nil {
		return 1
	}
	return fb.estRows(n)
}
