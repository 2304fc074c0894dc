package plan

import (
	"math"

	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// Choosing how each FROM item is read, by cost: a table by a sequential
// scan or by one of its indexes, and the inner side of a join either once
// (hashed, when the join has equality keys) or once per outer row through
// an index keyed by the outer row's values (a nested loop with a
// parameterised inner side; for a partitioned table, pruned per outer row
// as well).

// pathChoice is one way to read a table: an index scan (ch.ix set) or a
// sequential scan, and its cost per run.
type pathChoice struct {
	ch     indexChoice
	bitmap *BitmapNode // a Bitmap Heap Scan (bitmap.go)
	cost   pathCost
}

// indexSel is the selectivity of the conditions ch uses as index bounds.
func (ri *relInfo) indexSel(ch indexChoice, cs condSet) float64 {
	s := 1.0
	for i := 0; i < ch.neq; i++ {
		c := ch.ix.Cols[i]
		cc := cs[c]
		switch {
		case cc.eqJoin:
			s *= ri.eqSel(c, nil)
		default:
			if _, null := cc.eq.(*NullKey); null {
				nf, ok := ri.nullFrac(c)
				if !ok {
					nf = defaultUnkSel
				}
				s *= nf
			} else {
				s *= ri.eqSel(c, cc.eq)
			}
		}
	}
	if ch.in || ch.rng {
		c := ch.ix.Cols[ch.neq]
		cc := cs[c]
		switch {
		case ch.in && cc.inArr != nil:
			if a, ok := cc.inArr.(*expr.ConstExpr); ok && !a.D.Null {
				// a constant array: its values' shares
				in := 0.0
				for _, d := range a.D.A {
					in += ri.eqSel(c, &expr.ConstExpr{D: d, T: ri.t.Cols[c].Type()})
				}
				s *= math.Min(1, in)
			} else {
				s *= math.Min(1, 10*ri.eqSel(c, nil))
			}
		case ch.in:
			in := 0.0
			for _, v := range cc.in {
				in += ri.eqSel(c, v)
			}
			s *= math.Min(1, in)
		case cc.lo != nil || cc.hi != nil:
			var lo, hi float64
			if cc.lo != nil {
				lo = ri.ineqSel(c, boundOp(">", cc.loIncl), cc.lo)
			}
			if cc.hi != nil {
				hi = ri.ineqSel(c, boundOp("<", cc.hiIncl), cc.hi)
			}
			switch {
			case cc.lo != nil && cc.hi != nil:
				s *= ri.rangeSel(c, lo, hi)
			case cc.lo != nil:
				s *= lo
			default:
				s *= hi
			}
		case cc.notNull:
			nf, ok := ri.nullFrac(c)
			if !ok {
				nf = defaultUnkSel
			}
			s *= 1 - nf
		}
	}
	return s
}

// boundOp is the operator of a range bound: op, or op= when inclusive.
func boundOp(op string, incl bool) string {
	if incl {
		return op + "="
	}
	return op
}

// nIndexQuals counts the index conditions ch uses.
func nIndexQuals(ch indexChoice, cs condSet) int {
	n := ch.neq
	if ch.in {
		n++
	}
	if ch.rng {
		cc := cs[ch.ix.Cols[ch.neq]]
		if cc.lo != nil {
			n++
		}
		if cc.hi != nil {
			n++
		}
		if cc.notNull && cc.lo == nil && cc.hi == nil {
			n++ // IS NOT NULL, checked on each entry as the bounds are
		}
	}
	return n
}

// bestPath is the cheapest way to read table ts (of relInfo ri) once per
// loop under conditions cs, of which the conditions quals (all of the
// table's filters) keep rows rows. With param set only index scans that
// use a join key (cs[c].eqJoin) are considered: the parameterised inner
// side of a nested loop. An index that covers the query is costed as an
// index-only scan, and also considered with no condition bounding it
// (indexonly.go).
func (ts *TableSource) bestPath(c *costs, b *expr.Backend, ri *relInfo, cs condSet, quals []expr.Expr, rows, loops float64, param bool) (pathChoice, bool) {
	var best pathChoice
	found := false
	if !param {
		best, found = pathChoice{cost: c.seqScanCost(ri.size, quals, rows)}, true
	}
	for _, ix := range b.Cat().TableIndexes(ts.T) {
		ch := pinned(ix, cs)
		if !ch.in && !ch.rng && ch.neq < len(ix.Cols) {
			// a range bounded on one side, or IS NOT NULL, is a usable
			// bound when costs say so
			if cc := cs[ix.Cols[ch.neq]]; cc != nil && (cc.lo != nil || cc.hi != nil || cc.notNull) {
				ch.rng = true
			}
		}
		only := c.indexonly && ts.coveredBy(ix)
		if ch.neq == 0 && !ch.in && !ch.rng && (param || !only) {
			continue
		}
		if param && !usesJoinKey(ch, cs) {
			continue
		}
		sel := ri.indexSel(ch, cs)
		isz := indexSize(b, ix, ri.size)
		pc := c.indexScanCost(ri.size, isz, sel, nIndexQuals(ch, cs), nonIndexQuals(quals, ch, cs), rows, loops, saScans(ch, cs), ri.indexCorrelation(ix), ch.exact && ix.Unique && !ch.null, only)
		if !found || pc.total < best.cost.total {
			best, found = pathChoice{ch: ch, cost: pc}, true
		}
	}
	if bp, ok := ts.bitmapPath(c, b, ri, cs, quals, rows, loops, param); ok && (!found || bp.cost.total < best.cost.total) {
		best, found = bp, true
	}
	return best, found
}

// nonIndexQuals returns the conditions of quals that an index scan along
// ch checks on each heap row: those its index conditions do not carry
// out (extract_nonindex_conditions).
func nonIndexQuals(quals []expr.Expr, ch indexChoice, cs condSet) []expr.Expr {
	if ch.ix == nil {
		return quals
	}
	used := map[expr.Expr]bool{}
	for i := 0; i < ch.neq; i++ {
		if cc := cs[ch.ix.Cols[i]]; cc != nil && cc.eqSrc != nil {
			used[cc.eqSrc] = true
		}
	}
	if ch.neq < len(ch.ix.Cols) && (ch.in || ch.rng) {
		if cc := cs[ch.ix.Cols[ch.neq]]; cc != nil {
			if ch.in {
				used[cc.inSrc] = true
			} else {
				used[cc.loSrc], used[cc.hiSrc], used[cc.notNullSrc] = true, true, true
			}
		}
	}
	out := make([]expr.Expr, 0, len(quals))
	for _, q := range quals {
		if !used[q] {
			out = append(out, q)
		}
	}
	return out
}

// usesJoinKey reports whether ch's equality prefix includes a join key.
func usesJoinKey(ch indexChoice, cs condSet) bool {
	for i := 0; i < ch.neq; i++ {
		if cs[ch.ix.Cols[i]].eqJoin {
			return true
		}
	}
	return false
}

// apply makes ts read along p.
func (ts *TableSource) apply(p pathChoice, cs condSet) {
	ts.conds = cs
	if p.ch.ix == nil {
		ts.Index, ts.KeyArgs, ts.KeyTyps = nil, nil, nil
		ts.InArgs, ts.InArr, ts.Lo, ts.Hi, ts.NotNull = nil, nil, nil, nil, false
		ts.keysReadLevel = false
		ts.Bitmap = p.bitmap
		if p.bitmap != nil {
			ts.keysReadLevel = p.bitmap.param
			p.bitmap.Recheck = p.bitmap.allConds()
			p.bitmap.heap = p.cost
		}
		return
	}
	ts.useChoice(p.ch, cs)
}

// hashJoinCost is the cost of a hash join beyond reading its two sides:
// hashing the inner rows, probing with each outer row, emitting the
// joined rows (cost_hashjoin's CPU terms, one batch).
func (c *costs) hashJoinCost(outerRows, innerRows, joinRows float64, nkeys int) float64 {
	ops := c.cpuOperator * float64(nkeys)
	return (ops+c.cpuTuple)*innerRows + ops*outerRows + c.cpuTuple*joinRows
}

// partSizes sums the sizes of a partitioned table's leaf partitions and
// counts them.
func partSizes(b *expr.Backend, t *catalog.TableDef) (relSize, int) {
	var sum relSize
	leaves := b.Cat().LeafPartitions(t)
	for _, p := range leaves {
		sz := tableSize(b, p)
		sum.pages += sz.pages
		sum.tuples += sz.tuples
	}
	return sum, len(leaves)
}
