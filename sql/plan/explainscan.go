package plan

import (
	"strings"

	"lockd/sql/expr"
)

// EXPLAIN of the scans: a table by its access path, a partitioned
// table as an Append of its partitions, functions, VALUES and subqueries.

// leaf explains a FROM item's scan, its filters as the scan's Filter.
func (ex *explainer) leaf(lv *level, l *LeafNode) *exNode {
	ref := lv.refs[l.item]
	switch src := l.Src.(type) {
	case *TableSource:
		return ex.tableScan(lv, l, src, ref, lv.d, nil)
	case *PartitionedSource:
		return ex.appendNode(lv, l, src)
	}
	n := &exNode{rel: "", ref: ref, width: 32}
	switch src := l.Src.(type) {
	case *SubquerySource:
		n.typ = "Subquery Scan"
		n.rel = ""
		sub := ex.query(src.Plan)
		n.kids = []*exNode{sub}
		n.cost = pathCost{startup: sub.cost.startup, total: sub.cost.total + ex.c.cpuTuple*sub.cost.rows, rows: sub.cost.rows}
		n.typ = "Subquery Scan on " + quoteIdent(ref)
	case *FuncSource:
		n.typ = "Function Scan on " + functionName(src) + " " + quoteIdent(ref)
		if src.Srf == nil {
			n.typ = "Result"
		}
		n.cost = pathCost{total: 10, rows: 1000}
	case *ValuesSource:
		n.typ = "Values Scan on \"*VALUES*\""
		n.cost = pathCost{total: ex.c.cpuOperator * float64(len(src.Rows)), rows: float64(len(src.Rows))}
	case *CteSource:
		n.typ = "CTE Scan on " + quoteIdent(src.Def.Name)
		if ref != src.Def.Name {
			n.typ += " " + quoteIdent(ref)
		}
		n.cost = pathCost{total: 20, rows: 1000}
	case *SetopSource:
		n.typ = "Append"
		n.kids = []*exNode{ex.query(src.Left), ex.query(src.Right)}
		n.cost = pathCost{total: n.kids[0].cost.total + n.kids[1].cost.total, rows: n.kids[0].cost.rows + n.kids[1].cost.rows}
	default:
		n.typ = "Function Scan on " + quoteIdent(ref)
		n.cost = pathCost{total: 10, rows: 1000}
	}
	if len(l.Filters) > 0 {
		n.prop("Filter", lv.d.print(andAll(l.Filters)))
	}
	n.stats = ex.stat(l)
	return n
}

func functionName(f *FuncSource) string {
	if f.Srf != nil {
		return f.Srf.Name
	}
	return "?"
}

// tableScan explains the scan of one table (or partition) ref, with its
// index conditions, and the leaf's filters that are not index conditions
// as its Filter.
func (ex *explainer) tableScan(lv *level, l *LeafNode, ts *TableSource, ref string, ld *deparser, origOf map[expr.Expr]expr.Expr) *exNode {
	// a scan's conditions name its own columns bare (show_scan_qual),
	// other relations' qualified
	sd := *ld
	sd.prefix = ex.opts.Verbose
	d := &sd
	orig := func(e expr.Expr) expr.Expr {
		if o, ok := origOf[e]; ok {
			return o
		}
		return e
	}
	n := &exNode{typ: "Seq Scan", rel: ts.T.Name, ref: ref, width: lv.widths.leafWidth(l, ts)}
	var filters []expr.Expr
	indexConds := map[expr.Expr]bool{}
	if ts.Index != nil {
		n.typ = "Index Scan"
		if ts.IndexOnly {
			n.typ = "Index Only Scan"
		}
		n.index, n.backward = ts.Index.Name, ts.Backward
		if conds := ex.indexConds(ts, d, orig, indexConds); len(conds) > 0 {
			n.prop("Index Cond", andText(conds))
		}
	}
	if ts.Bitmap != nil {
		n.typ = "Bitmap Heap Scan"
		kid, recheck := ex.bitmapNode(ts.Bitmap, d, orig, indexConds)
		n.prop("Recheck Cond", andText(recheck))
		n.kids = []*exNode{kid}
		for _, e := range ts.Bitmap.Recheck {
			indexConds[orig(e)] = true
		}
	}
	for _, f := range l.Filters {
		if !indexConds[f] {
			filters = append(filters, f)
		}
	}
	if len(filters) > 0 {
		n.prop("Filter", d.print(andAll(filters)))
	}
	n.cost = l.Est
	if n.cost.rows == 0 {
		n.cost = ex.scanCost(ts, l)
	}
	n.stats = ex.stat(l)
	return n
}

