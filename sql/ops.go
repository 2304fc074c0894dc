package sql

import (
	"math"
	"regexp"
	"regexp/syntax"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

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

// regexCache keeps the compiled form of non-constant patterns, bounded.
type regexCache struct {
	m map[string]*regexp.Regexp
}

func (c *regexCache) get(pattern string, fold bool) (*regexp.Regexp, error) {
	key := pattern
	if fold {
		key = "\x00i" + pattern
	}
	if re, ok := c.m[key]; ok {
		return re, nil
	}
	re, err := compileRegex(pattern, fold)
	if err != nil {
		return nil, err
	}
	if c.m == nil || len(c.m) >= 64 {
		c.m = map[string]*regexp.Regexp{}
	}
	c.m[key] = re
	return re, nil
}

// compileRegex compiles a POSIX-style pattern with Go's RE2 engine, which
// covers the regular expressions psql and most queries use (classes,
// anchors, alternation, repetition). Back-references and lookaround,
// which PostgreSQL's ARE engine has, are reported as invalid.
func compileRegex(pattern string, fold bool) (*regexp.Regexp, error) {
	p := pattern
	if fold {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		// PostgreSQL's regex engine words its errors differently
		msg := "invalid regular expression"
		if se, ok := err.(*syntax.Error); ok {
			switch se.Code {
			case syntax.ErrMissingParen, syntax.ErrUnexpectedParen:
				msg = "parentheses () not balanced"
			case syntax.ErrMissingBracket:
				msg = "brackets [] not balanced"
			case syntax.ErrMissingRepeatArgument, syntax.ErrInvalidRepeatOp:
				msg = "quantifier operand invalid"
			case syntax.ErrTrailingBackslash, syntax.ErrInvalidEscape:
				msg = "invalid escape \\ sequence"
			case syntax.ErrInvalidCharRange:
				msg = "invalid character range"
			case syntax.ErrInvalidRepeatSize:
				msg = "invalid repetition count(s)"
			default:
				msg = string(se.Code)
			}
		}
		return nil, pgerr.New(pgerr.InvalidRegexp, "invalid regular expression: %s", msg)
	}
	return re, nil
}

// regexOp compiles text ~ pattern (and ~*, !~, !~*).
func (a *analyzer) regexOp(op string, l, r expr, loc int32) (expr, error) {
	fold := strings.HasSuffix(op, "*")
	neg := strings.HasPrefix(op, "!")
	if c, ok := r.(*constExpr); ok && !c.d.Null {
		re, err := compileRegex(c.d.S, fold)
		if err != nil {
			return nil, posErr(err.(*pgerr.Error), loc)
		}
		return a.foldBinop(&binopExpr{op: op, t: TypeBool, l: l, r: r, fn: func(_ *evalCtx, x, _ Datum) (Datum, error) {
			return boolDatum(re.MatchString(x.S) != neg), nil
		}})
	}
	cache := &regexCache{}
	return &binopExpr{op: op, t: TypeBool, l: l, r: r, fn: func(_ *evalCtx, x, y Datum) (Datum, error) {
		re, err := cache.get(y.S, fold)
		if err != nil {
			return Datum{}, err
		}
		return boolDatum(re.MatchString(x.S) != neg), nil
	}}, nil
}

// quantifiedArray compiles `x op ANY (array)` and `x op ALL (array)`.
func (a *analyzer) quantifiedArray(op string, x *pg.A_Expr) (expr, error) {
	l, r, err := a.operands(x)
	if err != nil {
		return nil, err
	}
	if isUnknown(r) {
		lt := l.typ()
		if isUnknown(l) {
			lt = TypeText
		}
		at, ok := arrayOf(lt)
		if !ok {
			return nil, posErr(pgerr.NotSupported("arrays of type %s are not supported", lt.Name), x.Location)
		}
		if r, err = a.coerceUnknown(r, at); err != nil {
			return nil, posErr(pgerr.From(err), x.Location)
		}
	}
	elem, ok := elemOf(r.typ())
	if !ok {
		return nil, posErr(pgerr.New(pgerr.WrongObjectType, "op ANY/ALL (array) requires array on right side"), x.Location)
	}
	if isUnknown(l) {
		if l, err = a.coerceUnknown(l, elem); err != nil {
			return nil, err
		}
	}
	cmp, _, err := a.comparison(op, l.typ(), elem, x.Location)
	if err != nil {
		return nil, err
	}
	return &anyExpr{arg: l, arr: r, cmp: cmp, all: x.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL}, nil
}

// indirection compiles array subscripts: arr[i] (1-based; out of range or
// NULL gives NULL).
func (a *analyzer) indirection(ind *pg.A_Indirection) (expr, error) {
	e, err := a.expr(ind.Arg)
	if err != nil {
		return nil, err
	}
	for _, n := range ind.Indirection {
		idx := n.GetAIndices()
		if idx == nil {
			return nil, pgerr.NotSupported("field selection is not supported")
		}
		if idx.IsSlice {
			return nil, pgerr.NotSupported("array slices are not supported")
		}
		elem, ok := elemOf(e.typ())
		if !ok {
			return nil, pgerr.New(pgerr.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", e.typ().Name)
		}
		i, err := a.expr(idx.Uidx)
		if err != nil {
			return nil, err
		}
		if i, err = a.coerceArg(i, TypeInt4, "subscript", -1); err != nil {
			return nil, err
		}
		e = &funcExpr{name: "subscript", t: elem, args: []expr{e, i}, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			k := v[1].I
			if k < 1 || k > int64(len(v[0].A)) {
				return NullDatum, nil
			}
			return v[0].A[k-1], nil
		}}
	}
	return e, nil
}
