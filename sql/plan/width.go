package plan

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// Plan widths as EXPLAIN prints them: the average bytes of the rows a
// node hands to the node above it. As PostgreSQL's set_rel_width, a node
// carries only the columns some node above it reads (a scan under
// count(*) over a join carries its join key, the join nothing), each at
// the average width ANALYZE measured (pg_statistic.stawidth) or, without
// one, its type's (get_typavgwidth); an aggregate or a Result carries its
// select list.

// colWidth is column c of t's width: ANALYZE's average when it has one
// above zero, else the type's (set_rel_width).
func colWidth(ri *relInfo, t *catalog.TableDef, c int) int {
	if ri != nil {
		if cs := ri.colStats(c); cs != nil && cs.AvgWidth > 0 {
			return int(cs.AvgWidth)
		}
	}
	return typeWidth(t.Cols[c].Type())
}

// levelWidths answers the widths of one query level's FROM tree nodes.
type levelWidths struct {
	ex *explainer
	p  *SelectPlan
	// all: which columns are read above a node cannot be told (a
	// correlated subquery reads the level row): every column counts
	all bool
	// top marks the level-row positions the nodes above the FROM tree
	// read (select list, grouping, sorting, limits)
	top []bool
	// own holds, per FROM tree node, the level-row positions its own
	// conditions read (a leaf's filters and index keys, a join's keys
	// and conditions)
	own map[PlanNode][]bool
	// leaves: the FROM tree's leaves by item (a partition's scan is
	// explained with a leaf of its own over the same item)
	leaves map[int]*LeafNode
	// classes are the level-row positions that inner joins' key
	// equalities make equal, PostgreSQL's equivalence classes (those
	// without a constant member): a member is needed above a node until
	// every member's table is joined, since any two of them could be
	// the next join's key (generate_base_implied_equalities_no_const
	// adds each member to every member relation's target)
	classes [][]int
}

func (ex *explainer) newLevelWidths(p *SelectPlan) *levelWidths {
	lw := &levelWidths{ex: ex, p: p, own: map[PlanNode][]bool{}, leaves: map[int]*LeafNode{}}
	if p.From == nil {
		return lw
	}
	n := 0
	var size func(x PlanNode)
	size = func(x PlanNode) {
		switch y := x.(type) {
		case *LeafNode:
			n = max(n, y.Off+y.N)
		case *JoinNode:
			size(y.Left)
			size(y.Right)
		}
	}
	size(p.From)
	lw.top = make([]bool, n)
	marks := func(need []bool, es ...expr.Expr) {
		for _, e := range es {
			lw.mark(need, e)
		}
	}
	marks(lw.top, p.Targets...)
	marks(lw.top, p.OneTime...)
	marks(lw.top, p.GroupBy...)
	marks(lw.top, p.DistinctOn...)
	marks(lw.top, p.Having, p.Limit, p.Offset)
	for _, a := range p.Aggs {
		marks(lw.top, a.Arg, a.Arg2, a.Filter)
		for _, k := range a.Order {
			marks(lw.top, k.E)
		}
	}
	for _, k := range p.Sort {
		marks(lw.top, k.E)
	}
	var walk func(x PlanNode)
	walk = func(x PlanNode) {
		need := make([]bool, n)
		switch y := x.(type) {
		case *LeafNode:
			lw.leaves[y.item] = y
			marks(need, y.Filters...)
			lw.all = lw.all || y.Lateral
			if ts, ok := y.Src.(*TableSource); ok {
				marks(need, ts.KeyArgs...)
				marks(need, ts.InArgs...)
				marks(need, ts.InArr, ts.Lo, ts.Hi)
			}
		case *JoinNode:
			marks(need, y.Cond...)
			marks(need, y.Lkeys...)
			marks(need, y.Rkeys...)
			marks(need, y.Filters...)
			walk(y.Left)
			walk(y.Right)
		}
		lw.own[x] = need
	}
	walk(p.From)
	lw.classes = equivalenceClasses(p.From, n)
	return lw
}

