package exec

import (
	"fmt"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// runNode calls fn once per row combination of plan node n, with n's
// columns filled in buf. fn must not keep buf.
func (x *Executor) runNode(ec *expr.EvalCtx, n plan.PlanNode, buf []types.Datum, fn func() error) error {
	switch n := n.(type) {
	case *plan.LeafNode:
		return x.runLeaf(ec, n, buf, fn)
	case *plan.JoinNode:
		return x.runJoin(ec, n, buf, fn)
	}
	panic(fmt.Sprintf("sql: runNode of %T", n))
}

// scan calls fn with each row of src. fn must not keep the row.
func (x *Executor) scan(ec *expr.EvalCtx, src plan.RowSource, fn func(row []types.Datum) error) error {
	switch src := src.(type) {
	case *plan.TableSource:
		return x.ScanTable(ec, src, fn)
	case *plan.PartitionedSource:
		return x.scanPartitioned(ec, src, fn)
	case *plan.SubquerySource:
		return x.scanSubquery(ec, src, fn)
	case *plan.CteSource:
		return x.scanCTE(ec, src, fn)
	case *plan.FuncSource:
		return x.scanFunction(ec, src, fn)
	case *plan.SetopSource:
		return x.scanSetop(ec, src, fn)
	case *plan.ValuesSource:
		return x.scanValues(ec, src, fn)
	case *plan.ViewSource:
		return x.scanView(ec, src, fn)
	case *plan.SeqSource:
		return x.scanSequence(ec, src, fn)
	case *plan.ExcludedSource:
		return x.scanExcluded(ec, src, fn)
	}
	panic(fmt.Sprintf("sql: scan of %T", src))
}

// scanLevel is scan for a source that reads the level row (a lateral
// function, or a table scanned by an index key from outer columns).
func (x *Executor) scanLevel(ec *expr.EvalCtx, src plan.RowSource, level []types.Datum, fn func(row []types.Datum) error) error {
	switch src := src.(type) {
	case *plan.TableSource:
		return x.scanTableLevel(ec, src, level, fn)
	case *plan.FuncSource:
		return x.scanFunctionLevel(ec, src, level, fn)
	}
	panic(fmt.Sprintf("sql: scanLevel of %T", src))
}

// runSubplan runs the plan of a subquery for an expression (a sublink).
func (x *Executor) RunSubplan(ec *expr.EvalCtx, p expr.Subplan, emit func(row []types.Datum) error) error {
	return x.RunSelect(ec, p.(*plan.SelectPlan), emit)
}
