package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// checkDefaultExpr is cookDefault's check of what a DEFAULT may contain.
func CheckDefaultExpr(n *pg.Node) error {
	var err error
	WalkRawNodes(n, func(x *pg.Node) {
		switch {
		case err != nil:
		case x.GetColumnRef() != nil:
			err = pgerr.NotSupported("cannot use column reference in DEFAULT expression")
		case x.GetSubLink() != nil:
			err = pgerr.NotSupported("cannot use subquery in DEFAULT expression")
		}
	})
	return err
}

// prettyDefault is pg_get_expr(adbin, adrelid, true) of column c's
// default, as ruleutils prints the analysed expression — the literal
// typed ('x'::text), coerced to the column's type with the assignment
// cast hidden — when checkdeparse.go models it.
func PrettyDefault(s *expr.Backend, c *catalog.ColumnDef) (string, bool) {
	raw, err := ParseExprText(c.Default)
	if err != nil || CheckDefaultExpr(raw) != nil {
		return "", false
	}
	a := NewExprAnalyzer(s, nil) // a default reads no column
	x, err := a.deparseTree(raw)
	if err != nil {
		return "", false
	}
	// coerce_to_target_type: to the type, then the length coercion of its
	// typmod (both hidden, as implicit casts are)
	t := c.Type()
	base := t
	base.Mod = -1
	if x = a.treeCoerce(x, base, true); t.Mod >= 0 {
		x = &treeNode{kind: tnCast, t: t, args: []*treeNode{x}, implicit: true, byFunc: true}
	}
	return printTree(x, true), true
}