// andText joins conditions as ruleutils prints an AND of them.
func andText(conds []string) string {
	if len(conds) == 1 {
		return conds[0]
	}
	return "(" + strings.Join(conds, " AND ") + ")"
}

// indexConds prints the index conditions of index scan ts, one by one,
// and marks the conditions they carry out in done.
func (ex *explainer) indexConds(ts *TableSource, d *deparser, orig func(expr.Expr) expr.Expr, done map[expr.Expr]bool) []string {
	var conds []string
	for i := range ts.KeyArgs {
		c := ts.Index.Cols[i]
		name := quoteIdent(ts.T.Cols[c].Name)
		if _, null := ts.KeyArgs[i].(*NullKey); null {
			conds = append(conds, "("+name+" IS NULL)")
		} else {
			// a join key reads the outer row: PostgreSQL prints the
			// parameter's referent qualified
			saved := d.force
			d.force = d.force || ts.conds[c] != nil && ts.conds[c].eqJoin
			conds = append(conds, "("+name+" = "+d.print(ts.KeyArgs[i])+")")
			d.force = saved
		}
		if cc := ts.conds[c]; cc != nil && cc.eqSrc != nil {
			done[orig(cc.eqSrc)] = true
		}
	}
	if ts.InArgs != nil || ts.InArr != nil || ts.Lo != nil || ts.Hi != nil || ts.NotNull {
		c := ts.Index.Cols[len(ts.KeyArgs)]
		name := quoteIdent(ts.T.Cols[c].Name)
		cc := ts.conds[c]
		switch {
		case ts.InArgs != nil:
			var b strings.Builder
			b.WriteString("(" + name + " = ANY (")
			d.writeArray(&b, ts.NextTyp, ts.InArgs)
			b.WriteString("))")
			conds = append(conds, b.String())
		case ts.InArr != nil:
			conds = append(conds, "("+name+" = ANY ("+d.print(ts.InArr)+"))")
		}
		if ts.Lo != nil {
			op := ">"
			if ts.LoIncl {
				op = ">="
			}
			conds = append(conds, "("+name+" "+op+" "+d.print(ts.Lo)+")")
		}
		if ts.Hi != nil {
			op := "<"
			if ts.HiIncl {
				op = "<="
			}
			conds = append(conds, "("+name+" "+op+" "+d.print(ts.Hi)+")")
		}
		if ts.NotNull && ts.Lo == nil && ts.Hi == nil {
			conds = append(conds, "("+name+" IS NOT NULL)")
		}
		if cc != nil {
			for _, s := range []expr.Expr{cc.inSrc, cc.loSrc, cc.hiSrc, cc.notNullSrc} {
				if s != nil {
					done[orig(s)] = true
				}
			}
		}
	}
	return conds
}

// bitmapNode explains a bitmap tree: Bitmap Index Scan, BitmapAnd and
// BitmapOr nodes, and the conditions it carries out as the heap scan's
// Recheck Cond prints them (create_bitmap_scan_plan's bitmapqualorig: an
// AND's conditions in one list, an OR's arms each one condition or an
// AND of them).
func (ex *explainer) bitmapNode(bn *BitmapNode, d *deparser, orig func(expr.Expr) expr.Expr, done map[expr.Expr]bool) (*exNode, []string) {
	n := &exNode{cost: bn.shown, stats: ex.stat(bn)}
	switch bn.Op {
	case BitmapIndexScan:
		n.typ = "Bitmap Index Scan on " + quoteIdent(bn.Scan.Index.Name)
		n.bitmapIndex = bn.Scan.Index.Name
		conds := ex.indexConds(bn.Scan, d, orig, done)
		if len(conds) > 0 {
			n.prop("Index Cond", andText(conds))
		}
		return n, conds
	case BitmapAnd:
		n.typ = "BitmapAnd"
		var all []string
		for _, k := range bn.Kids {
			kn, conds := ex.bitmapNode(k, d, orig, done)
			n.kids = append(n.kids, kn)
			all = append(all, conds...)
		}
		return n, all
	}
	n.typ = "BitmapOr"
	var arms []string
	for _, k := range bn.Kids {
		kn, conds := ex.bitmapNode(k, d, orig, done)
		n.kids = append(n.kids, kn)
		arms = append(arms, andText(conds))
	}
	return n, []string{"(" + strings.Join(arms, " OR ") + ")"}
}

