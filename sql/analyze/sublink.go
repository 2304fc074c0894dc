package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// sublink compiles a SubLink node.
func (a *Analyzer) sublink(sl *pg.SubLink) (expr.Expr, error) {
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
	e := &expr.SublinkExpr{Plan: sub, Correlated: correlated}
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
		if err := one(); err != nil {
			return nil, err
		}
		op := "="
		if len(sl.OperName) > 0 {
			op = NodeName(sl.OperName[len(sl.OperName)-1])
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
