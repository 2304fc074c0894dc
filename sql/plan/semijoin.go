package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Pulling subqueries up into joins, as PostgreSQL's pull_up_sublinks
// does (prepjointree.c, subselect.c): an EXISTS (subquery), NOT EXISTS
// (subquery) or x IN (subquery) that is one of the AND-ed conditions of
// a WHERE clause (or of an inner join's ON) is not run as a subquery for
// each row; the subquery's FROM items join the query's own, and the
// condition becomes a semi join (EXISTS, IN: each row of the query that
// has a match, once) or an anti join (NOT EXISTS: each row that has
// none), planned by cost like any other join (semiplan.go). NOT IN stays
// a subquery: its NULL semantics are not an anti join's.
//
// Which subqueries qualify is PostgreSQL's rule:
//   - EXISTS: a plain SELECT with a FROM clause, without WITH, set
//     operations, aggregates, HAVING, OFFSET, a LIMIT other than a
//     positive constant, FOR UPDATE or set-returning functions in its
//     select list (simplify_EXISTS_query; the select list, GROUP BY,
//     DISTINCT and ORDER BY do not matter); its WHERE clause reads the
//     query's rows, calls no volatile function, and its FROM clause
//     does not read them (convert_EXISTS_sublink_to_join).
//   - IN (= ANY): the subquery reads nothing of the query around it, its
//     left side reads the query's rows and calls nothing volatile
//     (convert_ANY_sublink_to_join), and the subquery is simple enough to
//     be merged (is_simple_subquery: no grouping, aggregates, DISTINCT,
//     ORDER BY, LIMIT/OFFSET, WITH, volatile select list). lockd pulls up
//     only = between values of one type (and rows of them); other
//     comparisons stay subqueries.
//
// A subquery is compiled as usual first (so its errors are the same
// either way), then, if it qualifies, compiled again with its FROM
// items placed in the query's level row: its names are looked up first,
// then the query's (analyze.Scope.Merged), and its conditions read both
// as columns of one row. Subqueries in the WHERE clause of a pulled-up
// one are pulled up in turn: into its join when they read its items,
// beside it when they read only the query's.

// semiJoin is a pulled-up subquery: the semi or anti join of the query's
// rows with its FROM items under its conditions.
type semiJoin struct {
	anti  bool
	items uint64   // its FROM items (PostgreSQL's min_righthand)
	root  PlanNode // their join tree
	conds []expr.Expr
	// lhs is the set of the query's items its conditions read
	// (min_lefthand); lhsAll when a condition reads the level row in a
	// way its mask cannot tell (a correlated subquery not pulled up)
	lhs    uint64
	lhsAll bool
	// nested: pulled up from this one's WHERE clause, reading its items
	// (they join inside its side); outer: the one whose WHERE clause held
	// this one
	nested []*semiJoin
	outer  *semiJoin
	// above is the inner join whose ON clause held it (nil: WHERE)
	above *JoinNode
	// node is the join that does it, once placed in the tree
	node *JoinNode
	// planning state (semiplan.go): its equalities with the query's rows
	// (their two sides), its conditions on its own items, the others;
	// keyed when the equalities are all that joins it; reduced when it
	// became an inner join
	lkeys, rkeys []expr.Expr
	local, rest  []expr.Expr
	keyed        bool
	reduced      bool
}

// pulledUp stands where a pulled-up subquery was in its clause; the
// clause's conjuncts drop it (dropPulled).
type pulledUp struct{}

func (*pulledUp) Type() types.Type { return types.TypeBool }
func (*pulledUp) Eval(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return types.Datum{}, pgerr.New(pgerr.InternalError, "a pulled-up subquery was evaluated")
}

// isPulled reports whether conjunct c is (NOT) a pulled-up subquery.
func isPulled(c expr.Expr) bool {
	if b, ok := c.(*expr.BoolExpr); ok && b.Op == expr.BoolNot && len(b.Args) == 1 {
		c = b.Args[0]
	}
	_, ok := c.(*pulledUp)
	return ok
}

