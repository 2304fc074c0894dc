package exec

import (
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// checkConstraints enforces t's CHECK constraints on a new row version
// (23514 with the failing row, as ExecConstraints reports it).
func (s *Executor) checkConstraints(ec *expr.EvalCtx, t *catalog.TableDef, row []types.Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for i := range rc.checks {
		c := &rc.checks[i]
		v, err := c.E.Eval(ec, row)
		if err != nil {
			return err
		}
		if !v.Null && v.I == 0 {
			return pgerr.New(pgerr.CheckViolation, "new row for relation \"%s\" violates check constraint \"%s\"", t.Name, c.Name).
				WithDetail("Failing row contains "+plan.FailingRow(t, row)+".").OnConstraint(t.Name, c.Name)
		}
	}
	return nil
}