// equivalenceClasses groups the level-row positions (of n) that the
// inner joins under root equate by their keys, leaving out the classes a
// scan's condition pins to a constant.
func equivalenceClasses(root PlanNode, n int) [][]int {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(i int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	pinned := make([]bool, n)
	joined := false
	var walk func(x PlanNode)
	walk = func(x PlanNode) {
		switch y := x.(type) {
		case *LeafNode:
			for _, f := range y.Filters {
				if b, ok := f.(*expr.BinopExpr); ok && b.Op == "=" {
					for _, pair := range [][2]expr.Expr{{b.L, b.R}, {b.R, b.L}} {
						c, ok := pair[0].(*expr.ColExpr)
						if _, k := pair[1].(*expr.ConstExpr); ok && k && c.I < n {
							pinned[c.I] = true
						}
					}
				}
			}
		case *JoinNode:
			if y.Kind == JoinInner {
				for i := range y.Lkeys {
					l, lok := y.Lkeys[i].(*expr.ColExpr)
					r, rok := y.Rkeys[i].(*expr.ColExpr)
					if lok && rok && l.I < n && r.I < n {
						parent[find(l.I)] = find(r.I)
						joined = true
					}
				}
			}
			walk(y.Left)
			walk(y.Right)
		}
	}
	walk(root)
	if !joined {
		return nil
	}
	byRoot := map[int][]int{}
	for i := 0; i < n; i++ {
		byRoot[find(i)] = append(byRoot[find(i)], i)
	}
	var classes [][]int
	for _, members := range byRoot {
		if len(members) < 2 {
			continue
		}
		constant := false
		for _, m := range members {
			constant = constant || pinned[m]
		}
		if !constant {
			classes = append(classes, members)
		}
	}
	return classes
}

// mark marks the level-row positions e reads in need.
func (lw *levelWidths) mark(need []bool, e expr.Expr) {
	expr.WalkExpr(e, func(x expr.Expr) bool {
		switch c := x.(type) {
		case *expr.ColExpr:
			if c.I < len(need) {
				need[c.I] = true
			} else {
				lw.all = true
			}
		case *expr.LevelExpr:
			lw.mark(need, c.E)
		case *expr.SublinkExpr:
			lw.all = lw.all || c.Correlated
		}
		return !lw.all
	})
}

// above marks the positions read above node n: by the level's upper
// nodes and by the conditions of every FROM tree node outside n.
func (lw *levelWidths) above(n PlanNode) []bool {
	need := append([]bool(nil), lw.top...)
	inside := map[PlanNode]bool{}
	var in func(x PlanNode)
	in = func(x PlanNode) {
		inside[x] = true
		if j, ok := x.(*JoinNode); ok {
			in(j.Left)
			in(j.Right)
		}
	}
	in(n)
	// an equivalence class with members inside n and outside it: n's
	// members are needed above n
	within := make([]bool, len(need))
	for x := range inside {
		if l, ok := x.(*LeafNode); ok {
			for i := l.Off; i < l.Off+l.N && i < len(within); i++ {
				within[i] = true
			}
		}
	}
	for _, class := range lw.classes {
		out := false
		for _, m := range class {
			out = out || !within[m]
		}
		if !out {
			continue
		}
		for _, m := range class {
			if within[m] {
				need[m] = true
			}
		}
	}
	for x, own := range lw.own {
		if inside[x] {
			continue
		}
		for i, b := range own {
			need[i] = need[i] || b
		}
	}
	return need
}

// leafWidth is the width of the rows table scan ts of leaf l returns.
func (lw *levelWidths) leafWidth(l *LeafNode, ts *TableSource) int {
	ri := newRelInfo(lw.ex.b, ts.T, tableColumn(ts.cols, l.Off, len(ts.Defs)))
	var need []bool
	if orig := lw.leaves[l.item]; !lw.all && orig != nil {
		need = lw.above(orig)
	}
	w := 0
	for c := range ts.Defs {
		if need != nil && (l.Off+c >= len(need) || !need[l.Off+c]) {
			continue
		}
		w += colWidth(ri, ts.T, c)
	}
	return w
}

// joinWidth is the width of the rows join j returns; left and right are
// its sides' nodes (their widths summed when the columns read above j
// cannot be told).
func (lw *levelWidths) joinWidth(j *JoinNode, left, right *exNode) int {
	if lw.all || lw.own[j] == nil {
		return left.width + right.width
	}
	need := lw.above(j)
	w := 0
	var sum func(x PlanNode)
	sum = func(x PlanNode) {
		switch y := x.(type) {
		case *JoinNode:
			sum(y.Left)
			sum(y.Right)
		case *LeafNode:
			ts, ok := y.Src.(*TableSource)
			if !ok {
				for i := y.Off; i < y.Off+y.N && i < len(need); i++ {
					if need[i] {
						w += typeWidth(y.Src.columns()[i-y.Off].Type)
					}
				}
				return
			}
			ri := newRelInfo(lw.ex.b, ts.T, tableColumn(ts.cols, y.Off, len(ts.Defs)))
			for c := range ts.Defs {
				if y.Off+c < len(need) && need[y.Off+c] {
					w += colWidth(ri, ts.T, c)
				}
			}
		}
	}
	sum(j)
	return w
}

// targetWidth is the width of p's select list (an Aggregate's or a
// Result's rows): a column of a table at its width, anything else at
// its type's.
func (lw *levelWidths) targetWidth(lv *level) int {
	w := 0
	for _, t := range lw.p.Targets {
		w += lw.exprWidth(lv, t)
	}
	return w
}

func (lw *levelWidths) exprWidth(lv *level, e expr.Expr) int {
	if c, ok := e.(*expr.ColExpr); ok {
		for _, l := range lv.leafs {
			if ts, ok := l.Src.(*TableSource); ok && c.I >= l.Off && c.I < l.Off+len(ts.Defs) {
				ri := newRelInfo(lw.ex.b, ts.T, tableColumn(ts.cols, l.Off, len(ts.Defs)))
				return colWidth(ri, ts.T, c.I-l.Off)
			}
		}
	}
	return typeWidth(e.Type())
}
