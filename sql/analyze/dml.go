package analyze

import (
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// assignTo converts e for storing into column c (an assignment cast).
func (a *Analyzer) AssignTo(e expr.Expr, c *catalog.ColumnDef) (expr.Expr, error) {
	t := c.Type()
	if IsUnknown(e) {
		return a.CoerceUnknown(e, t)
	}
	if e.Type().OID == t.OID && (t.Mod < 0 || e.Type().Mod == t.Mod) {
		return e, nil
	}
	if !Assignable(e.Type(), t) {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" is of type %s but expression is of type %s", c.Name, t.Name, e.Type().Name).
			WithHint("You will need to rewrite or cast the expression.")
	}
	return a.CastTo(e, t, false)
}
