package plan

import (
	"math"

	"lockd/sql/expr"
)

// Sorted aggregation. A grouped query can aggregate each group as its
// rows arrive in group order (PostgreSQL's GroupAggregate, AGG_SORTED)
// instead of hashing every group first (HashAggregate, AGG_HASHED). The
// order comes from an index read in the group order (a query over one
// table) or from a Sort of the input. cost_agg charges both strategies
// the same CPU per input row and per group, so the choice is the input's
// cost — the cheapest way to read for hashing, an index scan in group
// order or a Sort for sorting — plus the disk a hash table spills when it
// outgrows hash_mem. Within add_path's 1% fuzz the sorted plan wins,
// since it gives its first group at once (lower start-up cost) and an
// order besides; an ORDER BY of the group keys then needs no Sort, while
// the hashed plan sorts its groups.

// estimateDistinct estimates the rows DISTINCT or DISTINCT ON keeps of
// an ungrouped query over a FROM clause (estimate_num_groups of its
// keys), for EXPLAIN's HashAggregate.
func (fb *fromBuilder) estimateDistinct(p *SelectPlan) {
	if p.Grouped || p.From == nil || !p.Distinct && len(p.DistinctOn) == 0 {
		return
	}
	keys := p.DistinctOn
	if p.Distinct {
		keys = p.Targets
	}
	rows := fb.estRows(p.From)
	p.DistinctRows = clampRows(math.Min(rows, fb.estimateGroups(keys, rows)))
}

// chooseGroupAgg decides between hashed and sorted aggregation for p and,
// when sorting wins, reads p's table along the index that gives the group
// order or sorts the input (p.GroupSortInput), and drops an ORDER BY that
// order satisfies.
func (fb *fromBuilder) chooseGroupAgg(p *SelectPlan) {
	if !p.Grouped || len(p.GroupBy) == 0 || p.From == nil {
		return
	}
	rows := fb.estRows(p.From)
	p.GroupRows = clampRows(math.Min(rows, fb.estimateGroups(p.GroupBy, rows)))
	if p.Distinct || len(p.DistinctOn) > 0 || p.RowLocks != nil || p.Srf || len(p.OneTime) > 0 {
		return
	}
	resolve := func(e expr.Expr) expr.Expr {
		if o, ok := e.(*outputRef); ok {
			e = p.Targets[o.i]
		}
		if g, ok := e.(*expr.GroupRef); ok && g.Idx < len(p.GroupBy) {
			e = p.GroupBy[g.Idx]
		}
		return e
	}
	// the group keys in the order to sort them: the ORDER BY's when it
	// names the same keys, all ascending with NULLs last or all
	// descending with NULLs first (preprocess_groupclause); else the
	// GROUP BY's, ascending
	var keys []expr.Expr
	seen := map[string]bool{}
	for _, g := range p.GroupBy {
		if !orderedKey(g.Type()) {
			return
		}
		if k := expr.ExprKey(g); !seen[k] {
			seen[k] = true
			keys = append(keys, g)
		}
	}
	var sortKeys []expr.Expr
	sortOK := len(p.Sort) > 0
	desc := sortOK && p.Sort[0].Desc()
	used := map[string]bool{}
	for _, k := range p.Sort {
		e := resolve(k.E)
		ek := expr.ExprKey(e)
		if k.Desc() != desc || k.NullsFirst() != desc || !seen[ek] || used[ek] {
			sortOK = false
			break
		}
		used[ek] = true
		sortKeys = append(sortKeys, e)
	}
	if sortOK && len(sortKeys) == len(keys) {
		keys = sortKeys
	} else {
		sortOK, desc = false, false
	}

	c := fb.costs()
	ms := mergeSettingsOf(fb.a.S)
	groups := p.GroupRows
	width := fb.nodeWidth(p.From)
	inCost := estTotal(p.From)
	// what aggregating costs beyond its input: the same for both
	// strategies (cost_agg), the hashed one paying it before its first row
	perRow := c.cpuOperator*float64(len(p.Aggs)) + c.cpuOperator*float64(len(p.GroupBy))
	aggRun := perRow*rows + c.cpuTuple*groups
	if p.Having != nil {
		aggRun += c.opCost(p.Having) * groups
	}
	hashed := inCost + aggRun + c.hashAggSpill(ms, rows, width, groups, len(p.Aggs))
	if !ms.hashagg {
		hashed += disableCost
	}
	if sortOK {
		hashed += c.sortCost(groups, width, ms.workMem).total
	}
	// sorted by a Sort of the input
	sorted := inCost + c.sortCost(rows, width, ms.workMem).total + aggRun
	if !ms.sort {
		sorted += disableCost
	}
	var index *pathChoice
	if ip, ok := fb.groupIndexPath(p, keys, rows); ok && ip.cost.total+aggRun <= sorted {
		index, sorted = &ip, ip.cost.total+aggRun
	}
	if sorted > hashed*1.01 {
		return
	}
	p.GroupSorted = true
	if index != nil {
		leaf := p.From.(*LeafNode)
		ts := leaf.Src.(*TableSource)
		if index.ch.ix != ts.Index || len(ts.KeyArgs) != index.ch.neq {
			ts.apply(*index, ts.conds)
			leaf.Est = index.cost
		}
		ts.Backward = desc
	} else {
		p.GroupSortInput, p.GroupSortKeys, p.GroupSortDesc = true, keys, desc
	}
	if sortOK {
		p.Sort = nil
	}
}

