package plan

import (
	"math"

	"lockd/sql/expr"
)

// Row estimates of the FROM tree, for choosing join methods: a table's
// rows times the selectivity of its filters; a join's the product of its
// sides' times the selectivity of its equality keys (eqjoinsel), at least
// the preserved side's for an outer join. Items that are not tables
// count as PostgreSQL counts them without better knowledge: a function or
// subquery 1,000 rows, VALUES its rows.

// costs returns the cost settings of this planning, read once.
func (fb *fromBuilder) costs() *costs {
	if fb.cost == nil {
		fb.cost = costsOf(fb.a.S)
	}
	return fb.cost
}

// relInfo returns what selectivity estimation knows of a table leaf
// (nil for other leaves).
func (fb *fromBuilder) relInfo(l *LeafNode) *relInfo {
	if ri, ok := fb.infos[l.item]; ok {
		return ri
	}
	var ri *relInfo
	b := fb.a.S
	switch src := l.Src.(type) {
	case *TableSource:
		ri = newRelInfo(b, src.T, tableColumn(src.cols, l.Off, len(src.Defs)))
	case *PartitionedSource:
		if t := b.Cat().Tables[src.root]; t != nil {
			ri = newRelInfo(b, t, tableColumn(src.cols, l.Off, len(src.cols)-NumSysCols))
			ri.size, _ = partSizes(b, t)
		}
	}
	if fb.infos == nil {
		fb.infos = map[int]*relInfo{}
	}
	fb.infos[l.item] = ri
	return ri
}

// estRows estimates the rows node n produces.
func (fb *fromBuilder) estRows(n PlanNode) float64 {
	switch x := n.(type) {
	case *LeafNode:
		return fb.leafRows(x)
	case *JoinNode:
		if x.semi != nil {
			return fb.semiRows(x) // semiplan.go
		}
		l, r := fb.estRows(x.Left), fb.estRows(x.Right)
		rows := l * r
		for i := range x.Lkeys {
			rows *= fb.keySel(x.Lkeys[i], x.Rkeys[i])
		}
		for _, c := range x.Cond {
			rows *= fb.joinCondSel(c)
		}
		switch x.Kind {
		case JoinLeft:
			rows = math.Max(rows, l)
		case JoinRight:
			rows = math.Max(rows, r)
		case JoinFull:
			rows = math.Max(rows, math.Max(l, r))
		}
		return clampRows(rows)
	}
	return 1000
}

// leafRows estimates the rows leaf l gives after its filters.
func (fb *fromBuilder) leafRows(l *LeafNode) float64 {
	if ri := fb.relInfo(l); ri != nil {
		return clampRows(ri.size.tuples * ri.restrictSel(l.Filters, func(v expr.Expr) bool {
			m, opaque := expr.ExprRefs(v, fb.itemOf)
			return m == 0 && !opaque
		}))
	}
	switch src := l.Src.(type) {
	case *ValuesSource:
		return clampRows(float64(len(src.Rows)))
	case *FuncSource:
		if src.Srf == nil {
			return 1
		}
	case *SeqSource:
		return 1
	}
	return 1000
}

// keySel is the selectivity of the join key equality l = r.
func (fb *fromBuilder) keySel(l, r expr.Expr) float64 {
	_, _, lok := fb.keyColumn(l)
	_, _, rok := fb.keyColumn(r)
	if !lok || !rok {
		return defaultEqSel
	}
	// eqjoinsel: matching the two columns' most common values where both
	// have them (semisel.go), else their distinct values
	return eqjoinselInner(fb.keySide(l), fb.keySide(r))
}

// keyColumn finds the table leaf and column a join key reads, if it is
// one column of one.
func (fb *fromBuilder) keyColumn(e expr.Expr) (*relInfo, int, bool) {
	if c, ok := e.(*expr.CastExpr); ok && !c.Explicit {
		e = c.Arg
	}
	col, ok := e.(*expr.ColExpr)
	if !ok || col.I >= len(fb.itemOf) || fb.itemOf[col.I] < 0 {
		return nil, 0, false
	}
	l := fb.leaves[fb.itemOf[col.I]]
	ri := fb.relInfo(l)
	if ri == nil {
		return nil, 0, false
	}
	c, _, ok := ri.colOf(col)
	return ri, c, ok
}

// joinCondSel is the selectivity of a join condition that is not an
// equality key: `a <> b` of two columns keeps all but the rows equal
// (neqjoinsel), any other a third.
func (fb *fromBuilder) joinCondSel(c expr.Expr) float64 {
	if b, ok := c.(*expr.BinopExpr); ok && b.Op == "<>" {
		if _, _, lok := fb.keyColumn(b.L); lok {
			if _, _, rok := fb.keyColumn(b.R); rok {
				return 1 - fb.keySel(b.L, b.R)
			}
		}
	}
	return defaultIneqSel
}
