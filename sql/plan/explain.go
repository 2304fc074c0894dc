package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"lockd/sql/expr"
)

// EXPLAIN: a query's plan as PostgreSQL prints it, node by node with
// PostgreSQL's node names, detail lines and layout (commands/explain.c),
// so that a psql user reads lockd's plans as PostgreSQL's. lockd's
// executor is not PostgreSQL's, and the tree is what lockd does, named as
// PostgreSQL names the node that does the same: a table read once and
// hashed is a Hash under a Hash Join, a table read per outer row through
// an index is the inner Index Scan of a Nested Loop, a partitioned table
// an Append of its partitions' scans, aggregation by a hash table a
// HashAggregate. docs/planner.md lists where the shapes differ.

// ExplainOptions are EXPLAIN's options.
type ExplainOptions struct {
	Analyze, Verbose, Costs, Timing, Summary bool
	JSON                                     bool
}

// exNode is one node of an explained plan.
type exNode struct {
	typ      string // PostgreSQL's node type: "Seq Scan", "Hash Join", ...
	joinType string // "Inner", "Left", ...: joins only
	strategy string // aggregates: "Plain", "Hashed"
	index    string // index scans: the index's name
	backward bool
	rel, ref string // scans: the relation and its name in the plan
	cost     pathCost
	width    int
	props    []exProp
	kids     []*exNode
	subs     []*exSub // InitPlans before the children, SubPlans after
	stats    *expr.NodeStats
	exec     bool // the node ran (stats are meaningful)
}

type exProp struct{ label, value string }

// exSub is an InitPlan or SubPlan of a node.
type exSub struct {
	name string // "InitPlan 1 (returns $0)", "SubPlan 2"
	init bool
	root *exNode
}

func (n *exNode) prop(label, value string) { n.props = append(n.props, exProp{label, value}) }

// name is the node's first line without costs: type, join type,
// direction, index and relation.
func (n *exNode) name() string {
	s := n.typ
	switch {
	case n.typ == "Aggregate" && n.strategy == "Hashed":
		s = "HashAggregate"
	case n.typ == "Aggregate" && n.strategy == "Sorted":
		s = "GroupAggregate"
	case n.joinType != "" && n.joinType != "Inner":
		switch n.typ {
		case "Nested Loop":
			s += " " + n.joinType + " Join"
		case "Hash Join":
			s = "Hash " + n.joinType + " Join"
		}
	}
	if n.backward {
		s += " Backward"
	}
	if n.index != "" {
		s += " using " + quoteIdent(n.index)
	}
	if n.rel != "" {
		s += " on " + quoteIdent(n.rel)
		if n.ref != n.rel {
			s += " " + quoteIdent(n.ref)
		}
	}
	return s
}

// text appends the text format lines of n, whose name starts at column
// col (arrow: printed with "->  " before it).
func (n *exNode) text(out *[]string, col int, arrow bool, opts *ExplainOptions) {
	line := strings.Repeat(" ", col)
	if arrow {
		line = strings.Repeat(" ", col-4) + "->  "
	}
	line += n.name()
	if opts.Costs {
		line += fmt.Sprintf("  (cost=%.2f..%.2f rows=%.0f width=%d)", n.cost.startup, n.cost.total, n.cost.rows, n.width)
	}
	if opts.Analyze {
		line += n.actualText(opts)
	}
	*out = append(*out, line)
	detail := strings.Repeat(" ", col+2)
	for _, p := range n.props {
		*out = append(*out, detail+p.label+": "+p.value)
	}
	if opts.Analyze && n.stats != nil {
		if n.stats.JoinFilter > 0 {
			*out = append(*out, detail+"Rows Removed by Join Filter: "+fmtRows(n.stats.JoinFilter/math.Max(n.stats.Loops, 1)))
		}
		if n.stats.Removed > 0 {
			*out = append(*out, detail+"Rows Removed by Filter: "+fmtRows(n.stats.Removed/math.Max(n.stats.Loops, 1)))
		}
	}
	for _, s := range n.subs {
		if s.init {
			*out = append(*out, detail+s.name)
			s.root.text(out, col+8, true, opts)
		}
	}
	for _, k := range n.kids {
		k.text(out, col+6, true, opts)
	}
	for _, s := range n.subs {
		if !s.init {
			*out = append(*out, detail+s.name)
			s.root.text(out, col+8, true, opts)
		}
	}
}

