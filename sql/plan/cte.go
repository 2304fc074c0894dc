package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// withClause compiles a WITH clause; the CTEs become visible to the
// query's FROM clauses (and to later CTEs of the same clause).
func withClause(a *analyze.Analyzer, w *pg.WithClause) error {
	cs := &analyze.CteScope{Parent: a.Ctes}
	a.Ctes = cs
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		sel := c.Ctequery.GetSelectStmt()
		if sel == nil {
			return expr.PosErr(pgerr.NotSupported("data-modifying statements in WITH are not supported"), c.Location)
		}
		for _, d := range cs.Defs {
			if d.Name == c.Ctename {
				return expr.PosErr(pgerr.New(pgerr.DuplicateAlias, "WITH query name \"%s\" specified more than once", c.Ctename), c.Location)
			}
		}
		def := &analyze.CteDef{Name: c.Ctename}
		if w.Recursive && sel.Op == pg.SetOperation_SETOP_UNION && refersTo(sel.Rarg, c.Ctename) {
			if err := recursiveCTE(a, def, c, sel, cs); err != nil {
				return err
			}
		} else {
			sub := a.ChildWith(a.ParentSc)
			sub.Ctes = cs
			p, err := compileQuery(sub, sel)
			if err != nil {
				return err
			}
			def.Plan = p
			def.Cols = p.Cols
		}
		if err := applyColumnAliases(def, c); err != nil {
			return err
		}
		cs.Defs = append(cs.Defs, def)
	}
	return nil
}

func applyColumnAliases(def *analyze.CteDef, c *pg.CommonTableExpr) error {
	if len(c.Aliascolnames) > len(def.Cols) {
		return expr.PosErr(pgerr.New(pgerr.InvalidColumnReference, "WITH query \"%s\" has %d columns available but %d columns specified",
			def.Name, len(def.Cols), len(c.Aliascolnames)), c.Location)
	}
	cols := make([]types.Column, len(def.Cols))
	for i, col := range def.Cols {
		col.TableOID, col.Attnum = 0, 0
		if i < len(c.Aliascolnames) {
			col.Name = analyze.NodeName(c.Aliascolnames[i])
		}
		cols[i] = col
	}
	def.Cols = cols
	return nil
}

// refersTo reports whether a query mentions relation name in a FROM
// clause (the test for a recursive term).
func refersTo(sel *pg.SelectStmt, name string) bool {
	found := false
	var walk func(n *pg.Node)
	walkSel := func(s *pg.SelectStmt) {
		if s == nil {
			return
		}
		for _, f := range s.FromClause {
			walk(f)
		}
		if s.Larg != nil {
			walk(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: s.Larg}})
		}
		if s.Rarg != nil {
			walk(&pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: s.Rarg}})
		}
	}
	walk = func(n *pg.Node) {
		switch {
		case n == nil || found:
		case n.GetRangeVar() != nil:
			if rv := n.GetRangeVar(); rv.Schemaname == "" && rv.Relname == name {
				found = true
			}
		case n.GetJoinExpr() != nil:
			walk(n.GetJoinExpr().Larg)
			walk(n.GetJoinExpr().Rarg)
		case n.GetRangeSubselect() != nil:
			walk(n.GetRangeSubselect().Subquery)
		case n.GetSelectStmt() != nil:
			walkSel(n.GetSelectStmt())
		}
	}
	walkSel(sel)
	return found
}

func recursiveCTE(a *analyze.Analyzer, def *analyze.CteDef, c *pg.CommonTableExpr, sel *pg.SelectStmt, cs *analyze.CteScope) error {
	if len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil {
		return expr.PosErr(pgerr.NotSupported("ORDER BY/LIMIT in a recursive query is not implemented"), c.Location)
	}
	def.Recursive = true
	def.All = sel.All
	anchorA := a.ChildWith(a.ParentSc)
	anchorA.Ctes = cs
	anchor, err := compileQuery(anchorA, sel.Larg)
	if err != nil {
		return err
	}
	def.Anchor = anchor
	def.Cols = anchor.Cols
	if err := applyColumnAliases(def, c); err != nil {
		return err
	}
	// The recursive term sees the CTE itself, with the anchor's columns.
	self := &analyze.CteScope{Defs: []*analyze.CteDef{def}, Parent: cs}
	stepA := a.ChildWith(a.ParentSc)
	stepA.Ctes = self
	step, err := compileQuery(stepA, sel.Rarg)
	if err != nil {
		return err
	}
	if len(step.Cols) != len(def.Cols) {
		return expr.PosErr(pgerr.New(pgerr.SyntaxError, "each UNION query must have the same number of columns"), c.Location)
	}
	for i, col := range step.Cols {
		want := def.Cols[i].Type
		if col.Type.OID == want.OID {
			def.StepCasts = append(def.StepCasts, nil)
			continue
		}
		if col.Type.OID != types.OIDUnknown && !analyze.Castable(col.Type, want) {
			return expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall",
				def.Name, i+1, want.Name, col.Type.Name).WithHint("Cast the output of the non-recursive term to the correct type."), c.Location)
		}
		def.StepCasts = append(def.StepCasts, &expr.CastExpr{Arg: &expr.ColExpr{I: i, T: col.Type}, T: want})
	}
	def.Step = step
	return nil
}

// cteCorrelated reports whether a WITH query reads an enclosing query's
// row (or is still being compiled: a recursive reference).
func cteCorrelated(d *analyze.CteDef) bool {
	for _, sp := range []expr.Subplan{d.Plan, d.Anchor, d.Step} {
		if p, ok := sp.(*SelectPlan); ok && p.Correlated {
			return true
		}
	}
	return d.Recursive && d.Step == nil
}