// dropPulled removes the pulled-up subqueries from a clause's conjuncts.
func dropPulled(cs []expr.Expr) []expr.Expr {
	out := cs[:0]
	for _, c := range cs {
		if !isPulled(c) {
			out = append(out, c)
		}
	}
	return out
}

// canPullUp reports whether the subqueries of this query level may be
// pulled up: not for a query that locks rows (FOR UPDATE applies to its
// own FROM items) nor for UPDATE/DELETE ... FROM.
func (fb *fromBuilder) canPullUp() bool {
	return !fb.keepSides && fb.lock == nil && (fb.sel == nil || len(fb.sel.LockingClause) == 0)
}

// sublinkCands collects the SubLinks of clause n that pull_up_sublinks
// tries: its AND-ed conditions that are EXISTS or IN / = ANY
// (subquery) (anti false), or NOT EXISTS (anti true).
func sublinkCands(n *pg.Node, out map[*pg.SubLink]bool) {
	if n == nil {
		return
	}
	if b := n.GetBoolExpr(); b != nil {
		switch b.Boolop {
		case pg.BoolExprType_AND_EXPR:
			for _, a := range b.Args {
				sublinkCands(a, out)
			}
		case pg.BoolExprType_NOT_EXPR:
			if len(b.Args) == 1 {
				if sl := b.Args[0].GetSubLink(); sl != nil && sl.SubLinkType == pg.SubLinkType_EXISTS_SUBLINK {
					out[sl] = true
				}
			}
		}
		return
	}
	if sl := n.GetSubLink(); sl != nil {
		switch sl.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK, pg.SubLinkType_ANY_SUBLINK:
			out[sl] = false
		}
	}
}

// pullUpHook returns the analyzer hook that pulls up the candidate
// subqueries of clause n (nil if it has none). parent is the pulled-up
// subquery whose WHERE clause n is; above the inner join whose ON it is.
func (fb *fromBuilder) pullUpHook(n *pg.Node, parent *semiJoin, above *JoinNode) func(*analyze.Analyzer, *pg.SubLink) (expr.Expr, error) {
	cands := map[*pg.SubLink]bool{}
	sublinkCands(n, cands)
	if len(cands) == 0 {
		return nil
	}
	return func(a *analyze.Analyzer, sl *pg.SubLink) (expr.Expr, error) {
		anti, ok := cands[sl]
		if !ok {
			return a.Sublink(sl)
		}
		delete(cands, sl) // each is analysed once
		return fb.pullUp(a, sl, anti, parent, above)
	}
}

// fbMark is how far fb's FROM items and lists reached, for undoing a
// pull-up that turns out not to qualify.
type fbMark struct {
	nitems, itemOf, leaves, rels, ons, semis, width, sublinkRels int
}

func (fb *fromBuilder) mark() fbMark {
	return fbMark{fb.nitems, len(fb.itemOf), len(fb.leaves), len(fb.rels), len(fb.ons), len(fb.semis), fb.sc.Width, len(fb.a.S.SublinkRels)}
}

func (fb *fromBuilder) rollback(m fbMark) {
	for i := m.nitems; i < fb.nitems; i++ {
		delete(fb.infos, i)
	}
	fb.nitems = m.nitems
	fb.itemOf = fb.itemOf[:m.itemOf]
	fb.leaves = fb.leaves[:m.leaves]
	fb.deps = fb.deps[:m.leaves]
	fb.rels = fb.rels[:m.rels]
	fb.ons = fb.ons[:m.ons]
	fb.semis = fb.semis[:m.semis]
	fb.sc.Width = m.width
	fb.a.S.SublinkRels = fb.a.S.SublinkRels[:m.sublinkRels]
}

