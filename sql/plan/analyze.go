package plan

import (
	"lockd/sql/analyze"
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
