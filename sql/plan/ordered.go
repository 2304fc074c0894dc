package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Index-ordered scans. A query over one table that asks for its first
// rows in an order some index has (ORDER BY ... LIMIT) reads that index
// forward or backward and stops at the limit, instead of reading and
// sorting every row: PostgreSQL's Limit over an Index Scan [Backward].
// An ORDER BY on columns after the index columns the WHERE clause pins
// by equality is such an order too (`where bid = 1 order by aid` on an
// index over (bid, aid)), and a range on the first ordered column bounds
// the scan.
//
// Until the planner weighs costs this is used only with a LIMIT, only
// when no other index condition was chosen that the order would lose,
// and only for the NULLS placement an index scan gives (ASC NULLS LAST,
// DESC NULLS FIRST, PostgreSQL's defaults).

// orderByIndex makes p's single table scan an index-ordered one and
// drops p's sort when an index gives p's order.
func orderByIndex(b *expr.Backend, p *SelectPlan) {
	cat := b.Cat()
	if p.Limit == nil || len(p.Sort) == 0 || p.Grouped || p.Distinct || len(p.DistinctOn) > 0 || p.RowLocks != nil || p.Srf {
		return
	}
	leaf, ok := p.From.(*LeafNode)
	if !ok || leaf.Lateral {
		return
	}
	ts, ok := leaf.Src.(*TableSource)
	if !ok {
		return
	}
	colOf := tableColumn(ts.cols, leaf.Off, len(ts.Defs))
	cs := ts.conds
	if cs == nil {
		cs = condSet{}
	}
	desc := p.Sort[0].Desc()
	var cols []int // the sort columns not pinned by equality, in order
	for _, k := range p.Sort {
		if k.Desc() != desc || k.NullsFirst() != desc {
			return
		}
		e := k.E
		if o, ok := e.(*outputRef); ok {
			e = p.Targets[o.i]
		}
		c, t, ok := colOf(e)
		if _, cast := e.(*expr.CastExpr); !ok || cast || !orderedKey(t) {
			return
		}
		if cc := cs[c]; cc != nil && cc.eq != nil {
			continue // the same in every row
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return // every sort column is pinned: the order is given
	}
	if bn := ts.Bitmap; bn != nil {
		// a bitmap scan chosen for the WHERE clause: read in the order
		// of its one index if that gives the order; else sorted, unless
		// an index giving the order, stopping at the limit, costs less
		// than the bitmap scan and a top-N sort
		if bn.Op == BitmapIndexScan && ordersBy(bn.Scan.Index, len(bn.Scan.KeyArgs), cols) && bn.Scan.InArgs == nil && bn.Scan.InArr == nil {
			ts.useChoice(bn.ch, bn.cs)
			ts.Backward = desc
			p.Sort = nil
			return
		}
		c := costsOf(b)
		ri := newRelInfo(b, ts.T, colOf)
		limit := 0.1 * bn.heap.rows
		if k, ok := p.Limit.(*expr.ConstExpr); ok && !k.D.Null {
			limit = float64(k.D.I)
		}
		sorted := c.limitCost(c.topNSortCost(bn.heap, limit), limit)
		for _, ix := range cat.TableIndexes(ts.T) {
			ch := pinned(ix, cs)
			if ch.exact || !ordersBy(ix, ch.neq, cols) {
				continue
			}
			ch.in = false
			if cc := cs[ix.Cols[ch.neq]]; cc != nil {
				ch.rng = cc.lo != nil || cc.hi != nil || cc.notNull
			}
			ic := c.indexScanCost(ri.size, indexSize(b, ix, ri.size), ri.indexSel(ch, cs), nIndexQuals(ch, cs), nonIndexQuals(leaf.Filters, ch, cs), bn.heap.rows, 1, 1, ri.indexCorrelation(ix), false, false)
			if c.limitCost(ic, limit) < sorted {
				ts.useChoice(ch, cs)
				ts.Backward = desc
				p.Sort = nil
				leaf.Est = ic
			}
			return
		}
		return
	}
	if ts.Index != nil && !ts.wholeIndex() {
		if ordersBy(ts.Index, len(ts.KeyArgs), cols) && ts.InArgs == nil && ts.InArr == nil {
			ts.Backward = desc
			p.Sort = nil
		}
		return // an index chosen for the WHERE clause, not for this order
	}
	for _, ix := range cat.TableIndexes(ts.T) {
		ch := pinned(ix, cs)
		if ch.exact || !ordersBy(ix, ch.neq, cols) {
			continue
		}
		ch.in = false
		if cc := cs[ix.Cols[ch.neq]]; cc != nil {
			ch.rng = cc.lo != nil || cc.hi != nil || cc.notNull // one bound is enough here
		}
		ts.useChoice(ch, cs)
		ts.Backward = desc
		p.Sort = nil
		// the scan's estimate is now the index path's, not the
		// sequential scan's the table was costed with
		c := costsOf(b)
		ri := newRelInfo(b, ts.T, colOf)
		leaf.Est = c.indexScanCost(ri.size, indexSize(b, ix, ri.size), ri.indexSel(ch, cs), nIndexQuals(ch, cs), nonIndexQuals(leaf.Filters, ch, cs), leaf.Est.rows, 1, 1, ri.indexCorrelation(ix), false, c.indexonly && ts.coveredBy(ix))
		return
	}
}

// ordersBy reports whether a scan of ix whose first neq columns are
// pinned by equality returns rows ordered by cols.
func ordersBy(ix *catalog.IndexDef, neq int, cols []int) bool {
	if neq+len(cols) > len(ix.Cols) {
		return false
	}
	for i, c := range cols {
		if ix.Cols[neq+i] != c {
			return false
		}
	}
	return true
}

// minMaxByIndex reports whether every aggregate of a min/max query over
// table rv can read an index (analyze.RewriteMinMax): rv is a plain
// table, not partitioned, and each column leads some index and has a key
// order and an aggregate of its own type (not boolean, which has no max,
// nor varchar, whose max is text's).
func minMaxByIndex(a *analyze.Analyzer, rv *pg.RangeVar, aggs []analyze.MinMaxAgg) bool {
	s := a.S
	if rv.Schemaname == "" && a.Ctes.Lookup(rv.Relname) != nil {
		return false
	}
	if _, ok := s.LookupView(rv); ok || s.RangeSequence(rv) != nil {
		return false
	}
	t, err := s.ResolveTable(rv)
	if err != nil || t.Partitioned() {
		return false
	}
	ixs := s.Cat().TableIndexes(t)
	for _, ag := range aggs {
		c := t.ColIndex(ag.Column)
		if c < 0 {
			return false
		}
		typ := t.Cols[c].Type()
		if !orderedKey(typ) || typ.OID == types.OIDBool || typ.OID == types.OIDVarchar {
			return false
		}
		leads := false
		for _, ix := range ixs {
			leads = leads || ix.Cols[0] == c
		}
		if !leads {
			return false
		}
	}
	return true
}