// pullUp compiles SubLink sl of the clause a analyses: as a semi (or,
// with anti, an anti) join when it qualifies, else as a subquery.
func (fb *fromBuilder) pullUp(a *analyze.Analyzer, sl *pg.SubLink, anti bool, parent *semiJoin, above *JoinNode) (expr.Expr, error) {
	m := fb.mark()
	e, err := a.Sublink(sl)
	if err != nil {
		return nil, err
	}
	se, ok := e.(*expr.SublinkExpr)
	if !ok || !qualifies(se, sl) {
		return e, nil
	}
	// the subquery's relations are locked as the level's own
	compiled := append([]expr.RelLock(nil), fb.a.S.SublinkRels[m.sublinkRels:]...)
	fb.a.S.SublinkRels = fb.a.S.SublinkRels[:m.sublinkRels]
	s, ok, err := fb.merge(a.Sc, se, sl, anti, parent, m)
	if err != nil || !ok {
		fb.rollback(m)
		fb.a.S.SublinkRels = append(fb.a.S.SublinkRels, compiled...)
		return e, nil
	}
	if !fb.attach(s, parent, above) {
		fb.rollback(m)
		fb.a.S.SublinkRels = append(fb.a.S.SublinkRels, compiled...)
		return e, nil
	}
	return &pulledUp{}, nil
}

// qualifies checks what the compiled subquery shows of PostgreSQL's
// conditions for pulling it up (the rest is checked while merging).
func qualifies(se *expr.SublinkExpr, sl *pg.SubLink) bool {
	sel := sl.Subselect.GetSelectStmt()
	p, ok := se.Plan.(*SelectPlan)
	if !ok || sel == nil || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 ||
		sel.WithClause != nil || len(sel.FromClause) == 0 || p.RowLocks != nil || p.Srf || p.Offset != nil {
		return false
	}
	switch se.Kind {
	case expr.SublinkExists:
		if len(p.Aggs) > 0 || p.Having != nil || !se.Correlated {
			return false
		}
		if p.Limit != nil {
			// LIMIT with a positive constant does not change what
			// EXISTS sees
			k, ok := p.Limit.(*expr.ConstExpr)
			if !ok || !k.D.Null && k.D.I <= 0 {
				return false
			}
		}
		return true
	case expr.SublinkAny:
		if se.Correlated || p.Grouped || len(p.Sort) > 0 || p.Distinct || len(p.DistinctOn) > 0 || p.Limit != nil {
			return false
		}
		for _, t := range p.Targets {
			if exprVolatile(t) {
				return false
			}
		}
		if op := "="; len(sl.OperName) > 0 && analyze.NodeName(sl.OperName[len(sl.OperName)-1]) != op {
			return false
		}
		if se.Test == nil || expr.IsVolatile(se.Test) || (!se.Row && !se.Hashable) {
			return false
		}
		return true
	}
	return false
}

