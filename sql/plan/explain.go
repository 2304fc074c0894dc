package plan

import (
	"fmt"
	"math"
	"sort"
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
	// bitmapIndex: a Bitmap Index Scan's index (named in its type)
	bitmapIndex string
	backward    bool
	rel, ref    string // scans: the relation and its name in the plan
	cost        pathCost
	width       int
	props       []exProp
	kids        []*exNode
	subs        []*exSub // InitPlans before the children, SubPlans after
	stats       *expr.NodeStats
	exec        bool // the node ran (stats are meaningful)
	// innerUnique: a join whose inner rows match each outer row at most
	// once (FORMAT JSON's "Inner Unique"; nil: not known)
	innerUnique *bool
}

type exProp struct{ label, value string }

// exSub is an InitPlan or SubPlan of a node.
type exSub struct {
	name   string // "InitPlan 1 (returns $0)", "SubPlan 2"
	init   bool
	exists bool // an EXISTS subquery
	root   *exNode
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
		case "Merge Join":
			s = "Merge " + n.joinType + " Join"
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
		if p.label == "Recheck Cond" && opts.Analyze && n.stats != nil && n.stats.RecheckRemoved > 0 {
			*out = append(*out, detail+"Rows Removed by Index Recheck: "+fmtRows(n.stats.RecheckRemoved/math.Max(n.stats.Loops, 1)))
		}
	}
	if opts.Analyze && n.stats != nil {
		if n.stats.JoinFilter > 0 {
			*out = append(*out, detail+"Rows Removed by Join Filter: "+fmtRows(n.stats.JoinFilter/math.Max(n.stats.Loops, 1)))
		}
		if n.stats.Removed > 0 {
			*out = append(*out, detail+"Rows Removed by Filter: "+fmtRows(n.stats.Removed/math.Max(n.stats.Loops, 1)))
		}
	}
	if opts.Analyze && n.typ == "Index Only Scan" {
		*out = append(*out, detail+"Heap Fetches: "+fmtRows(n.heapFetches()))
	}
	if opts.Analyze && n.typ == "Bitmap Heap Scan" && n.stats != nil && (n.stats.ExactPages > 0 || n.stats.LossyPages > 0) {
		line := detail + "Heap Blocks:"
		if n.stats.ExactPages > 0 {
			line += " exact=" + fmtRows(n.stats.ExactPages)
		}
		if n.stats.LossyPages > 0 {
			line += " lossy=" + fmtRows(n.stats.LossyPages)
		}
		*out = append(*out, line)
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

// heapFetches is an index-only scan's heap fetches over all its loops
// (PostgreSQL prints the total, not the average per loop).
func (n *exNode) heapFetches() float64 {
	if n.stats == nil {
		return 0
	}
	return n.stats.HeapFetches
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
	// attached: SubPlans shown under the scan or join that evaluates them
	attached map[*exSub]bool
	stats    map[any]*expr.NodeStats
	outer    []*deparser
	nrels    int // relations in the statement's plan (PostgreSQL's range table)
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
	ex := &explainer{b: b, c: costsOf(b), ec: ec, opts: &opts, used: map[string]bool{}, subs: map[*expr.SublinkExpr]*exSub{}, attached: map[*exSub]bool{}, stats: stats}
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
	widths *levelWidths
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
		top = &exNode{typ: "Result", cost: pathCost{total: ex.c.cpuTuple, rows: 1}, width: lv.widths.targetWidth(lv)}
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
		a := &exNode{typ: "Aggregate", strategy: "Plain", width: lv.widths.targetWidth(lv)}
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
			if p.GroupRows > 0 {
				groups = p.GroupRows
			}
			a.cost = pathCost{startup: in.total + aggCost + ex.c.cpuOperator*float64(len(p.GroupBy))*in.rows, rows: clampRows(groups)}
			a.cost.total = a.cost.startup + ex.c.cpuTuple*a.cost.rows
			if p.GroupSorted {
				a.strategy = "Sorted"
				if p.GroupSortInput {
					top = ex.groupSort(lv, p, top) // explainmerge.go
					in = top.cost
					a.cost.startup = in.total + aggCost + ex.c.cpuOperator*float64(len(p.GroupBy))*in.rows
				}
				a.cost.total = a.cost.startup + ex.c.cpuTuple*a.cost.rows
				a.cost.startup = in.startup
			}
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
		if p.DistinctRows > 0 {
			rows = p.DistinctRows
		}
		// cost_agg, AGG_HASHED: each key compared per input row
		nkeys := float64(len(keys))
		u.cost = pathCost{startup: top.cost.total + ex.c.cpuOperator*nkeys*top.cost.rows, rows: rows}
		u.cost.total = u.cost.startup + ex.c.cpuTuple*rows
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
		sc := ex.c.boundedSortCost(rows, float64(top.width), limitTuples(p), float64(ex.c.workMem))
		s.cost = pathCost{startup: top.cost.total + sc.startup, total: top.cost.total + sc.total, rows: rows}
		s.kids = []*exNode{top}
		s.stats = ex.stat(StatSort{p})
		top = s
	}
	if p.Limit != nil || p.Offset != nil {
		l := &exNode{typ: "Limit", width: top.width}
		// adjust_limit_rows_costs: the rows OFFSET skips are read
		// before the first one, then LIMIT's share of the rest (a
		// parameter's: a tenth)
		in := top.cost
		startup, left := in.startup, rows
		if p.Offset != nil {
			skip := rows / 10
			if c, ok := p.Offset.(*expr.ConstExpr); ok {
				skip = 0
				if !c.D.Null {
					skip = float64(c.D.I)
				}
			}
			skip = math.Min(skip, rows)
			if in.rows > 0 {
				startup += (in.total - in.startup) * skip / in.rows
			}
			left = math.Max(1, rows-skip)
		}
		lim, total := left, in.total
		if p.Limit != nil {
			lim = left / 10
			if c, ok := p.Limit.(*expr.ConstExpr); ok {
				lim = left
				if !c.D.Null {
					lim = float64(c.D.I)
				}
			}
			lim = math.Min(lim, left)
			if in.rows > 0 {
				total = startup + (in.total-in.startup)*lim/in.rows
			}
		}
		l.cost = pathCost{startup: startup, total: total, rows: clampRows(lim)}
		l.kids = []*exNode{top}
		l.stats = ex.stat(StatLimit{p})
		top = l
	}
	ex.attachSubs(top, p)
	top.cost = ex.chargeInitPlans(top.cost, top.subs)
	if top.typ == "Result" && len(p.OneTime) > 0 && len(top.kids) == 1 {
		// a gating Result has the cost of the path it gates
		// (create_gating_plan), and that path was charged
		top.kids[0].cost = ex.chargeInitPlans(top.kids[0].cost, top.subs)
	}
	if top.stats == nil {
		top.stats = ex.stat(StatQuery{p})
	}
	return top
}

