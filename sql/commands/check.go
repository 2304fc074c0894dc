package commands

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/exec"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// validateCheck scans t (every leaf partition of it) for a row the new
// check e fails (ALTER TABLE ADD CHECK, VALIDATE CONSTRAINT).
func (s *Utility) validateCheck(ec *expr.EvalCtx, t *catalog.TableDef, name string, n *pg.Node) error {
	// validateCheckConstraint reads with GetLatestSnapshot: rows committed
	// while the locks were awaited are checked too
	defer s.Txn.UseLatestSnapshot()()
	for _, leaf := range s.LeafTables(t) {
		e, err := s.CompileCheck(leaf, n)
		if err != nil {
			return err
		}
		failed := false
		err = s.ScanTableTIDs(ec, plan.NewTableSource(leaf, leaf.Name), func(_ storage.TID, row []types.Datum) error {
			v, err := e.Eval(ec, row)
			if err != nil {
				return err
			}
			if !v.Null && v.I == 0 {
				failed = true
				return expr.ErrStopScan
			}
			return nil
		})
		if err != nil && err != expr.ErrStopScan {
			return err
		}
		if failed {
			return pgerr.New(pgerr.CheckViolation, "check constraint \"%s\" of relation \"%s\" is violated by some row", name, leaf.Name).
				OnConstraint(leaf.Name, name)
		}
	}
	return nil
}

// checkColumns lists the distinct columns a CHECK expression names, in
// order of appearance (for conkey and for the generated name: table_col_check
// when there is exactly one).
func checkColumns(t *catalog.TableDef, n *pg.Node) []int {
	var cols []int
	analyze.WalkRawNodes(n, func(x *pg.Node) {
		cr := x.GetColumnRef()
		if cr == nil || len(cr.Fields) == 0 {
			return
		}
		if i := t.ColIndex(analyze.NodeName(cr.Fields[len(cr.Fields)-1])); i >= 0 && !exec.Contains(cols, i) {
			cols = append(cols, i)
		}
	})
	return cols
}