// merge compiles the qualifying subquery of se again, its FROM items as
// items of fb's level, its names looked up before those of scope around
// (the clause's), and returns the semi join it makes; ok is false when
// what it reads rules the pull-up out after all.
func (fb *fromBuilder) merge(around *analyze.Scope, se *expr.SublinkExpr, sl *pg.SubLink, anti bool, parent *semiJoin, m fbMark) (*semiJoin, bool, error) {
	sel := sl.Subselect.GetSelectStmt()
	first := fb.nitems
	outer := fb.sc // the level's scope, whose width counts the level row
	sc := analyze.NewScope(around)
	sc.Merged = true
	sc.Width = outer.Width
	fb.sc = sc
	var root PlanNode
	for _, n := range sel.FromClause {
		node, err := fb.item(n)
		if err != nil {
			fb.sc = outer
			return nil, false, err
		}
		if root == nil {
			root = node
		} else {
			root = &JoinNode{Kind: JoinInner, Left: root, Right: node}
		}
	}
	fb.sc = outer
	outer.Width = sc.Width
	s := &semiJoin{anti: anti, root: root, outer: parent}
	for i := first; i < fb.nitems; i++ {
		s.items |= 1 << uint(i)
	}
	// its FROM clause must not read the query's rows
	for _, l := range fb.leaves {
		if l.item < first {
			continue
		}
		if fb.deps[l.item]&^s.items != 0 {
			return nil, false, nil
		}
		if q, ok := l.Src.(*SubquerySource); ok && q.Plan.Correlated && !l.Lateral {
			return nil, false, nil
		}
	}
	for _, on := range fb.ons[m.ons:] {
		if m, opaque := expr.ExprRefs(on.e, fb.itemOf); opaque || m&^s.items != 0 {
			return nil, false, nil
		}
	}
	la := fb.a.Level(sc)
	if sel.WhereClause != nil {
		wa := la.NoAggs("WHERE")
		wa.SublinkHook = fb.pullUpHook(sel.WhereClause, s, nil)
		w, err := wa.Expr(sel.WhereClause)
		if err != nil {
			return nil, false, err
		}
		if w, err = wa.AsBool(w, "WHERE", -1); err != nil {
			return nil, false, err
		}
		s.conds = dropPulled(conjuncts(w))
	}
	if se.Kind == expr.SublinkAny {
		tests := []expr.Expr{se.Test}
		if se.Row {
			tests = se.Test.(*expr.RowExpr).Args
		}
		if len(sel.TargetList) != len(tests) {
			return nil, false, nil
		}
		ta := la.NoAggs("SELECT")
		for i, n := range sel.TargetList {
			rt := n.GetResTarget()
			if rt == nil || analyze.StarRef(rt.Val) != nil {
				return nil, false, nil
			}
			t, err := ta.Expr(rt.Val)
			if err != nil {
				return nil, false, err
			}
			if t, err = ta.ResolveOutput(t); err != nil {
				return nil, false, err
			}
			c, err := ta.Binop("=", tests[i], t, -1)
			if err != nil {
				return nil, false, nil
			}
			b, ok := c.(*expr.BinopExpr)
			if !ok || b.Op != "=" || b.L.Type().OID != b.R.Type().OID {
				return nil, false, nil
			}
			s.conds = append(s.conds, c)
		}
	}
	for _, c := range s.conds {
		if se.Kind == expr.SublinkExists && expr.IsVolatile(c) {
			return nil, false, nil
		}
		m, opaque := expr.ExprRefs(c, fb.itemOf)
		s.lhs |= m &^ s.items
		s.lhsAll = s.lhsAll || opaque
	}
	if s.lhs == 0 && !s.lhsAll {
		return nil, false, nil // reads no row of this level: a subquery it stays
	}
	return s, true, nil
}

// attach records pulled-up s: nested in the pulled-up subquery parent
// (or one around it) whose items it reads, or beside it when it reads
// only what that one's join reads from outside, as pull_up_sublinks
// stacks the joins it makes of a pulled-up subquery's own conditions
// onto either side of that subquery's join. Not beside an anti join:
// under its NOT, a condition reading the rows outside it stays a
// subquery (pull_up_sublinks_qual_recurse passes only the anti join's
// own side on).
func (fb *fromBuilder) attach(s *semiJoin, parent *semiJoin, above *JoinNode) bool {
	s.above = above
	for p := parent; p != nil; p = p.outer {
		switch {
		case s.lhsAll || s.lhs&p.items != 0 && s.lhs&^p.items != 0:
			return false
		case p.anti && s.lhs&^p.items != 0:
			return false
		case s.lhs&^p.items == 0:
			s.outer = p
			p.nested = append(p.nested, s)
			fb.semis = append(fb.semis, s)
			return true
		}
		s.above = p.above
	}
	s.outer = nil
	fb.semis = append(fb.semis, s)
	return true
}

// markInnerPath records the inner joins of FROM item n whose ON clause's
// subqueries may be pulled up as WHERE's are: those that no outer join
// makes nullable (the joins of the FROM list and of inner joins, and of
// the preserved side of outer joins).
func (fb *fromBuilder) markInnerPath(n *pg.Node) {
	je := n.GetJoinExpr()
	if je == nil {
		return
	}
	if fb.innerPath == nil {
		fb.innerPath = map[*pg.JoinExpr]bool{}
	}
	switch je.Jointype {
	case pg.JoinType_JOIN_INNER:
		fb.innerPath[je] = true
		fb.markInnerPath(je.Larg)
		fb.markInnerPath(je.Rarg)
	case pg.JoinType_JOIN_LEFT:
		fb.markInnerPath(je.Larg)
	case pg.JoinType_JOIN_RIGHT:
		fb.markInnerPath(je.Rarg)
	}
}