func fmtRows(r float64) string { return strconv.FormatFloat(math.Round(r), 'f', 0, 64) }

func (n *exNode) actualText(opts *ExplainOptions) string {
	st := n.stats
	if st == nil || st.Loops == 0 {
		return " (never executed)"
	}
	rows := st.Rows / st.Loops
	if opts.Timing {
		return fmt.Sprintf(" (actual time=%.3f..%.3f rows=%.0f loops=%.0f)", st.StartMs/st.Loops, st.TotalMs/st.Loops, rows, st.Loops)
	}
	return fmt.Sprintf(" (actual rows=%.0f loops=%.0f)", rows, st.Loops)
}

// ---- building

// explainer builds the explained tree of one statement.
type explainer struct {
	b      *expr.Backend
	c      *costs
	ec     *expr.EvalCtx
	opts   *ExplainOptions
	used   map[string]bool // relation names given out (set_rtable_names)
	nsub   int             // InitPlans and SubPlans numbered so far
	nparam int             // InitPlan outputs ($0, $1, ...)
	subs   map[*expr.SublinkExpr]*exSub
	stats  map[any]*expr.NodeStats
	outer  []*deparser
	nrels  int // relations in the statement's plan (PostgreSQL's range table)
}

// countRels counts the relations p's plan reads, in every query level:
// what decides whether PostgreSQL qualifies column names in the
// conditions of joins and upper nodes (its range table's length).
func (ex *explainer) countRels(p *SelectPlan) int {
	n := 0
	var exprs func(e expr.Expr)
	exprs = func(e expr.Expr) {
		expr.WalkExpr(e, func(x expr.Expr) bool {
			if s, ok := x.(*expr.SublinkExpr); ok {
				if sp, ok := s.Plan.(*SelectPlan); ok {
					n += ex.countRels(sp)
				}
			}
			return true
		})
	}
	var tree func(t PlanNode)
	tree = func(t PlanNode) {
		switch x := t.(type) {
		case *LeafNode:
			switch src := x.Src.(type) {
			case *TableSource:
				n++
			case *PartitionedSource:
				n++
				if !src.Only {
					cat := ex.b.Cat()
					if src.Tree == nil || src.Gen != cat.Gen {
						src.Build(cat)
					}
					var parts []*PartNode
					ex.keptPartitions(src.Tree, &parts)
					n += len(parts)
				}
			case *SubquerySource:
				n += ex.countRels(src.Plan)
			case *SetopSource:
				n += ex.countRels(src.Left) + ex.countRels(src.Right)
			default:
				n++
			}
			for _, f := range x.Filters {
				exprs(f)
			}
		case *JoinNode:
			tree(x.Left)
			tree(x.Right)
			for _, c := range x.Cond {
				exprs(c)
			}
		}
	}
	if p.From != nil {
		tree(p.From)
	}
	for _, t := range p.Targets {
		exprs(t)
	}
	for _, e := range p.OneTime {
		exprs(e)
	}
	exprs(p.Having)
	return n
}

// refName gives a relation its name in the plan: its alias, made
// unique with _1, _2, ... as PostgreSQL's set_rtable_names does.
func (ex *explainer) refName(alias string) string {
	name := alias
	for i := 1; ex.used[name]; i++ {
		name = alias + "_" + strconv.Itoa(i)
	}
	ex.used[name] = true
	return name
}

// ExplainSelect returns the lines of p's plan (the text format) or its
// JSON document (one line). stats, when not nil, are the counts an
// EXPLAIN ANALYZE run gathered, by plan node.
func ExplainSelect(b *expr.Backend, ec *expr.EvalCtx, p *SelectPlan, opts ExplainOptions, stats map[any]*expr.NodeStats) []string {
	ex := &explainer{b: b, c: costsOf(b), ec: ec, opts: &opts, used: map[string]bool{}, subs: map[*expr.SublinkExpr]*exSub{}, stats: stats}
	ex.nrels = ex.countRels(p)
	return ex.render(ex.query(p))
}

// level is the naming of one query level's row.
type level struct {
	p      *SelectPlan
	d      *deparser
	leafs  []*LeafNode
	refs   map[int]string // item → relation name
	single map[int]bool   // partitioned items scanned in one partition, without an Append
}

