package sql

import pg "github.com/pganalyze/pg_query_go/v6"

// walkRawNodes calls fn for n and the sub-expressions of the expression
// node kinds a CHECK constraint can hold.
func walkRawNodes(n *pg.Node, fn func(*pg.Node)) {
	if n == nil {
		return
	}
	fn(n)
	each := func(l []*pg.Node) {
		for _, x := range l {
			walkRawNodes(x, fn)
		}
	}
	switch {
	case n.GetAExpr() != nil:
		x := n.GetAExpr()
		walkRawNodes(x.Lexpr, fn)
		walkRawNodes(x.Rexpr, fn)
	case n.GetBoolExpr() != nil:
		each(n.GetBoolExpr().Args)
	case n.GetFuncCall() != nil:
		each(n.GetFuncCall().Args)
	case n.GetTypeCast() != nil:
		walkRawNodes(n.GetTypeCast().Arg, fn)
	case n.GetNullTest() != nil:
		walkRawNodes(n.GetNullTest().Arg, fn)
	case n.GetBooleanTest() != nil:
		walkRawNodes(n.GetBooleanTest().Arg, fn)
	case n.GetCoalesceExpr() != nil:
		each(n.GetCoalesceExpr().Args)
	case n.GetMinMaxExpr() != nil:
		each(n.GetMinMaxExpr().Args)
	case n.GetCaseExpr() != nil:
		c := n.GetCaseExpr()
		walkRawNodes(c.Arg, fn)
		each(c.Args)
		walkRawNodes(c.Defresult, fn)
	case n.GetCaseWhen() != nil:
		walkRawNodes(n.GetCaseWhen().Expr, fn)
		walkRawNodes(n.GetCaseWhen().Result, fn)
	case n.GetAArrayExpr() != nil:
		each(n.GetAArrayExpr().Elements)
	case n.GetList() != nil:
		each(n.GetList().Items)
	case n.GetCollateClause() != nil:
		walkRawNodes(n.GetCollateClause().Arg, fn)
	case n.GetAIndirection() != nil:
		walkRawNodes(n.GetAIndirection().Arg, fn)
	case n.GetRowExpr() != nil:
		each(n.GetRowExpr().Args)
	case n.GetSubLink() != nil:
		walkRawNodes(n.GetSubLink().Testexpr, fn)
	}
}
