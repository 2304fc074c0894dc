package exec

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// scanRows calls fn for every visible row of t (of its leaf partitions
// if it is partitioned).
func (s *Executor) ScanRows(ec *expr.EvalCtx, t *catalog.TableDef, fn func(row []types.Datum) error) error {
	for _, leaf := range s.Cat().LeafPartitions(t) {
		if err := s.ScanTable(ec, plan.NewTableSource(leaf, leaf.Name), fn); err != nil {
			return err
		}
	}
	return nil
}