// query explains one query level: its FROM tree under its grouping,
// sorting and limits.
func (ex *explainer) query(p *SelectPlan) *exNode {
	lv := ex.newLevel(p)
	ex.outer = append(ex.outer, lv.d)
	defer func() { ex.outer = ex.outer[:len(ex.outer)-1] }()
	// subqueries of the select list first, then those of the conditions
	// (the order PostgreSQL's planner meets them)
	for _, t := range p.Targets {
		ex.numberSubs(t)
	}
	var top *exNode
	if p.From != nil {
		top = ex.fromNode(lv, p.From)
	} else {
		top = &exNode{typ: "Result", cost: pathCost{total: ex.c.cpuTuple, rows: 1}}
	}
	if len(p.OneTime) > 0 {
		r := &exNode{typ: "Result", cost: top.cost, width: top.width}
		r.prop("One-Time Filter", lv.d.print(andAll(p.OneTime)))
		if p.From != nil {
			r.kids = []*exNode{top}
		}
		top = r
	}
	rows := top.cost.rows
	if p.Grouped {
		a := &exNode{typ: "Aggregate", strategy: "Plain", width: 8}
		in := top.cost
		aggCost := ex.c.cpuOperator * float64(len(p.Aggs)) * in.rows
		if len(p.GroupBy) > 0 {
			a.strategy = "Hashed"
			var keys []string
			for _, g := range p.GroupBy {
				keys = append(keys, lv.d.print(g))
			}
			a.prop("Group Key", strings.Join(keys, ", "))
			groups := math.Min(in.rows, math.Pow(defaultNumDistinct, float64(len(p.GroupBy))))
			a.cost = pathCost{startup: in.total + aggCost + ex.c.cpuOperator*float64(len(p.GroupBy))*in.rows, rows: clampRows(groups)}
			a.cost.total = a.cost.startup + ex.c.cpuTuple*a.cost.rows
		} else {
			a.cost = pathCost{startup: in.total + aggCost, rows: 1}
			a.cost.total = a.cost.startup + ex.c.cpuTuple
		}
		if p.Having != nil {
			a.prop("Filter", lv.d.print(p.Having))
		}
		a.kids = []*exNode{top}
		a.stats = ex.stat(StatGroup{p})
		top, rows = a, a.cost.rows
	}
	if p.Distinct || len(p.DistinctOn) > 0 {
		u := &exNode{typ: "Aggregate", strategy: "Hashed", width: top.width}
		var keys []string
		if p.Distinct {
			for _, t := range p.Targets {
				keys = append(keys, lv.d.print(t))
			}
		} else {
			for _, k := range p.DistinctOn {
				keys = append(keys, lv.d.print(k))
			}
		}
		u.prop("Group Key", strings.Join(keys, ", "))
		u.cost = pathCost{startup: top.cost.total + ex.c.cpuOperator*top.cost.rows, total: top.cost.total + ex.c.cpuOperator*top.cost.rows + ex.c.cpuTuple*rows, rows: rows}
		u.kids = []*exNode{top}
		top = u
	}
	if len(p.Sort) > 0 {
		s := &exNode{typ: "Sort", width: top.width}
		var keys []string
		for _, k := range p.Sort {
			key := lv.d.print(k.E)
			if _, ok := k.E.(*expr.AggResult); ok {
				key = "(" + key + ")"
			}
			if k.Desc() {
				key += " DESC"
				if !k.NullsFirst() {
					key += " NULLS LAST"
				}
			} else if k.NullsFirst() {
				key += " NULLS FIRST"
			}
			keys = append(keys, key)
		}
		s.prop("Sort Key", strings.Join(keys, ", "))
		n := math.Max(rows, 2)
		sortCost := 2 * ex.c.cpuOperator * n * math.Log2(n)
		s.cost = pathCost{startup: top.cost.total + sortCost, total: top.cost.total + sortCost + ex.c.cpuOperator*rows, rows: rows}
		s.kids = []*exNode{top}
		s.stats = ex.stat(StatSort{p})
		top = s
	}
	if p.Limit != nil || p.Offset != nil {
		l := &exNode{typ: "Limit", width: top.width}
		lim := rows
		if c, ok := p.Limit.(*expr.ConstExpr); ok && !c.D.Null {
			lim = math.Min(rows, float64(c.D.I))
		} else if p.Limit != nil {
			lim = math.Max(1, rows/10)
		}
		in := top.cost
		frac := lim / math.Max(in.rows, 1)
		l.cost = pathCost{startup: in.startup, total: in.startup + (in.total-in.startup)*frac, rows: clampRows(lim)}
		l.kids = []*exNode{top}
		l.stats = ex.stat(StatLimit{p})
		top = l
	}
	ex.attachSubs(top, p)
	if top.stats == nil {
		top.stats = ex.stat(StatQuery{p})
	}
	return top
}

