package analyze

import (
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// dateArith compiles date ± integer, date - date, date ± interval.
func dateArith(op string, l, r expr.Expr) (expr.Expr, bool) {
	lt, rt := l.Type(), r.Type()
	switch {
	case lt.OID == types.OIDDate && types.CategoryOf(rt) == types.CatInt && rt.OID != types.OIDInt8 && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return &expr.BinopExpr{Op: op, T: types.TypeDate, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			if a.I == types.DatePosInf || a.I == types.DateNegInf {
				return a, nil
			}
			v := a.I + sign*b.I
			if v < -2451545 || v > 2147483494-2451545 {
				return types.Datum{}, pgerr.New("22008", "date out of range")
			}
			return types.IntDatum(v), nil
		}}, true
	case types.CategoryOf(lt) == types.CatInt && lt.OID != types.OIDInt8 && rt.OID == types.OIDDate && op == "+":
		return &expr.BinopExpr{Op: op, T: types.TypeDate, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			return types.IntDatum(a.I + b.I), nil
		}}, true
	case lt.OID == types.OIDDate && rt.OID == types.OIDDate && op == "-":
		return &expr.BinopExpr{Op: op, T: types.TypeInt4, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			return types.IntDatum(a.I - b.I), nil
		}}, true
	case lt.OID == types.OIDDate && rt.OID == types.OIDInterval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return &expr.BinopExpr{Op: op, T: types.TypeTimestamp, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			return types.IntDatum(a.I*86400000000 + types.PgEpochMicros + sign*b.I), nil
		}}, true
	}
	return nil, false
}
