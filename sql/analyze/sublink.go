package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Sublink compiles a SubLink node.
func (a *Analyzer) Sublink(sl *pg.SubLink) (expr.Expr, error) {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, expr.PosErr(pgerr.NotSupported("this kind of subquery is not supported"), sl.Location)
	}
	if a.Subquery == nil {
		return nil, expr.PosErr(pgerr.NotSupported("subqueries are not supported here"), sl.Location)
	}
	sub, cols, correlated, err := a.Subquery(a, sel)
	if err != nil {
		return nil, err
	}
	e := &expr.SublinkExpr{Plan: sub, Correlated: correlated, Key: subqueryKey(sl)}
	if ps, ok := sub.(expr.ParamSubplan); ok && correlated {
		e.Params, e.ParamsKnown = ps.OuterParams()
	}
	one := func() error {
		if len(cols) != 1 {
			return expr.PosErr(pgerr.New(pgerr.SyntaxError, "subquery must return only one column"), sl.Location)
		}
		return nil
	}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		e.Kind, e.T = expr.SublinkExists, types.TypeBool
	case pg.SubLinkType_EXPR_SUBLINK:
		if err := one(); err != nil {
			return nil, err
		}
		e.Kind, e.T = expr.SublinkScalar, cols[0].Type
	case pg.SubLinkType_ARRAY_SUBLINK:
		if err := one(); err != nil {
			return nil, err
		}
		at, ok := types.ArrayOf(cols[0].Type)
		if !ok {
			return nil, expr.PosErr(pgerr.NotSupported("arrays of type %s are not supported", cols[0].Type.Name), sl.Location)
		}
		e.Kind, e.T = expr.SublinkArray, at
	case pg.SubLinkType_ANY_SUBLINK, pg.SubLinkType_ALL_SUBLINK:
		op := "="
		if len(sl.OperName) > 0 {
			op = NodeName(sl.OperName[len(sl.OperName)-1])
		}
		if e.Key != "" {
			e.Key = op + " " + e.Key
		}
		width := 1
		if row := sl.Testexpr.GetRowExpr(); row != nil {
			width = len(row.Args)
		}
		// PostgreSQL's transformSubLink: the test's fields against the
		// subquery's columns
		switch {
		case width < len(cols):
			return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "subquery has too many columns"), sl.Location)
		case width > len(cols):
			return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "subquery has too few columns"), sl.Location)
		}
		if row := sl.Testexpr.GetRowExpr(); row != nil {
			if err := a.rowSublink(e, op, row, cols, sl.Location); err != nil {
				return nil, err
			}
			if sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK {
				e.Kind = expr.SublinkAll
			}
			break
		}
		test, err := a.Expr(sl.Testexpr)
		if err != nil {
			return nil, err
		}
		ct := cols[0].Type
		if IsUnknown(test) {
			if test, err = a.CoerceUnknown(test, ct); err != nil {
				return nil, err
			}
		}
		cmp, common, err := a.comparison(op, test.Type(), ct, sl.Location)
		if err != nil {
			return nil, err
		}
		e.Test, e.Cmp, e.T = test, cmp, types.TypeBool
		e.Kind = expr.SublinkAny
		if sl.SubLinkType == pg.SubLinkType_ALL_SUBLINK {
			e.Kind = expr.SublinkAll
		}
		if e.Kind == expr.SublinkAny && op == "=" && common.OID == ct.OID && test.Type().OID == ct.OID && !types.IsArray(ct) {
			e.Hashable, e.KeyType = true, ct
		}
	default:
		return nil, expr.PosErr(pgerr.NotSupported("%s subqueries are not supported", sl.SubLinkType.String()), sl.Location)
	}
	return e, nil
}

// rowSublink compiles (a, b, ...) op ANY / ALL (SELECT x, y, ...): each
// field is compared with its column (unknown literals and parameters
// take the column's type), the rows as RowCmp does.
func (a *Analyzer) rowSublink(e *expr.SublinkExpr, op string, row *pg.RowExpr, cols []types.Column, loc int32) error {
	if !isComparison(op) {
		return expr.PosErr(pgerr.NotSupported("row comparison with operator %s is not supported", op), loc)
	}
	test := &expr.RowExpr{}
	var eqs, ords []func(ec *expr.EvalCtx, x, y types.Datum) (types.Datum, error)
	for i, n := range row.Args {
		f, err := a.Expr(n)
		if err != nil {
			return err
		}
		ct := cols[i].Type
		if IsUnknown(f) {
			if f, err = a.CoerceUnknown(f, ct); err != nil {
				return err
			}
		}
		eq, _, err := a.comparison("=", f.Type(), ct, loc)
		if err != nil {
			return err
		}
		ord, _, err := a.comparison(op, f.Type(), ct, loc)
		if err != nil {
			return err
		}
		test.Args = append(test.Args, f)
		eqs, ords = append(eqs, eq), append(ords, ord)
	}
	e.Test, e.Cmp, e.Row, e.T = test, expr.RowCmp(op, eqs, ords), true, types.TypeBool
	e.Kind = expr.SublinkAny
	return nil
}

// subqueryKey is the subquery's text rebuilt from its parse tree (so
// without positions): the same subquery written twice in a statement,
// as in SELECT DISTINCT (SELECT ...) ... ORDER BY (SELECT ...), gets the
// same key. "" if it cannot be rebuilt.
func subqueryKey(sl *pg.SubLink) string {
	tree := &pg.ParseResult{Version: parserVersion(), Stmts: []*pg.RawStmt{{Stmt: sl.Subselect}}}
	s, err := pg.Deparse(tree)
	if err != nil {
		return ""
	}
	return s
}
