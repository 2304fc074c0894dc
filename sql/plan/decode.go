package plan

import "lockd/sql/expr"

// Decoding only the columns a query reads. A row's columns are stored one
// after another, so a scan decodes the columns up to the last one the
// query reads and leaves the rest of the row alone, as PostgreSQL's
// executor deforms a tuple only up to the last attribute it needs:
// count(*) over pgbench_accounts decodes nothing, max(abalance) skips the
// 84-character filler. A query that reads its level row through an
// expression the walk cannot see into (a correlated subquery, a LATERAL
// item, FOR UPDATE) decodes every column.

// limitDecoding marks the table scans of p's FROM tree with the columns
// p reads.
func limitDecoding(fb *fromBuilder, p *SelectPlan) {
	need, all := readColumns(fb, p, nil)
	if all {
		return
	}
	setNeed(fb, need)
}

// readColumns returns the level-row positions p reads, with those the
// expressions extra read; all is set when that cannot be known (see
// above), and for a query with FOR UPDATE or without FROM.
func readColumns(fb *fromBuilder, p *SelectPlan, extra []expr.Expr) (need []bool, all bool) {
	if p.RowLocks != nil || p.From == nil {
		return nil, true
	}
	need = make([]bool, fb.sc.Width)
	var mark func(e expr.Expr)
	mark = func(e expr.Expr) {
		expr.WalkExpr(e, func(x expr.Expr) bool {
			switch c := x.(type) {
			case *expr.ColExpr:
				if c.I < len(need) {
					need[c.I] = true
				} else {
					all = true
				}
			case *expr.LevelExpr:
				mark(c.E)
			case *expr.SublinkExpr:
				all = all || c.Correlated
			}
			return !all
		})
	}
	// within a partitioned source's conditions only what they read of
	// the level row (its join keys) counts
	var markLevel func(e expr.Expr)
	markLevel = func(e expr.Expr) {
		expr.WalkExpr(e, func(x expr.Expr) bool {
			if l, ok := x.(*expr.LevelExpr); ok {
				mark(l.E)
			}
			return true
		})
	}
	marks := func(es []expr.Expr) {
		for _, e := range es {
			mark(e)
		}
	}
	marks(extra)
	marks(p.Targets)
	marks(p.OneTime)
	marks(p.GroupBy)
	marks(p.DistinctOn)
	mark(p.Having)
	mark(p.Limit)
	mark(p.Offset)
	for _, a := range p.Aggs {
		mark(a.Arg)
		mark(a.Arg2)
		mark(a.Filter)
		for _, k := range a.Order {
			mark(k.E)
		}
	}
	for _, k := range p.Sort {
		mark(k.E)
	}
	var tree func(n PlanNode)
	tree = func(n PlanNode) {
		switch x := n.(type) {
		case *LeafNode:
			marks(x.Filters)
			all = all || x.Lateral
			switch src := x.Src.(type) {
			case *TableSource:
				marks(src.KeyArgs)
				marks(src.InArgs)
				mark(src.InArr)
				mark(src.Lo)
				mark(src.Hi)
			case *PartitionedSource:
				markLevel(src.where)
			case *FuncSource:
				if src.Srf != nil {
					marks(src.Srf.Args)
				}
				mark(src.Scalar)
			}
		case *JoinNode:
			marks(x.Cond)
			marks(x.Lkeys)
			marks(x.Rkeys)
			marks(x.Filters)
			tree(x.Left)
			tree(x.Right)
		}
	}
	tree(p.From)
	return need, all
}

// setNeed gives the table scans of fb's leaves the columns need marks,
// and limits their decoding to the last of them.
func setNeed(fb *fromBuilder, need []bool) {
	for _, l := range fb.leaves {
		var ncols int
		switch src := l.Src.(type) {
		case *TableSource:
			ncols = len(src.Defs)
		case *PartitionedSource:
			ncols = len(src.cols) - NumSysCols
		default:
			continue
		}
		n := 0
		for c := 0; c < ncols; c++ {
			if need[l.Off+c] {
				n = c + 1
			}
		}
		indexOnly := fb.costs().indexonly
		switch src := l.Src.(type) {
		case *TableSource:
			src.setNeed(need[l.Off : l.Off+min(l.N, len(need)-l.Off)])
			src.markIndexOnly(indexOnly)
		case *PartitionedSource:
			src.need = need[l.Off : l.Off+ncols]
			src.needSys = hasTrue(need[l.Off+ncols : l.Off+min(l.N, len(need)-l.Off)])
			src.indexOnly = indexOnly
			src.Tree.setNeed(src.need, src.needSys, indexOnly)
		}
		if n == ncols {
			continue
		}
		switch src := l.Src.(type) {
		case *TableSource:
			src.partial, src.decodeN = true, n
		case *PartitionedSource:
			src.partial, src.decodeN = true, n
			src.Tree.limitDecoding(n)
		}
	}
}

// limitDecoding sets the decoding limit of the partitions' scans under n
// (the partitioned source keeps it for trees it builds later).
func (n *PartNode) limitDecoding(cols int) {
	if n == nil {
		return
	}
	if n.Ts != nil {
		n.Ts.partial, n.Ts.decodeN = true, cols
	}
	for _, k := range n.Kids {
		k.limitDecoding(cols)
	}
}

// setNeed gives the partitions' scans under n the columns the query
// reads (and whether it reads a system column), and makes their index
// scans index-only where they can be and allowed says.
func (n *PartNode) setNeed(need []bool, needSys, allowed bool) {
	if n == nil {
		return
	}
	if n.Ts != nil {
		n.Ts.need, n.Ts.needSys = need, needSys
		n.Ts.markIndexOnly(allowed)
	}
	for _, k := range n.Kids {
		k.setNeed(need, needSys, allowed)
	}
}

func hasTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// DecodeOnly limits ts's scan to decoding the columns up to the last of
// cols, for a reader of those columns alone (an index build).
func (ts *TableSource) DecodeOnly(cols []int) {
	n := 0
	for _, c := range cols {
		n = max(n, c+1)
	}
	ts.partial, ts.decodeN = n < len(ts.Defs), n
}
