package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// singleTable sets up a's scope for a statement over one table's rows
// (UPDATE, DELETE): row positions are the source's column positions. It
// returns the one-item FROM clause it made.
func SingleTable(a *analyze.Analyzer, src RowSource, alias string) *fromBuilder {
	sc := analyze.NewScope(nil)
	fb := &fromBuilder{a: a, sc: sc}
	_, _ = fb.addLeaf(src, alias, nil, len(src.columns())-NumSysCols, nil, -1)
	a.Sc = sc
	return fb
}

// The per-session state of each layer embeds the layer below, so a
// layer's code reaches what lies beneath it and nothing above.

// planner is the analyser and planner of one session.
type Planner struct {
	expr.Backend
}

// newAnalyzer returns an analyzer whose expressions may hold subqueries,
// which it compiles as subqueries of the level being analysed.
func NewAnalyzer(s *expr.Backend, params *[]types.Type) *analyze.Analyzer {
	a := analyze.NewExprAnalyzer(s, params)
	a.Subquery = subqueryOf
	return a
}

// subqueryOf is the analyzer's subquery hook.
func subqueryOf(a *analyze.Analyzer, sel *pg.SelectStmt) (expr.Subplan, []types.Column, bool, error) {
	p, err := compileSubquery(a, sel)
	if err != nil {
		return nil, nil, false, err
	}
	a.S.SublinkRels = append(a.S.SublinkRels, p.Rels...)
	return p, p.Cols, p.Correlated, nil
}

// compileSelect analyses a SelectStmt at the top level of a statement.
func (s *Planner) CompileSelect(sel *pg.SelectStmt, params *[]types.Type) (*SelectPlan, error) {
	return compileQuery(NewAnalyzer(&s.Backend, params), sel)
}
