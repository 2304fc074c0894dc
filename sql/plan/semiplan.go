package plan

import (
	"math"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// Planning the joins of pulled-up subqueries (semijoin.go). As in
// PostgreSQL, a semi or anti join may only be done once the query's
// items its conditions read are joined (its min_lefthand), with its
// subquery's items on the inner side; which method does it is a matter
// of cost (semicost.go):
//
//   - Hash Semi/Anti Join: the subquery's rows hashed on the join's
//     equalities, each outer row probing them (and stopping at its first
//     match);
//   - Nested Loop Semi/Anti Join over an index scan of the subquery's
//     table keyed by the outer row, stopping at the first match;
//   - Nested Loop Semi/Anti Join over its rows kept in memory
//     (Materialize), the conditions as a Join Filter;
//   - for a semi join whose conditions are all equalities, PostgreSQL's
//     unique-ified paths: the subquery's rows made unique on their side
//     of the equalities (a HashAggregate) and joined with an inner join,
//     either hashed as its inner side or, when the join order search
//     puts them first, as its outer side (the query's table then read
//     through an index keyed by them, or hashed).
//
// A semi join whose subquery is one table that a unique index makes
// match each outer row at most once is an inner join
// (reduce_unique_semijoins). The join order search (joinorder.go)
// weighs where a semi or anti join over one table goes among the
// query's other joins; others are done after the query's own joins (or
// right above the inner join whose ON clause held them).

// prepSemi classifies s's conditions: equalities between a value of the
// query's rows (lkeys) and one of its own (rkeys), conditions on its
// items alone (local), and the rest (rest); keyed when all that joins it
// to the query are such equalities.
func (fb *fromBuilder) prepSemi(s *semiJoin) {
	s.lkeys, s.rkeys, s.local, s.rest = nil, nil, nil, nil
	all := uint64(1)<<uint(fb.nitems) - 1
	for _, c := range s.conds {
		m, opaque := expr.ExprRefs(c, fb.itemOf)
		switch {
		case !opaque && m&^s.items == 0:
			s.local = append(s.local, c)
			continue
		case !opaque && !s.anti && m&s.items == 0:
			continue // a condition on the query's rows alone: a filter there
		}
		if l, r, ok := equiKey(c, all&^s.items, s.items, fb.itemOf); ok && !opaque {
			s.lkeys = append(s.lkeys, l)
			s.rkeys = append(s.rkeys, r)
			continue
		}
		s.rest = append(s.rest, c)
	}
	s.keyed = len(s.lkeys) > 0 && len(s.rest) == 0 && !s.lhsAll
}

// reduceSemis makes inner joins of the semi joins whose subquery is one
// table with a unique index all of whose columns its equalities with the
// query's rows, or with constants, fix (PostgreSQL's
// reduce_unique_semijoins): such a table has at most one match for each
// outer row. It returns root and where with those tables and conditions
// added.
func (fb *fromBuilder) reduceSemis(root PlanNode, where []expr.Expr) (PlanNode, []expr.Expr) {
	for _, s := range fb.semis {
		if s.anti || len(s.nested) > 0 || !fb.uniqueFor(s) {
			continue
		}
		s.reduced = true
		if p := s.outer; p != nil {
			p.root = &JoinNode{Kind: JoinInner, Left: p.root, Right: s.root}
			p.items |= s.items
			p.conds = append(p.conds, s.conds...)
			for i, n := range p.nested {
				if n == s {
					p.nested = append(p.nested[:i:i], p.nested[i+1:]...)
					break
				}
			}
			continue
		}
		j := &JoinNode{Kind: JoinInner, Right: s.root}
		if s.above != nil {
			j.Left = s.above
			if r, ok := replaceNode(root, s.above, j); ok {
				root = r
				where = append(where, s.conds...)
				continue
			}
		}
		j.Left = root
		root = j
		where = append(where, s.conds...)
	}
	return root, where
}

// uniqueFor reports whether s's subquery is one table a unique index
// makes match each outer row at most once (rel_is_distinct_for).
func (fb *fromBuilder) uniqueFor(s *semiJoin) bool {
	l, ok := s.root.(*LeafNode)
	if !ok {
		return false
	}
	ts, ok := l.Src.(*TableSource)
	if !ok {
		return false
	}
	ri := fb.relInfo(l)
	all := uint64(1)<<uint(fb.nitems) - 1
	fixed := map[int]bool{}
	valOK := func(v expr.Expr) bool {
		m, opaque := expr.ExprRefs(v, fb.itemOf)
		return m == 0 && !opaque && !expr.IsVolatile(v)
	}
	for _, c := range s.conds {
		b, ok := c.(*expr.BinopExpr)
		if !ok || b.Op != "=" {
			continue
		}
		if _, r, ok := equiKey(b, all&^s.items, s.items, fb.itemOf); ok {
			if col, _, ok := ri.colOf(r); ok {
				fixed[col] = true
			}
			continue
		}
		if col, op, _, ok := ri.colCompare(b, valOK); ok && op == "=" {
			fixed[col] = true
		}
	}
	for _, ix := range fb.a.S.Cat().TableIndexes(ts.T) {
		if !ix.Unique {
			continue
		}
		covered := true
		for _, c := range ix.Cols {
			covered = covered && fixed[c]
		}
		if covered {
			return true
		}
	}
	return false
}

// replaceNode replaces node old of the tree under root by n.
func replaceNode(root, old, n PlanNode) (PlanNode, bool) {
	if root == old {
		return n, true
	}
	if j, ok := root.(*JoinNode); ok {
		if r, ok := replaceNode(j.Left, old, n); ok {
			j.Left = r
			return root, true
		}
		if r, ok := replaceNode(j.Right, old, n); ok {
			j.Right = r
			return root, true
		}
	}
	return root, false
}

// insertSemis puts the semi and anti joins the join order search did
// not place into the tree: above the inner join whose ON clause held
// them, else above everything.
func (fb *fromBuilder) insertSemis(root PlanNode) PlanNode {
	for _, s := range fb.semis {
		if s.outer != nil || s.reduced || s.node != nil {
			continue
		}
		j := &JoinNode{Kind: s.kind(), Right: fb.buildRHS(s), semi: s}
		s.node = j
		if s.above != nil {
			j.Left = s.above
			if r, ok := replaceNode(root, s.above, j); ok {
				root = r
				continue
			}
		}
		j.Left = root
		root = j
	}
	return root
}

func (s *semiJoin) kind() joinKind {
	if s.anti {
		return JoinAnti
	}
	return JoinSemi
}

// buildRHS returns s's side of its join: its FROM items with the joins
// of the subqueries pulled up from its WHERE clause.
func (fb *fromBuilder) buildRHS(s *semiJoin) PlanNode {
	for _, n := range s.nested {
		if n.reduced {
			continue
		}
		j := &JoinNode{Kind: n.kind(), Left: s.root, Right: fb.buildRHS(n), semi: n}
		n.node = j
		s.root = j
	}
	return s.root
}

// placeSemiConds distributes the conditions of every placed semi join:
// those on its own items into its side, those of a semi join on the
// query's items alone into the query's side, the rest into the join.
func (fb *fromBuilder) placeSemiConds() {
	for _, s := range fb.semis {
		j := s.node
		if s.reduced || j == nil {
			continue
		}
		rhs, lhs := j.Right, j.Left
		if j.UniqueLeft {
			rhs, lhs = j.Left, j.Right
		}
		for _, c := range s.conds {
			m, opaque := expr.ExprRefs(c, fb.itemOf)
			switch {
			case !opaque && m == 0:
				pushDown(rhs, c, leftmost(rhs).mask())
			case !opaque && m&^s.items == 0:
				pushDown(rhs, c, m)
			case !opaque && !s.anti && m&s.items == 0 && m&^lhs.mask() == 0:
				pushDown(lhs, c, m)
			default:
				j.Cond = append(j.Cond, c)
			}
		}
	}
}

// leftmost is the first leaf of a tree.
func leftmost(n PlanNode) *LeafNode {
	for {
		switch x := n.(type) {
		case *LeafNode:
			return x
		case *JoinNode:
			n = x.Left
		}
	}
}

// semiRows estimates the rows of semi or anti join j: its outer rows
// times the fraction with (without) a match.
func (fb *fromBuilder) semiRows(j *JoinNode) float64 {
	s := j.semi
	outer, inner := j.Left, j.Right
	if j.UniqueLeft {
		outer, inner = j.Right, j.Left
	}
	lkeys, rkeys, other := fb.splitKeys(j, s)
	jsel, _ := fb.semiSel(lkeys, rkeys, other, fb.estRows(inner))
	rows := fb.estRows(outer)
	if s.anti {
		return clampRows(rows * (1 - jsel))
	}
	return clampRows(rows * jsel)
}

// splitKeys returns the conditions of join j doing semi join s: its
// equalities' sides (the query's, s's) and the rest.
func (fb *fromBuilder) splitKeys(j *JoinNode, s *semiJoin) (lkeys, rkeys, other []expr.Expr) {
	if len(j.Lkeys) == 0 && len(j.Cond) == 0 {
		return s.lkeys, s.rkeys, s.rest // not yet placed
	}
	all := uint64(1)<<uint(fb.nitems) - 1
	conds := append([]expr.Expr(nil), j.Cond...)
	for i := range j.Lkeys {
		conds = append(conds, &expr.BinopExpr{Op: "=", L: j.Lkeys[i], R: j.Rkeys[i]})
	}
	for _, c := range conds {
		if b, ok := c.(*expr.BinopExpr); ok && b.Op == "=" {
			if l, r, ok := equiKey(b, all&^s.items, s.items, fb.itemOf); ok {
				lkeys, rkeys = append(lkeys, l), append(rkeys, r)
				continue
			}
		}
		other = append(other, c)
	}
	return lkeys, rkeys, other
}

// estimateGroups is estimate_num_groups for the distinct values of keys
// among inputRows rows: for columns of one table, the product of their
// numbers of distinct values (at most the table's rows, a tenth of them
// for several columns), reduced for the rows the table's conditions
// keep; 200 for any other expression.
func (fb *fromBuilder) estimateGroups(keys []expr.Expr, inputRows float64) float64 {
	type relGroup struct {
		ri          *relInfo
		nd, maxNd   float64
		n           int
		rows        float64
		defaultOnly bool
	}
	var groups []*relGroup
	num := 1.0
	for _, k := range keys {
		ri, c, ok := fb.keyColumn(k)
		if !ok {
			num *= defaultNumDistinct
			continue
		}
		var g *relGroup
		for _, x := range groups {
			if x.ri == ri {
				g = x
			}
		}
		if g == nil {
			g = &relGroup{ri: ri, nd: 1, rows: fb.itemRows(k)}
			groups = append(groups, g)
		}
		nd := ri.ndistinct(c)
		g.nd *= nd
		g.maxNd = math.Max(g.maxNd, nd)
		g.n++
	}
	for _, g := range groups {
		tuples := g.ri.size.tuples
		if tuples <= 0 {
			continue
		}
		clamp := tuples
		if g.n > 1 {
			clamp *= 0.1
			if clamp < g.maxNd {
				clamp = math.Min(g.maxNd, tuples)
			}
		}
		nd := math.Min(g.nd, clamp)
		if nd > 0 && g.rows < tuples {
			nd *= 1 - math.Pow((tuples-g.rows)/tuples, tuples/nd)
		}
		num *= clampRows(nd)
	}
	num = math.Ceil(num)
	return math.Max(1, math.Min(num, inputRows))
}

// keyTypes is the types of a list of keys.
func keyTypes(keys []expr.Expr) []types.Type {
	out := make([]types.Type, len(keys))
	for i, k := range keys {
		out[i] = k.Type()
	}
	return out
}