// groupIndexPath is the cheapest index scan of p's one table that reads
// its rows ordered by keys (columns of the table; those the conditions
// pin by equality are the same in every row).
func (fb *fromBuilder) groupIndexPath(p *SelectPlan, keys []expr.Expr, rows float64) (pathChoice, bool) {
	leaf, ok := p.From.(*LeafNode)
	if !ok || leaf.Lateral {
		return pathChoice{}, false
	}
	ts, ok := leaf.Src.(*TableSource)
	if !ok || ts.InArgs != nil || ts.InArr != nil {
		return pathChoice{}, false
	}
	colOf := tableColumn(ts.cols, leaf.Off, len(ts.Defs))
	cs := ts.conds
	if cs == nil {
		cs = condSet{}
	}
	var cols []int
	for _, k := range keys {
		if _, cast := k.(*expr.CastExpr); cast {
			return pathChoice{}, false
		}
		col, _, ok := colOf(k)
		if !ok {
			return pathChoice{}, false
		}
		if cc := cs[col]; cc != nil && cc.eq != nil {
			continue
		}
		cols = append(cols, col)
	}
	// the chosen scan if it already reads in the group order
	if ts.Index != nil && ordersBy(ts.Index, len(ts.KeyArgs), cols) {
		return pathChoice{ch: indexChoice{ix: ts.Index, neq: len(ts.KeyArgs)}, cost: leaf.Est}, true
	}
	ri := fb.relInfo(leaf)
	if ri == nil {
		return pathChoice{}, false
	}
	c := fb.costs()
	var best pathChoice
	found := false
	for _, ix := range fb.a.S.Cat().TableIndexes(ts.T) {
		ch := pinned(ix, cs)
		if ch.exact || !ordersBy(ix, ch.neq, cols) {
			continue
		}
		ch.in, ch.rng = false, false
		if ch.neq < len(ix.Cols) {
			if cc := cs[ix.Cols[ch.neq]]; cc != nil {
				ch.rng = cc.lo != nil || cc.hi != nil || cc.notNull
			}
		}
		only := c.indexonly && ts.coveredBy(ix)
		pc := c.indexScanCost(ri.size, indexSize(fb.a.S, ix, ri.size), ri.indexSel(ch, cs), nIndexQuals(ch, cs), nonIndexQuals(leaf.Filters, ch, cs), rows, 1, saScans(ch, cs), ri.indexCorrelation(ix), false, only)
		if !found || pc.total < best.cost.total {
			best, found = pathChoice{ch: ch, cost: pc}, true
		}
	}
	return best, found
}

// hashAggSpill is the disk cost_agg adds to hashed aggregation whose
// groups outgrow hash_mem: the input written and read back at each level
// of partitioning, and the rows handled again.
func (c *costs) hashAggSpill(ms mergeSettings, rows, width, groups float64, naggs int) float64 {
	// hash_agg_entry_size: the hash entry, the group's tuple and its
	// transition states, each in a memory chunk
	entry := 24 + 16 + maxAlign(16+width)
	if naggs > 0 {
		entry += 16 + maxAlign(16*float64(naggs))
	}
	limit := ms.workMem * ms.hashMemMultiplier
	if groups*entry <= limit {
		return 0
	}
	// hash_agg_set_limits: a quarter of the memory buffers the
	// partitions' output, 4 to 256 partitions of one block each
	parts := math.Min(256, math.Max(4, math.Ceil(groups*entry/limit)))
	memLimit := math.Max(limit-parts*pageSize, limit*0.75)
	batches := math.Max(1, math.Ceil(groups*entry/memLimit))
	depth := math.Ceil(math.Log(batches) / math.Log(parts))
	pages := relationBytes(rows, width) / pageSize
	written, read := pages*depth*2, pages*depth*2
	return written*c.randomPage + read*c.seqPage + depth*rows*2*c.cpuTuple
}
