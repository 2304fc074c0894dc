package sql

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/storage"
)

// CHECK constraints: compiled per table, evaluated on every new row
// version after NOT NULL (ExecConstraints) — by INSERT, COPY, UPDATE and
// rows routed into or moved between partitions — in the order of their
// names, as PostgreSQL sorts a relation's checks. A row passes when the
// expression is true or NULL. A partition has its own checks and those
// of its partitioned ancestors.

// checkCons is a CHECK constraint compiled for one table.
type checkCons struct {
	name string
	e    expr
}

// compileCheck compiles a CHECK expression over t's columns, with
// PostgreSQL's restrictions on what a check may contain.
func (s *planner) compileCheck(t *TableDef, n *pg.Node) (expr, error) {
	if loc, ok := findSubLink(n); ok {
		return nil, posErr(pgerr.NotSupported("cannot use subquery in check constraint"), loc)
	}
	a := newAnalyzer(&s.Backend, nil)
	singleTable(a, newTableSource(t, t.Name), t.Name)
	a.aggCtx = "check constraints"
	e, err := a.expr(n)
	if err != nil {
		return nil, err
	}
	if e, err = a.asBool(e, "CHECK", exprLocation(n)); err != nil {
		return nil, err
	}
	var sys *colExpr
	walkExpr(e, func(x expr) bool {
		if c, ok := x.(*colExpr); ok && c.i >= len(t.Cols) && sys == nil {
			sys = c
		}
		return sys == nil
	})
	if sys != nil {
		name := "ctid"
		if sys.i-len(t.Cols) == sysColTableoid {
			name = "tableoid"
		}
		return nil, posErr(pgerr.New(pgerr.InvalidColumnReference, "system column \"%s\" reference in check constraint is invalid", name), -1)
	}
	return e, nil
}

// compileCheckText compiles a stored CHECK expression (ConstraintDef.Expr).
func (s *planner) compileCheckText(t *TableDef, text string) (expr, error) {
	tree, err := pg.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	return s.compileCheck(t, tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val)
}

// checkConstraints enforces t's CHECK constraints on a new row version
// (23514 with the failing row, as ExecConstraints reports it).
func (s *Executor) checkConstraints(ec *evalCtx, t *TableDef, row []Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for i := range rc.checks {
		c := &rc.checks[i]
		v, err := c.e.eval(ec, row)
		if err != nil {
			return err
		}
		if !v.Null && v.I == 0 {
			return pgerr.New(pgerr.CheckViolation, "new row for relation \"%s\" violates check constraint \"%s\"", t.Name, c.name).
				WithDetail("Failing row contains "+failingRow(t, row)+".").OnConstraint(t.Name, c.name)
		}
	}
	return nil
}

// compileChecks compiles the checks that apply to t: its own and those it
// inherits from its partitioned ancestors, sorted by name.
func (s *planner) compileChecks(t *TableDef) ([]checkCons, error) {
	cat := s.cat()
	var out []checkCons
	for _, con := range append(append([]*ConstraintDef(nil), cat.tableConstraintDefs(t.OID)...), cat.inheritedConstraints(t)...) {
		if con.Kind != conCheck {
			continue
		}
		e, err := s.compileCheckText(t, con.Expr)
		if err != nil {
			return nil, err
		}
		out = append(out, checkCons{name: con.Name, e: e})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// validateCheck scans t (every leaf partition of it) for a row the new
// check e fails (ALTER TABLE ADD CHECK, VALIDATE CONSTRAINT).
func (s *utility) validateCheck(ec *evalCtx, t *TableDef, name string, n *pg.Node) error {
	// validateCheckConstraint reads with GetLatestSnapshot: rows committed
	// while the locks were awaited are checked too
	defer s.txn.UseLatestSnapshot()()
	for _, leaf := range s.leafTables(t) {
		e, err := s.compileCheck(leaf, n)
		if err != nil {
			return err
		}
		failed := false
		err = s.scanTableTIDs(ec, newTableSource(leaf, leaf.Name), func(_ storage.TID, row []Datum) error {
			v, err := e.eval(ec, row)
			if err != nil {
				return err
			}
			if !v.Null && v.I == 0 {
				failed = true
				return errStopScan
			}
			return nil
		})
		if err != nil && err != errStopScan {
			return err
		}
		if failed {
			return pgerr.New(pgerr.CheckViolation, "check constraint \"%s\" of relation \"%s\" is violated by some row", name, leaf.Name).
				OnConstraint(leaf.Name, name)
		}
	}
	return nil
}

// leafTables is t itself, or the leaf partitions under a partitioned t.
func (s *Backend) leafTables(t *TableDef) []*TableDef {
	if !t.Partitioned() {
		return []*TableDef{t}
	}
	var out []*TableDef
	for _, k := range s.cat().partitionChildren(t) {
		out = append(out, s.leafTables(k)...)
	}
	return out
}

// checkColumns lists the distinct columns a CHECK expression names, in
// order of appearance (for conkey and for the generated name: table_col_check
// when there is exactly one).
func checkColumns(t *TableDef, n *pg.Node) []int {
	var cols []int
	walkRawNodes(n, func(x *pg.Node) {
		cr := x.GetColumnRef()
		if cr == nil || len(cr.Fields) == 0 {
			return
		}
		if i := t.colIndex(nodeName(cr.Fields[len(cr.Fields)-1])); i >= 0 && !contains(cols, i) {
			cols = append(cols, i)
		}
	})
	return cols
}

// findSubLink reports where n contains a subquery.
func findSubLink(n *pg.Node) (int32, bool) {
	loc, found := int32(-1), false
	walkRawNodes(n, func(x *pg.Node) {
		if sl := x.GetSubLink(); sl != nil && !found {
			loc, found = sl.Location, true
		}
	})
	return loc, found
}

// checkDefs is pg_get_constraintdef's text of a CHECK on t with
// expression n, plain and pretty.
func (s *planner) checkDefs(t *TableDef, n *pg.Node) (def, pretty string) {
	a := newAnalyzer(&s.Backend, nil)
	singleTable(a, newTableSource(t, t.Name), t.Name)
	return a.checkDefs(n)
}
