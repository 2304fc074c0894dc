package analyze

import pg "github.com/pganalyze/pg_query_go/v6"

// walkRawNodes calls fn for n and the sub-expressions of the expression
// node kinds a CHECK constraint can hold.
func WalkRawNodes(n *pg.Node, fn func(*pg.Node)) {
	if n == nil {
		return
	}
	fn(n)
	each := func(l []*pg.Node) {
		for _, x := range l {
			WalkRawNodes(x, fn)
		}
	}
	switch {
	case n.GetAExpr() != nil:
		x := n.GetAExpr()
		WalkRawNodes(x.Lexpr, fn)
		WalkRawNodes(x.Rexpr, fn)
	case n.GetBoolExpr() != nil:
		each(n.GetBoolExpr().Args)
	case n.GetFuncCall() != nil:
		each(n.GetFuncCall().Args)
	case n.GetTypeCast() != nil:
		WalkRawNodes(n.GetTypeCast().Arg, fn)
	case n.GetNullTest() != nil:
		WalkRawNodes(n.GetNullTest().Arg, fn)
	case n.GetBooleanTest() != nil:
		WalkRawNodes(n.GetBooleanTest().Arg, fn)
	case n.GetCoalesceExpr() != nil:
		each(n.GetCoalesceExpr().Args)
	case n.GetMinMaxExpr() != nil:
		each(n.GetMinMaxExpr().Args)
	case n.GetCaseExpr() != nil:
		c := n.GetCaseExpr()
		WalkRawNodes(c.Arg, fn)
		each(c.Args)
		WalkRawNodes(c.Defresult, fn)
	case n.GetCaseWhen() != nil:
		WalkRawNodes(n.GetCaseWhen().Expr, fn)
		WalkRawNodes(n.GetCaseWhen().Result, fn)
	case n.GetAArrayExpr() != nil:
		each(n.GetAArrayExpr().Elements)
	case n.GetList() != nil:
		each(n.GetList().Items)
	case n.GetCollateClause() != nil:
		WalkRawNodes(n.GetCollateClause().Arg, fn)
	case n.GetAIndirection() != nil:
		WalkRawNodes(n.GetAIndirection().Arg, fn)
	case n.GetRowExpr() != nil:
		each(n.GetRowExpr().Args)
	case n.GetSubLink() != nil:
		WalkRawNodes(n.GetSubLink().Testexpr, fn)
	}
}
