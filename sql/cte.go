package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// WITH queries (common table expressions), plain and RECURSIVE. A CTE is
// computed once per execution of the statement and kept (unless it reads
// an enclosing query's row); a recursive one iterates its recursive term
// over the rows the previous iteration produced until none are new, as
// PostgreSQL's WorkTableScan does.

type cteDef struct {
	name string
	cols []Column
	plan subplan // non-recursive CTE (a *selectPlan)
	// recursive CTE: anchor UNION [ALL] step, where step reads work
	anchor, step subplan
	all          bool
	stepCasts    []expr
	work         [][]Datum // the rows of the previous iteration, while step runs
	recursive    bool
}

// cteScope is the CTEs visible at one query level, innermost first.
type cteScope struct {
	defs   []*cteDef
	parent *cteScope
}

func (c *cteScope) lookup(name string) *cteDef {
	for s := c; s != nil; s = s.parent {
		for _, d := range s.defs {
			if d.name == name {
				return d
			}
		}
	}
	return nil
}

// withClause compiles a WITH clause; the CTEs become visible to the
// query's FROM clauses (and to later CTEs of the same clause).
func withClause(a *analyzer, w *pg.WithClause) error {
	cs := &cteScope{parent: a.ctes}
	a.ctes = cs
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		sel := c.Ctequery.GetSelectStmt()
		if sel == nil {
			return posErr(pgerr.NotSupported("data-modifying statements in WITH are not supported"), c.Location)
		}
		for _, d := range cs.defs {
			if d.name == c.Ctename {
				return posErr(pgerr.New(pgerr.DuplicateAlias, "WITH query name \"%s\" specified more than once", c.Ctename), c.Location)
			}
		}
		def := &cteDef{name: c.Ctename}
		if w.Recursive && sel.Op == pg.SetOperation_SETOP_UNION && refersTo(sel.Rarg, c.Ctename) {
			if err := recursiveCTE(a, def, c, sel, cs); err != nil {
				return err
			}
		} else {
			sub := a.childWith(a.parentSc)
			sub.ctes = cs
			p, err := compileQuery(sub, sel)
			if err != nil {
				return err
			}
			def.plan = p
			def.cols = p.cols
		}
		if err := applyColumnAliases(def, c); err != nil {
			return err
		}
		cs.defs = append(cs.defs, def)
	}
	return nil
}

func applyColumnAliases(def *cteDef, c *pg.CommonTableExpr) error {
	if len(c.Aliascolnames) > len(def.cols) {
		return posErr(pgerr.New(pgerr.InvalidColumnReference, "WITH query \"%s\" has %d columns available but %d columns specified",
			def.name, len(def.cols), len(c.Aliascolnames)), c.Location)
	}
	cols := make([]Column, len(def.cols))
	for i, col := range def.cols {
		col.TableOID, col.Attnum = 0, 0
		if i < len(c.Aliascolnames) {
			col.Name = nodeName(c.Aliascolnames[i])
		}
		cols[i] = col
	}
	def.cols = cols
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

func recursiveCTE(a *analyzer, def *cteDef, c *pg.CommonTableExpr, sel *pg.SelectStmt, cs *cteScope) error {
	if len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil {
		return posErr(pgerr.NotSupported("ORDER BY/LIMIT in a recursive query is not implemented"), c.Location)
	}
	def.recursive = true
	def.all = sel.All
	anchorA := a.childWith(a.parentSc)
	anchorA.ctes = cs
	anchor, err := compileQuery(anchorA, sel.Larg)
	if err != nil {
		return err
	}
	def.anchor = anchor
	def.cols = anchor.cols
	if err := applyColumnAliases(def, c); err != nil {
		return err
	}
	// The recursive term sees the CTE itself, with the anchor's columns.
	self := &cteScope{defs: []*cteDef{def}, parent: cs}
	stepA := a.childWith(a.parentSc)
	stepA.ctes = self
	step, err := compileQuery(stepA, sel.Rarg)
	if err != nil {
		return err
	}
	if len(step.cols) != len(def.cols) {
		return posErr(pgerr.New(pgerr.SyntaxError, "each UNION query must have the same number of columns"), c.Location)
	}
	for i, col := range step.cols {
		want := def.cols[i].Type
		if col.Type.OID == want.OID {
			def.stepCasts = append(def.stepCasts, nil)
			continue
		}
		if col.Type.OID != OIDUnknown && !castable(col.Type, want) {
			return posErr(pgerr.New(pgerr.DatatypeMismatch, "recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall",
				def.name, i+1, want.Name, col.Type.Name).WithHint("Cast the output of the non-recursive term to the correct type."), c.Location)
		}
		def.stepCasts = append(def.stepCasts, &castExpr{arg: &colExpr{i: i, t: col.Type}, t: want})
	}
	def.step = step
	return nil
}

// rows computes the CTE's rows (or returns the kept ones).
func (x *Executor) cteRows(ec *evalCtx, d *cteDef) ([][]Datum, error) {
	sp, _ := d.plan.(*selectPlan)
	anchor, _ := d.anchor.(*selectPlan)
	step, _ := d.step.(*selectPlan)
	correlated := (sp != nil && sp.correlated) || (anchor != nil && (anchor.correlated || step.correlated))
	if !correlated {
		if r, ok := ec.cteCache[d]; ok {
			return r, nil
		}
	}
	var out [][]Datum
	collect := func(dst *[][]Datum) func([]Datum) error {
		return func(row []Datum) error {
			*dst = append(*dst, append([]Datum(nil), row...))
			return nil
		}
	}
	if !d.recursive {
		if err := x.runSelect(ec, sp, collect(&out)); err != nil {
			return nil, err
		}
	} else {
		var work [][]Datum
		if err := x.runSelect(ec, anchor, collect(&work)); err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		dedupe := func(rows [][]Datum) [][]Datum {
			if d.all {
				return rows
			}
			kept := rows[:0]
			for _, r := range rows {
				k := rowKey(r, d.cols)
				if !seen[k] {
					seen[k] = true
					kept = append(kept, r)
				}
			}
			return kept
		}
		work = dedupe(work)
		saved := d.work
		defer func() { d.work = saved }()
		for n := 0; len(work) > 0; n++ {
			out = append(out, work...)
			if err := checkCancel(ec); err != nil {
				return nil, err
			}
			d.work = work
			var next [][]Datum
			err := x.runSelect(ec, step, func(row []Datum) error {
				r := append([]Datum(nil), row...)
				for i, c := range d.stepCasts {
					if c == nil {
						continue
					}
					v, err := c.eval(ec, row)
					if err != nil {
						return err
					}
					r[i] = v
				}
				next = append(next, r)
				return nil
			})
			if err != nil {
				return nil, err
			}
			work = dedupe(next)
		}
	}
	if !correlated {
		if ec.cteCache == nil {
			ec.cteCache = map[any][][]Datum{}
		}
		ec.cteCache[d] = out
	}
	return out, nil
}

// cteSource scans a CTE by name in FROM; inside the CTE's own recursive
// term it scans the previous iteration's rows.
type cteSource struct {
	def   *cteDef
	alias string
	self  bool // the recursive reference
}

func (c *cteSource) name() string      { return c.alias }
func (c *cteSource) columns() []Column { return c.def.cols }
func (x *Executor) scanCTE(ec *evalCtx, c *cteSource, fn func([]Datum) error) error {
	rows := c.def.work
	if !c.self {
		var err error
		if rows, err = x.cteRows(ec, c.def); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
