package sql

import "fmt"

// runNode calls fn once per row combination of plan node n, with n's
// columns filled in buf. fn must not keep buf.
func (x *Executor) runNode(ec *evalCtx, n planNode, buf []Datum, fn func() error) error {
	switch n := n.(type) {
	case *leafNode:
		return x.runLeaf(ec, n, buf, fn)
	case *joinNode:
		return x.runJoin(ec, n, buf, fn)
	}
	panic(fmt.Sprintf("sql: runNode of %T", n))
}

// scan calls fn with each row of src. fn must not keep the row.
func (x *Executor) scan(ec *evalCtx, src rowSource, fn func(row []Datum) error) error {
	switch src := src.(type) {
	case *tableSource:
		return x.scanTable(ec, src, fn)
	case *partitionedSource:
		return x.scanPartitioned(ec, src, fn)
	case *subquerySource:
		return x.scanSubquery(ec, src, fn)
	case *cteSource:
		return x.scanCTE(ec, src, fn)
	case *funcSource:
		return x.scanFunction(ec, src, fn)
	case *setopSource:
		return x.scanSetop(ec, src, fn)
	case *valuesSource:
		return x.scanValues(ec, src, fn)
	case *viewSource:
		return x.scanView(ec, src, fn)
	case *seqSource:
		return x.scanSequence(ec, src, fn)
	case *excludedSource:
		return x.scanExcluded(ec, src, fn)
	}
	panic(fmt.Sprintf("sql: scan of %T", src))
}

// scanLevel is scan for a source that reads the level row (a lateral
// function, or a table scanned by an index key from outer columns).
func (x *Executor) scanLevel(ec *evalCtx, src rowSource, level []Datum, fn func(row []Datum) error) error {
	switch src := src.(type) {
	case *tableSource:
		return x.scanTableLevel(ec, src, level, fn)
	case *funcSource:
		return x.scanFunctionLevel(ec, src, level, fn)
	}
	panic(fmt.Sprintf("sql: scanLevel of %T", src))
}

// runSubplan runs the plan of a subquery for an expression (a sublink).
func (x *Executor) runSubplan(ec *evalCtx, p subplan, emit func(row []Datum) error) error {
	return x.runSelect(ec, p.(*selectPlan), emit)
}
