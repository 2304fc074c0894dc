package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/storage"
)

// RETURNING lists of INSERT, UPDATE and DELETE: expressions over the row
// written (the new version for INSERT and UPDATE, the deleted one for
// DELETE), its ctid and tableoid included.

type returning struct {
	targets []expr
	cols    []Column
	buf     []Datum
	out     []Datum
	ncols   int
}

// compileReturning compiles list against table t under alias. A nil list
// gives a nil *returning.
func (s *planner) compileReturning(list []*pg.Node, t *TableDef, alias string, params *[]Type) (*returning, error) {
	return s.compileReturningHiding(list, t, alias, params, nil)
}

// compileReturningHiding is compileReturning for a statement with names
// RETURNING may not see (hidden, e.g. ON CONFLICT's excluded), which
// errors then mention.
func (s *planner) compileReturningHiding(list []*pg.Node, t *TableDef, alias string, params *[]Type, hidden *scope) (*returning, error) {
	if len(list) == 0 {
		return nil, nil
	}
	a := newAnalyzer(&s.Backend, params)
	fb := singleTable(a, newTableSource(t, alias), alias)
	a.sc.hidden = hidden
	a.aggCtx = "RETURNING"
	p := &selectPlan{}
	if err := targetList(a, fb, list, p); err != nil {
		return nil, err
	}
	r := &returning{targets: p.targets, cols: p.cols, ncols: len(t.Cols)}
	r.buf = make([]Datum, len(t.Cols)+numSysCols)
	r.out = make([]Datum, len(p.targets))
	return r, nil
}

// emit evaluates the list for a written row and sends the result.
func (x *Executor) emitReturning(ec *evalCtx, r *returning, row []Datum, tid storage.TID, table *TableDef, emit func([]Datum) error) error {
	if r == nil {
		return nil
	}
	copy(r.buf, row[:r.ncols])
	r.buf[r.ncols+sysColCtid] = tidDatum(tid)
	r.buf[r.ncols+sysColTableoid] = intDatum(int64(table.OID))
	for i, t := range r.targets {
		v, err := t.eval(ec, r.buf)
		if err != nil {
			return err
		}
		r.out[i] = v
	}
	return emit(r.out)
}
