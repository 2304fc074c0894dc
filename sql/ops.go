package sql

import (
	"math"
	"strings"

	"lockd/pgerr"
)

// binop evaluates a binary operator on two non-NULL operands of the
// already-resolved operand type.
type binopExpr struct {
	op   string
	t    Type // result type
	l, r expr
	fn   func(ec *evalCtx, a, b Datum) (Datum, error)
}

func (b *binopExpr) typ() Type { return b.t }
func (b *binopExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	l, err := b.l.eval(ec, row)
	if err != nil {
		return Datum{}, err
	}
	r, err := b.r.eval(ec, row)
	if err != nil {
		return Datum{}, err
	}
	if l.Null || r.Null {
		return NullDatum, nil
	}
	return b.fn(ec, l, r)
}

type negExpr struct{ arg expr }

func (n *negExpr) typ() Type { return n.arg.typ() }
func (n *negExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	v, err := n.arg.eval(ec, row)
	if err != nil || v.Null {
		return v, err
	}
	t := n.arg.typ()
	switch categoryOf(t) {
	case catInt:
		if (t.OID == OIDInt4 && v.I == math.MinInt32) || (t.OID == OIDInt2 && v.I == math.MinInt16) || v.I == math.MinInt64 {
			return Datum{}, outOfRange(t)
		}
		return intDatum(-v.I), nil
	case catFloat:
		return floatDatum(-v.F), nil
	case catNumeric:
		x := mustNumeric(v.S)
		x.coef.Neg(&x.coef)
		return textDatum(x.String()), nil
	}
	if t.OID == OIDInterval {
		return intDatum(-v.I), nil
	}
	return Datum{}, pgerr.New(pgerr.UndefinedFunction, "operator does not exist: - %s", t.Name)
}

// widerInt returns the result type of an integer operator.
func widerInt(a, b Type) Type {
	rank := func(t Type) int {
		switch t.OID {
		case OIDInt2:
			return 1
		case OIDInt4:
			return 2
		}
		return 3
	}
	if rank(a) >= rank(b) {
		if a.OID == OIDOid || a.OID == OIDXid {
			return TypeInt8
		}
		return a
	}
	return b
}

// numericCommon picks the common arithmetic type of two operand types,
// following PostgreSQL's implicit casts (int → numeric → float8).
func numericCommon(a, b Type) (Type, bool) {
	ca, cb := categoryOf(a), categoryOf(b)
	switch {
	case ca == catInt && cb == catInt:
		return widerInt(a, b), true
	case (ca == catFloat || ca == catInt || ca == catNumeric) && (cb == catFloat || cb == catInt || cb == catNumeric):
		if ca == catFloat || cb == catFloat {
			return TypeFloat8, true
		}
		return TypeNumeric, true
	}
	return Type{}, false
}

func arithFn(op string, t Type) func(ec *evalCtx, a, b Datum) (Datum, error) {
	switch categoryOf(t) {
	case catInt:
		return func(_ *evalCtx, a, b Datum) (Datum, error) {
			var r int64
			x, y := a.I, b.I
			switch op {
			case "+":
				r = x + y
				if (r > x) != (y > 0) {
					return Datum{}, outOfRange(t)
				}
			case "-":
				r = x - y
				if (r < x) != (y > 0) {
					return Datum{}, outOfRange(t)
				}
			case "*":
				if x != 0 && y != 0 {
					r = x * y
					if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
						return Datum{}, outOfRange(t)
					}
				}
			case "/":
				if y == 0 {
					return Datum{}, pgerr.New(pgerr.DivisionByZero, "division by zero")
				}
				if y == -1 && x == math.MinInt64 {
					return Datum{}, outOfRange(t)
				}
				r = x / y
			case "%":
				if y == 0 {
					return Datum{}, pgerr.New(pgerr.DivisionByZero, "division by zero")
				}
				if y == -1 {
					r = 0
				} else {
					r = x % y
				}
			}
			if err := checkIntRange(t, r); err != nil {
				return Datum{}, err
			}
			return intDatum(r), nil
		}
	case catFloat:
		return func(_ *evalCtx, a, b Datum) (Datum, error) {
			x, y := a.F, b.F
			var r float64
			switch op {
			case "+":
				r = x + y
			case "-":
				r = x - y
			case "*":
				r = x * y
			case "/":
				if y == 0 {
					return Datum{}, pgerr.New(pgerr.DivisionByZero, "division by zero")
				}
				r = x / y
			case "%":
				return Datum{}, pgerr.New(pgerr.UndefinedFunction, "operator does not exist: double precision %% double precision")
			}
			if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
				return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			return floatDatum(r), nil
		}
	default: // numeric
		return func(_ *evalCtx, a, b Datum) (Datum, error) {
			x, y := mustNumeric(a.S), mustNumeric(b.S)
			var r *numeric
			var err error
			switch op {
			case "+":
				r = x.add(y)
			case "-":
				r = x.sub(y)
			case "*":
				r = x.mul(y)
			case "/":
				r, err = x.div(y)
			case "%":
				r, err = x.mod(y)
			}
			if err != nil {
				return Datum{}, err
			}
			return textDatum(r.String()), nil
		}
	}
}

func cmpFn(op string, t Type) func(ec *evalCtx, a, b Datum) (Datum, error) {
	c := comparator(t)
	return func(_ *evalCtx, a, b Datum) (Datum, error) {
		v, err := c(a, b)
		if err != nil {
			return Datum{}, err
		}
		var r bool
		switch op {
		case "=":
			r = v == 0
		case "<>", "!=":
			r = v != 0
		case "<":
			r = v < 0
		case ">":
			r = v > 0
		case "<=":
			r = v <= 0
		case ">=":
			r = v >= 0
		}
		return boolDatum(r), nil
	}
}

// likeMatch implements LIKE with % and _ and backslash escapes.
func likeMatch(s, pattern string, fold bool) bool {
	if fold {
		s, pattern = strings.ToLower(s), strings.ToLower(pattern)
	}
	sr, pr := []rune(s), []rune(pattern)
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for j < len(pr) {
			switch pr[j] {
			case '%':
				for j < len(pr) && pr[j] == '%' {
					j++
				}
				if j == len(pr) {
					return true
				}
				for k := i; k <= len(sr); k++ {
					if match(k, j) {
						return true
					}
				}
				return false
			case '_':
				if i >= len(sr) {
					return false
				}
				i++
				j++
			case '\\':
				j++
				if j >= len(pr) {
					return false
				}
				fallthrough
			default:
				if i >= len(sr) || sr[i] != pr[j] {
					return false
				}
				i++
				j++
			}
		}
		return i == len(sr)
	}
	return match(0, 0)
}