// chargeInitPlans is pc with the runs of the InitPlans among subs added
// to its start-up and total costs, as SS_charge_for_initplans adds them
// to the query level's final paths (and create_minmaxagg_path its
// min/max subqueries'): a subquery's whole cost, an EXISTS's start-up
// cost and the run cost of its first row (cost_subplan).
func (ex *explainer) chargeInitPlans(pc pathCost, subs []*exSub) pathCost {
	for _, s := range subs {
		if !s.init || s.root == nil {
			continue
		}
		sc := s.root.cost
		run := sc.total
		if s.exists {
			run = sc.startup + (sc.total-sc.startup)/clampRows(sc.rows)
		}
		pc.startup += run
		pc.total += run
	}
	return pc
}

// limitTuples is the rows p's LIMIT and OFFSET ask for when both are
// constants (PostgreSQL's limit_tuples for a bounded sort), 0 else.
func limitTuples(p *SelectPlan) float64 {
	k, ok := p.Limit.(*expr.ConstExpr)
	if !ok || k.D.Null {
		return 0
	}
	n := float64(k.D.I)
	if p.Offset != nil {
		o, ok := p.Offset.(*expr.ConstExpr)
		if !ok {
			return 0
		}
		if !o.D.Null {
			n += float64(o.D.I)
		}
	}
	return n
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
	lv := &level{p: p, refs: map[int]string{}, widths: ex.newLevelWidths(p)}
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
	// named in the order of the FROM items, as PostgreSQL names its range
	// table's entries, whatever the join order
	sort.SliceStable(leaves, func(a, b int) bool { return leaves[a].item < leaves[b].item })
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
		e := ex.leaf(lv, x)
		if _, ok := x.Src.(*PartitionedSource); !ok {
			ex.attachNodeSubs(e, x.Filters)
		}
		return e
	case *JoinNode:
		e := ex.join(lv, x)
		ex.attachNodeSubs(e, append(append([]expr.Expr(nil), x.Cond...), x.Filters...))
		return e
	}
	return &exNode{typ: "Result"}
}

// attachNodeSubs hangs the SubPlans of a scan's or join's conditions
// under that node, as PostgreSQL shows a SubPlan with the node that
// evaluates it (InitPlans stay with the query's top node).
func (ex *explainer) attachNodeSubs(n *exNode, conds []expr.Expr) {
	for _, c := range conds {
		expr.WalkExpr(c, func(x expr.Expr) bool {
			if s, ok := x.(*expr.SublinkExpr); ok {
				if es := ex.subs[s]; es != nil && !es.init && !ex.attached[es] {
					ex.attached[es] = true
					n.subs = append(n.subs, es)
				}
			}
			return true
		})
	}
}

func (ex *explainer) join(lv *level, j *JoinNode) *exNode {
	left, right := ex.fromNode(lv, j.Left), ex.fromNode(lv, j.Right)
	if j.UniqueLeft {
		left = ex.uniqueNode(lv, j, left) // explainsemi.go
	}
	if j.UniqueRight {
		right = ex.uniqueNode(lv, j, right)
	}
	n := &exNode{joinType: map[joinKind]string{JoinInner: "Inner", JoinLeft: "Left", JoinRight: "Right", JoinFull: "Full", JoinSemi: "Semi", JoinAnti: "Anti"}[j.Kind], width: lv.widths.joinWidth(j, left, right)}
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
	case j.Merge:
		ex.mergeJoin(lv, j, n, left, right) // explainmerge.go
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
		if pc, ok := ex.c.hashJoinExplained(j, outer.cost, inner.cost, j.Kind == JoinRight || j.HashLeft); ok {
			n.cost = pathCost{startup: pc.startup, total: pc.total, rows: rows}
		} else {
			n.cost = pathCost{startup: outer.cost.startup + h.cost.total, rows: rows}
			n.cost.total = outer.cost.total + h.cost.total + ex.c.hashJoinCost(outer.cost.rows, inner.cost.rows, rows, len(j.Lkeys))
		}
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
	ex.semiCost(j, n, left) // explainsemi.go
	return n
}

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
	es := &exSub{init: !s.Correlated && !(s.Kind == expr.SublinkAny && s.Hashable), exists: s.Kind == expr.SublinkExists}
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
				if es := ex.subs[s]; es != nil && !seen[es] && !ex.attached[es] {
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