// andAll joins conditions with AND (one is itself).
func andAll(es []expr.Expr) expr.Expr {
	if len(es) == 1 {
		return es[0]
	}
	return &expr.BoolExpr{Op: expr.BoolAnd, Args: es}
}

// newLevel names the relations of p's FROM clause and their columns.
func (ex *explainer) newLevel(p *SelectPlan) *level {
	lv := &level{p: p, refs: map[int]string{}}
	var leaves []*LeafNode
	var walk func(n PlanNode)
	walk = func(n PlanNode) {
		switch x := n.(type) {
		case *LeafNode:
			leaves = append(leaves, x)
		case *JoinNode:
			walk(x.Left)
			walk(x.Right)
		}
	}
	if p.From != nil {
		walk(p.From)
	}
	lv.leafs = leaves
	d := &deparser{aggs: p.Aggs, groups: p.GroupBy, targets: p.Targets, fc: &ex.b.Format, outer: append([]*deparser(nil), ex.outer...)}
	d.subplan = ex.subplanRef
	for _, l := range leaves {
		alias := leafAlias(l)
		if ps, ok := l.Src.(*PartitionedSource); ok && !ps.Only {
			if ex.singlePartition(ps) {
				// no Append reads the table itself: the one partition
				// scanned takes its name (set_rtable_names names only
				// the relations the plan reads)
				lv.refs[l.item] = alias
				lv.single = map[int]bool{l.item: true}
				goto cols
			}
		}
		lv.refs[l.item] = ex.refName(alias)
	cols:
		for len(d.cols) < l.Off+l.N {
			d.cols = append(d.cols, colName{})
		}
		for j, c := range l.Src.columns() {
			d.cols[l.Off+j] = colName{rel: lv.refs[l.item], col: c.Name}
		}
	}
	d.prefix = ex.nrels > 1 || ex.opts.Verbose
	lv.d = d
	return lv
}

// leafAlias is the name a FROM item has in the query.
func leafAlias(l *LeafNode) string {
	switch s := l.Src.(type) {
	case *TableSource:
		return s.alias
	case *PartitionedSource:
		return s.alias
	case *SubquerySource:
		return s.alias
	case *FuncSource:
		return s.alias
	case *CteSource:
		return s.alias
	case *ViewSource:
		return s.alias
	case *SeqSource:
		return s.alias
	case *ValuesSource:
		return "*VALUES*"
	}
	return "?"
}

// fromNode explains a FROM tree.
func (ex *explainer) fromNode(lv *level, n PlanNode) *exNode {
	switch x := n.(type) {
	case *LeafNode:
		return ex.leaf(lv, x)
	case *JoinNode:
		return ex.join(lv, x)
	}
	return &exNode{typ: "Result"}
}

