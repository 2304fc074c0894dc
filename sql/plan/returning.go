package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// RETURNING lists of INSERT, UPDATE and DELETE: expressions over the row
// written (the new version for INSERT and UPDATE, the deleted one for
// DELETE), its ctid and tableoid included.

type Returning struct {
	Targets []expr.Expr
	cols    []types.Column
	Buf     []types.Datum
	Out     []types.Datum
	Ncols   int
}

// compileReturning compiles list against table t under alias. A nil list
// gives a nil *returning.
func (s *Planner) compileReturning(list []*pg.Node, t *catalog.TableDef, alias string, params *[]types.Type) (*Returning, error) {
	return s.compileReturningHiding(list, t, alias, params, nil)
}

// compileReturningHiding is compileReturning for a statement with names
// RETURNING may not see (hidden, e.g. ON CONFLICT's excluded), which
// errors then mention.
func (s *Planner) compileReturningHiding(list []*pg.Node, t *catalog.TableDef, alias string, params *[]types.Type, hidden *analyze.Scope) (*Returning, error) {
	if len(list) == 0 {
		return nil, nil
	}
	a := NewAnalyzer(&s.Backend, params)
	fb := SingleTable(a, NewTableSource(t, alias), alias)
	a.Sc.Hidden = hidden
	a.AggCtx = "RETURNING"
	p := &SelectPlan{}
	if err := targetList(a, fb, list, p); err != nil {
		return nil, err
	}
	r := &Returning{Targets: p.Targets, cols: p.Cols, Ncols: len(t.Cols)}
	r.Buf = make([]types.Datum, len(t.Cols)+NumSysCols)
	r.Out = make([]types.Datum, len(p.Targets))
	return r, nil
}
