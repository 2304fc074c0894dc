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
	start := 0
	if a.Sc != nil && a.Sc.Rec != nil {
		start = len(*a.Sc.Rec)
	}
	p, err := compileSubquery(a, sel)
	if err != nil {
		return nil, nil, false, err
	}
	a.S.SublinkRels = append(a.S.SublinkRels, p.Rels...)
	if p.Correlated && a.Sc != nil && a.Sc.Rec != nil {
		p.params, p.paramsKnown = outerParams(a.Sc, (*a.Sc.Rec)[start:])
	}
	return p, p.Cols, p.Correlated, nil
}

// outerParams turns the outer references made while a subquery of
// level sc was compiled into expressions of sc's row: a column of sc's
// level itself, or an OuterExpr for one further out. References to the
// subquery's own levels are not its parameters. ok is false when the
// subquery's result depends on more than these.
func outerParams(sc *analyze.Scope, refs []analyze.OuterRef) ([]expr.Expr, bool) {
	var out []expr.Expr
	seen := map[string]bool{}
	for _, r := range refs {
		if r.Owner == nil {
			return nil, false
		}
		d, ok := sc.Distance(r.Owner)
		if !ok {
			continue
		}
		e := r.E
		if d > 0 {
			e = &expr.OuterExpr{Depth: d, E: r.E}
		}
		k := expr.ExprKey(e)
		if k == "" {
			return nil, false
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out, true
}

// compileSelect analyses a SelectStmt at the top level of a statement.
func (s *Planner) CompileSelect(sel *pg.SelectStmt, params *[]types.Type) (*SelectPlan, error) {
	return compileQuery(NewAnalyzer(&s.Backend, params), sel)
}