func (ex *explainer) join(lv *level, j *JoinNode) *exNode {
	left, right := ex.fromNode(lv, j.Left), ex.fromNode(lv, j.Right)
	n := &exNode{joinType: map[joinKind]string{JoinInner: "Inner", JoinLeft: "Left", JoinRight: "Right", JoinFull: "Full"}[j.Kind], width: left.width + right.width}
	n.stats = ex.stat(j)
	rows := j.Est.rows
	if rows == 0 {
		rows = clampRows(left.cost.rows * right.cost.rows * math.Pow(defaultEqSel, float64(len(j.Lkeys))))
	}
	var conds []string
	for i := range j.Lkeys {
		conds = append(conds, "("+lv.d.print(j.Lkeys[i])+" = "+lv.d.print(j.Rkeys[i])+")")
	}
	switch {
	case j.Rescan:
		// the right side runs per left row: a nested loop; the keys are
		// the inner scan's index conditions
		n.typ = "Nested Loop"
		if len(j.Cond) > 0 {
			n.prop("Join Filter", lv.d.print(andAll(j.Cond)))
		}
		n.kids = []*exNode{left, right}
		n.cost = pathCost{startup: left.cost.startup + right.cost.startup, rows: rows}
		n.cost.total = left.cost.total + left.cost.rows*right.cost.total + ex.c.cpuTuple*rows
	case len(j.Lkeys) > 0:
		n.typ = "Hash Join"
		outer, inner := left, right
		if j.Kind == JoinRight || j.HashLeft {
			// lockd hashes the left side of a right join and streams the
			// right; PostgreSQL shows it as a Hash Left Join with the
			// sides swapped
			if j.Kind == JoinRight {
				n.joinType = "Left"
			}
			outer, inner = right, left
			for i := range conds {
				conds[i] = "(" + lv.d.print(j.Rkeys[i]) + " = " + lv.d.print(j.Lkeys[i]) + ")"
			}
		}
		cond := conds[0]
		if len(conds) > 1 {
			cond = "(" + strings.Join(conds, " AND ") + ")"
		}
		n.prop("Hash Cond", cond)
		if len(j.Cond) > 0 {
			n.prop("Join Filter", lv.d.print(andAll(j.Cond)))
		}
		h := &exNode{typ: "Hash", width: inner.width, kids: []*exNode{inner}}
		h.cost = pathCost{startup: inner.cost.total, total: inner.cost.total, rows: inner.cost.rows}
		h.stats = ex.stat(StatHash{j})
		n.kids = []*exNode{outer, h}
		n.cost = pathCost{startup: outer.cost.startup + h.cost.total, rows: rows}
		n.cost.total = outer.cost.total + h.cost.total + ex.c.hashJoinCost(outer.cost.rows, inner.cost.rows, rows, len(j.Lkeys))
	default:
		// read once, kept, joined with every left row
		n.typ = "Nested Loop"
		if len(j.Cond) > 0 {
			n.prop("Join Filter", lv.d.print(andAll(j.Cond)))
		}
		m := &exNode{typ: "Materialize", width: right.width, kids: []*exNode{right}}
		m.cost = pathCost{startup: right.cost.startup, total: right.cost.total + 2*ex.c.cpuOperator*right.cost.rows, rows: right.cost.rows}
		n.kids = []*exNode{left, m}
		n.cost = pathCost{startup: left.cost.startup + m.cost.startup, rows: rows}
		n.cost.total = left.cost.total + m.cost.total + left.cost.rows*right.cost.rows*ex.c.cpuTuple
	}
	if len(j.Filters) > 0 {
		n.prop("Filter", lv.d.print(andAll(j.Filters)))
	}
	return n
}

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
	n := &exNode{typ: "Seq Scan", rel: ts.T.Name, ref: ref, width: ts.width()}
	var filters []expr.Expr
	indexConds := map[expr.Expr]bool{}
	if ts.Index != nil {
		n.typ = "Index Scan"
		if ts.covers(l) {
			n.typ = "Index Only Scan"
		}
		n.index, n.backward = ts.Index.Name, ts.Backward
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
				indexConds[orig(cc.eqSrc)] = true
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
						indexConds[orig(s)] = true
					}
				}
			}
		}
		if len(conds) == 1 {
			n.prop("Index Cond", conds[0])
		} else if len(conds) > 1 {
			n.prop("Index Cond", "("+strings.Join(conds, " AND ")+")")
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

// scanCost is a scan's cost when the planner did not keep one.
func (ex *explainer) scanCost(ts *TableSource, l *LeafNode) pathCost {
	sz := tableSize(ex.b, ts.T)
	ri := newRelInfo(ex.b, ts.T, tableColumn(ts.cols, l.Off, len(ts.Defs)))
	rows := clampRows(sz.tuples * ri.restrictSel(l.Filters, func(expr.Expr) bool { return true }))
	if ts.Index == nil {
		return ex.c.seqScanCost(sz, l.Filters, rows)
	}
	ch := pinned(ts.Index, ts.conds)
	ch.rng = ch.rng || ts.Lo != nil || ts.Hi != nil || ts.NotNull
	return ex.c.indexScanCost(sz, indexSize(ex.b, ts.Index, sz), ri.indexSel(ch, ts.conds), nIndexQuals(ch, ts.conds), l.Filters, rows, 1, ri.indexCorrelation(ts.Index), ch.exact && ts.Index.Unique && !ch.null)
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
		n.cost.startup = math.Min(n.cost.startup, child.cost.startup)
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

// width is the estimated width of the columns the scan decodes.
func (ts *TableSource) width() int {
	w := 0
	for i := 0; i < ts.DecodeLen() && i < len(ts.Defs); i++ {
		w += typeWidth(ts.Defs[i].Type())
	}
	return w
}

// covers reports whether ts's index holds every column the query reads
// of the table: PostgreSQL would answer from the index alone (an Index
// Only Scan). lockd has no visibility map and reads the heap rows still.
func (ts *TableSource) covers(l *LeafNode) bool {
	if ts.need == nil {
		return false
	}
	for c := range ts.Defs {
		if !ts.needCol(c) {
			continue
		}
		found := false
		for _, ic := range ts.Index.Cols {
			found = found || ic == c
		}
		if !found {
			return false
		}
	}
	return true
}

// needCol reports whether the query reads column c (decode.go).
func (ts *TableSource) needCol(c int) bool {
	return c < len(ts.need) && ts.need[c]
}

// ---- subqueries

// numberSubs numbers the subqueries of e in the order they are met.
func (ex *explainer) numberSubs(e expr.Expr) {
	expr.WalkExpr(e, func(x expr.Expr) bool {
		if s, ok := x.(*expr.SublinkExpr); ok {
			ex.sub(s)
		}
		return true
	})
}

func (ex *explainer) sub(s *expr.SublinkExpr) *exSub {
	if es := ex.subs[s]; es != nil {
		return es
	}
	ex.nsub++
	es := &exSub{init: !s.Correlated && !(s.Kind == expr.SublinkAny && s.Hashable)}
	if es.init {
		es.name = fmt.Sprintf("InitPlan %d (returns $%d)", ex.nsub, ex.nparam)
		ex.nparam++
	} else {
		es.name = fmt.Sprintf("SubPlan %d", ex.nsub)
	}
	ex.subs[s] = es
	if p, ok := s.Plan.(*SelectPlan); ok {
		es.root = ex.query(p)
	} else {
		es.root = &exNode{typ: "Result"}
	}
	return es
}

// subplanRef prints a subquery's reference in an expression: an
// InitPlan's output parameter, a SubPlan by its number — for x IN (...)
// over a hashable type PostgreSQL's hashed SubPlan, which lockd's set
// of the subquery's values is.
func (ex *explainer) subplanRef(s *expr.SublinkExpr) string {
	es := ex.sub(s)
	switch {
	case s.Kind == expr.SublinkAny && s.Hashable && !s.Correlated:
		return "(hashed " + es.name + ")"
	case es.init:
		// "InitPlan 1 (returns $0)": the expression reads $0
		return es.name[strings.Index(es.name, "$") : len(es.name)-1]
	}
	return "(" + es.name + ")"
}

// attachSubs hangs the subqueries of p's expressions under top, in the
// order they were numbered.
func (ex *explainer) attachSubs(top *exNode, p *SelectPlan) {
	seen := map[*exSub]bool{}
	var list []*exSub
	add := func(e expr.Expr) {
		expr.WalkExpr(e, func(x expr.Expr) bool {
			if s, ok := x.(*expr.SublinkExpr); ok {
				if es := ex.subs[s]; es != nil && !seen[es] {
					seen[es] = true
					list = append(list, es)
				}
			}
			return true
		})
	}
	for _, t := range p.Targets {
		add(t)
	}
	var walk func(n PlanNode)
	walk = func(n PlanNode) {
		switch x := n.(type) {
		case *LeafNode:
			for _, f := range x.Filters {
				add(f)
			}
		case *JoinNode:
			walk(x.Left)
			walk(x.Right)
			for _, f := range append(append([]expr.Expr(nil), x.Cond...), x.Filters...) {
				add(f)
			}
		}
	}
	if p.From != nil {
		walk(p.From)
	}
	for _, e := range p.OneTime {
		add(e)
	}
	add(p.Having)
	top.subs = append(top.subs, list...)
}

// ---- ANALYZE counts

// The keys of NodeStats for the nodes of a query that are not FROM tree
// nodes.
type (
	StatGroup struct{ P *SelectPlan } // its Aggregate
	StatSort  struct{ P *SelectPlan } // its Sort
	StatLimit struct{ P *SelectPlan } // its Limit
	StatQuery struct{ P *SelectPlan } // its top node otherwise
	StatHash  struct{ J *JoinNode }   // a Hash Join's Hash
)

func (ex *explainer) stat(key any) *expr.NodeStats {
	if ex.stats == nil {
		return nil
	}
	st := ex.stats[key]
	if st == nil {
		return &expr.NodeStats{}
	}
	return st
}

// ---- JSON

func (n *exNode) json(opts *ExplainOptions) string {
	var b strings.Builder
	b.WriteString("[\n  {\n    \"Plan\": ")
	n.writeJSON(&b, 4, opts, "")
	b.WriteString("\n  }\n]")
	return b.String()
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (n *exNode) writeJSON(b *strings.Builder, ind int, opts *ExplainOptions, parent string) {
	pad := strings.Repeat(" ", ind+2)
	var fields []string
	add := func(k, v string) { fields = append(fields, pad+jsonString(k)+": "+v) }
	typ := n.typ
	if i := strings.Index(typ, " on "); i >= 0 {
		typ = typ[:i]
	}
	add("Node Type", jsonString(typ))
	if n.strategy != "" {
		add("Strategy", jsonString(n.strategy))
	}
	if n.joinType != "" {
		add("Join Type", jsonString(n.joinType))
	}
	if parent != "" {
		add("Parent Relationship", jsonString(parent))
	}
	add("Parallel Aware", "false")
	add("Async Capable", "false")
	if n.index != "" {
		dir := "Forward"
		if n.backward {
			dir = "Backward"
		}
		add("Scan Direction", jsonString(dir))
		add("Index Name", jsonString(n.index))
	}
	if n.rel != "" {
		add("Relation Name", jsonString(n.rel))
		add("Alias", jsonString(n.ref))
	}
	if opts.Costs {
		add("Startup Cost", fmt.Sprintf("%.2f", n.cost.startup))
		add("Total Cost", fmt.Sprintf("%.2f", n.cost.total))
		add("Plan Rows", fmt.Sprintf("%.0f", n.cost.rows))
		add("Plan Width", strconv.Itoa(n.width))
	}
	if opts.Analyze {
		st := n.stats
		if st == nil {
			st = &expr.NodeStats{}
		}
		loops := math.Max(st.Loops, 1)
		if opts.Timing {
			add("Actual Startup Time", fmt.Sprintf("%.3f", st.StartMs/loops))
			add("Actual Total Time", fmt.Sprintf("%.3f", st.TotalMs/loops))
		}
		add("Actual Rows", fmtRows(st.Rows/loops))
		add("Actual Loops", fmtRows(st.Loops))
	}
	for _, p := range n.props {
		if p.label == "Group Key" || p.label == "Sort Key" {
			var items []string
			for _, k := range strings.Split(p.value, ", ") {
				items = append(items, jsonString(k))
			}
			add(p.label, "["+strings.Join(items, ", ")+"]")
			continue
		}
		add(p.label, jsonString(p.value))
	}
	if opts.Analyze && n.stats != nil && n.stats.Removed > 0 {
		add("Rows Removed by Filter", fmtRows(n.stats.Removed/math.Max(n.stats.Loops, 1)))
	}
	var kids []string
	kid := func(k *exNode, rel string) {
		var kb strings.Builder
		kb.WriteString(pad + "  ")
		k.writeJSON(&kb, ind+4, opts, rel)
		kids = append(kids, kb.String())
	}
	for _, s := range n.subs {
		if s.init {
			kid(s.root, "InitPlan")
		}
	}
	for i, k := range n.kids {
		rel := "Outer"
		switch {
		case n.typ == "Append":
			rel = "Member"
		case i == 1:
			rel = "Inner"
		}
		kid(k, rel)
	}
	for _, s := range n.subs {
		if !s.init {
			kid(s.root, "SubPlan")
		}
	}
	if len(kids) > 0 {
		fields = append(fields, pad+"\"Plans\": [\n"+strings.Join(kids, ",\n")+"\n"+pad+"]")
	}
	b.WriteString("{\n" + strings.Join(fields, ",\n") + "\n" + strings.Repeat(" ", ind) + "}")
}
