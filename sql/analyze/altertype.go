package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// parseExprText parses a stored expression (a CHECK's Expr, a DEFAULT).
func ParseExprText(text string) (*pg.Node, error) {
	tree, err := pg.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	return tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val, nil
}
