package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// literalError gives the error of assigning lit to column c the position
// of the literal (val) when the literal's text is no value of the column's
// type, as PostgreSQL's parser reports input function errors; a value too
// long for the column's type modifier fails later, at no position.
func (a *Analyzer) LiteralError(err error, lit expr.Expr, c *catalog.ColumnDef, val *pg.Node) error {
	k, ok := lit.(*expr.ConstExpr)
	pe, isPg := err.(*pgerr.Error)
	if !ok || !isPg || k.D.Null || !IsUnknown(k) {
		return err
	}
	base := c.Type()
	base.Mod = -1
	if _, perr := types.ParseText(base, k.D.S, a.Fold.FormatCtx()); perr == nil {
		return err
	}
	return expr.PosErr(pe, ExprLocation(val))
}