// scanCost is a scan's cost when the planner did not keep one.
func (ex *explainer) scanCost(ts *TableSource, l *LeafNode) pathCost {
	sz := tableSize(ex.b, ts.T)
	ri := newRelInfo(ex.b, ts.T, tableColumn(ts.cols, l.Off, len(ts.Defs)))
	rows := clampRows(sz.tuples * ri.restrictSel(l.Filters, func(expr.Expr) bool { return true }))
	if ts.Bitmap != nil {
		return ts.Bitmap.heap
	}
	if ts.Index == nil {
		return ex.c.seqScanCost(sz, l.Filters, rows)
	}
	ch := pinned(ts.Index, ts.conds)
	ch.rng = ch.rng || ts.Lo != nil || ts.Hi != nil || ts.NotNull
	return ex.c.indexScanCost(sz, indexSize(ex.b, ts.Index, sz), ri.indexSel(ch, ts.conds), nIndexQuals(ch, ts.conds), nonIndexQuals(l.Filters, ch, ts.conds), rows, 1, saScans(ch, ts.conds), ri.indexCorrelation(ts.Index), ch.exact && ts.Index.Unique && !ch.null, ts.IndexOnly)
}

// appendNode explains a partitioned table's scan: an Append of the scans
// of the partitions a custom plan for this execution keeps (pruned on
// constants and parameters), each named after the table's alias.
func (ex *explainer) appendNode(lv *level, l *LeafNode, ps *PartitionedSource) *exNode {
	n := &exNode{typ: "Append"}
	if st := ex.stat(l); st != nil {
		cp := *st
		cp.Removed = 0 // the partitions' scans filter, not the Append
		n.stats = &cp
	}
	if ps.Only {
		n.typ = "Result"
		n.prop("One-Time Filter", "false")
		return n
	}
	cat := ex.b.Cat()
	if ps.Tree == nil || ps.Gen != cat.Gen {
		ps.Build(cat)
	}
	var parts []*PartNode
	ex.keptPartitions(ps.Tree, &parts)
	for _, pn := range parts {
		ref := ex.refName(ps.alias) // after the other relations of the level: the partitions come last
		// the partition's columns under its own name
		d := *lv.d
		d.cols = append([]colName(nil), lv.d.cols...)
		for j, c := range ps.cols {
			d.cols[l.Off+j] = colName{rel: ref, col: c.Name}
		}
		child := ex.tableScan(lv, &LeafNode{item: l.item, Src: pn.Ts, Off: l.Off, N: l.N, Filters: l.Filters}, pn.Ts, ref, &d, ps.origOf)
		child.stats = ex.stat(pn)
		n.kids = append(n.kids, child)
		if len(n.kids) == 1 {
			// an unordered Append starts when its first child does
			// (cost_append)
			n.cost.startup = child.cost.startup
		}
		n.cost.total += child.cost.total
		n.cost.rows += child.cost.rows
		n.width = child.width
	}
	if len(parts) == 1 && !ps.level {
		// PostgreSQL drops an Append of one scan; the item's columns are
		// then the partition's, under its name
		for j := range ps.cols {
			lv.d.cols[l.Off+j].rel = n.kids[0].ref
		}
		return n.kids[0]
	}
	if len(parts) == 0 {
		r := &exNode{typ: "Result"}
		r.prop("One-Time Filter", "false")
		return r
	}
	return n
}

// singlePartition reports whether a scan of ps reads one partition
// without an Append (pruning keeps one, and no per-row pruning needs the
// Append).
func (ex *explainer) singlePartition(ps *PartitionedSource) bool {
	if ps.level {
		return false
	}
	cat := ex.b.Cat()
	if ps.Tree == nil || ps.Gen != cat.Gen {
		ps.Build(cat)
	}
	var parts []*PartNode
	ex.keptPartitions(ps.Tree, &parts)
	return len(parts) == 1
}

// keptPartitions collects the leaf partitions under n that pruning on
// constants and parameters keeps.
func (ex *explainer) keptPartitions(n *PartNode, out *[]*PartNode) {
	if n == nil {
		return
	}
	if n.Desc == nil {
		*out = append(*out, n)
		return
	}
	var keep []bool
	if n.Prune != nil && ex.c.pruning && ex.ec != nil {
		saved := ex.ec.PruneUpTo
		ex.ec.PruneUpTo = expr.DepParam
		keep, _ = n.Prune.Eval(ex.ec, n.Desc)
		keep = append([]bool(nil), keep...)
		ex.ec.PruneUpTo = saved
	}
	for i, k := range n.Kids {
		if keep == nil || keep[i] {
			ex.keptPartitions(k, out)
		}
	}
}

// needCol reports whether the query reads column c (decode.go).
func (ts *TableSource) needCol(c int) bool {
	return c < len(ts.need) && ts.need[c]
}

// ---- subqueries
