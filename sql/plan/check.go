package plan

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// checkDefsOf is pg_get_constraintdef's text of CHECK con, whose
// expression is now raw, on t.
func (s *Planner) CheckDefsOf(t *catalog.TableDef, raw *pg.Node, con *catalog.ConstraintDef) (def, pretty string) {
	def, pretty = s.CheckDefs(t, raw)
	if con.NoInherit {
		def += " NO INHERIT"
		pretty += " NO INHERIT"
	}
	if con.NotValid {
		def += " NOT VALID"
		pretty += " NOT VALID"
	}
	return def, pretty
}

// CHECK constraints: compiled per table, evaluated on every new row
// version after NOT NULL (ExecConstraints) — by INSERT, COPY, UPDATE and
// rows routed into or moved between partitions — in the order of their
// names, as PostgreSQL sorts a relation's checks. A row passes when the
// expression is true or NULL. A partition has its own checks and those
// of its partitioned ancestors.

// checkCons is a CHECK constraint compiled for one table.
type CheckCons struct {
	Name string
	E    expr.Expr
}

// compileCheck compiles a CHECK expression over t's columns, with
// PostgreSQL's restrictions on what a check may contain.
func (s *Planner) CompileCheck(t *catalog.TableDef, n *pg.Node) (expr.Expr, error) {
	if loc, ok := analyze.FindSubLink(n); ok {
		return nil, expr.PosErr(pgerr.NotSupported("cannot use subquery in check constraint"), loc)
	}
	a := NewAnalyzer(&s.Backend, nil)
	SingleTable(a, NewTableSource(t, t.Name), t.Name)
	a.AggCtx = "check constraints"
	e, err := a.Expr(n)
	if err != nil {
		return nil, err
	}
	if e, err = a.AsBool(e, "CHECK", analyze.ExprLocation(n)); err != nil {
		return nil, err
	}
	var sys *expr.ColExpr
	expr.WalkExpr(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.ColExpr); ok && c.I >= len(t.Cols) && sys == nil {
			sys = c
		}
		return sys == nil
	})
	if sys != nil {
		name := "ctid"
		if sys.I-len(t.Cols) == SysColTableoid {
			name = "tableoid"
		}
		return nil, expr.PosErr(pgerr.New(pgerr.InvalidColumnReference, "system column \"%s\" reference in check constraint is invalid", name), -1)
	}
	return e, nil
}

// compileCheckText compiles a stored CHECK expression (ConstraintDef.Expr).
func (s *Planner) CompileCheckText(t *catalog.TableDef, text string) (expr.Expr, error) {
	tree, err := pg.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	return s.CompileCheck(t, tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val)
}

// compileChecks compiles the checks that apply to t: its own and those it
// inherits from its partitioned ancestors, sorted by name.
func (s *Planner) CompileChecks(t *catalog.TableDef) ([]CheckCons, error) {
	cat := s.Cat()
	var out []CheckCons
	for _, con := range append(append([]*catalog.ConstraintDef(nil), cat.TableConstraintDefs(t.OID)...), cat.InheritedConstraints(t)...) {
		if con.Kind != catalog.ConCheck {
			continue
		}
		e, err := s.CompileCheckText(t, con.Expr)
		if err != nil {
			return nil, err
		}
		out = append(out, CheckCons{Name: con.Name, E: e})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// checkDefs is pg_get_constraintdef's text of a CHECK on t with
// expression n, plain and pretty.
func (s *Planner) CheckDefs(t *catalog.TableDef, n *pg.Node) (def, pretty string) {
	a := NewAnalyzer(&s.Backend, nil)
	SingleTable(a, NewTableSource(t, t.Name), t.Name)
	return a.CheckDefs(n)
}
