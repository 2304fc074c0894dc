package expr

import (
	"math"
	"regexp"
	"regexp/syntax"
	"strings"

	"lockd/pgerr"
	"lockd/sql/types"
)

// ecFormat is the format context of a running expression, falling back
// to the one captured at analysis.
func FormatOf(ec *EvalCtx, fallback *types.FormatCtx) *types.FormatCtx {
	if fc := ec.FormatCtx(); fc != nil {
		return fc
	}
	return fallback
}

// anyExpr is `x op ANY (array)` or `x op ALL (array)` with SQL's NULL
// rules: ANY is true if some comparison is true, else NULL if one was
// NULL, else false; ALL the dual.
type AnyExpr struct {
	Arg, Arr Expr
	Op       string // the comparison operator's name
	Cmp      func(ec *EvalCtx, a, b types.Datum) (types.Datum, error)
	All      bool
}

func (e *AnyExpr) Type() types.Type { return types.TypeBool }
func (e *AnyExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	v, err := e.Arg.Eval(ec, row)
	if err != nil {
		return types.Datum{}, err
	}
	arr, err := e.Arr.Eval(ec, row)
	if err != nil || arr.Null {
		return types.NullDatum, err
	}
	return quantified(ec, v, arr.A, e.Cmp, e.All)
}

// quantified applies cmp between v and each element (ANY or ALL).
func quantified(ec *EvalCtx, v types.Datum, elems []types.Datum, cmp func(ec *EvalCtx, a, b types.Datum) (types.Datum, error), all bool) (types.Datum, error) {
	if len(elems) == 0 {
		return types.BoolDatum(all), nil
	}
	sawNull := false
	for _, el := range elems {
		if v.Null || el.Null {
			sawNull = true
			continue
		}
		r, err := cmp(ec, v, el)
		if err != nil {
			return types.Datum{}, err
		}
		if r.Null {
			sawNull = true
			continue
		}
		if (r.I != 0) != all {
			return types.BoolDatum(!all), nil
		}
	}
	if sawNull {
		return types.NullDatum, nil
	}
	return types.BoolDatum(all), nil
}

// binop evaluates a binary operator on two non-NULL operands of the
// already-resolved operand type.
type BinopExpr struct {
	Op   string
	T    types.Type // result type
	L, R Expr
	Fn   func(ec *EvalCtx, a, b types.Datum) (types.Datum, error)
}

func (b *BinopExpr) Type() types.Type { return b.T }
func (b *BinopExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	l, err := b.L.Eval(ec, row)
	if err != nil {
		return types.Datum{}, err
	}
	r, err := b.R.Eval(ec, row)
	if err != nil {
		return types.Datum{}, err
	}
	if l.Null || r.Null {
		return types.NullDatum, nil
	}
	return b.Fn(ec, l, r)
}

type NegExpr struct{ Arg Expr }

func (n *NegExpr) Type() types.Type { return n.Arg.Type() }
func (n *NegExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	v, err := n.Arg.Eval(ec, row)
	if err != nil || v.Null {
		return v, err
	}
	t := n.Arg.Type()
	switch types.CategoryOf(t) {
	case types.CatInt:
		if (t.OID == types.OIDInt4 && v.I == math.MinInt32) || (t.OID == types.OIDInt2 && v.I == math.MinInt16) || v.I == math.MinInt64 {
			return types.Datum{}, types.OutOfRange(t)
		}
		return types.IntDatum(-v.I), nil
	case types.CatFloat:
		return types.FloatDatum(-v.F), nil
	case types.CatNumeric:
		x := types.MustNumeric(v.S)
		x.Coef.Neg(&x.Coef)
		return types.TextDatum(x.String()), nil
	}
	if t.OID == types.OIDInterval {
		return types.IntDatum(-v.I), nil
	}
	return types.Datum{}, pgerr.New(pgerr.UndefinedFunction, "operator does not exist: - %s", t.Name)
}

// widerInt returns the result type of an integer operator.
func WiderInt(a, b types.Type) types.Type {
	rank := func(t types.Type) int {
		switch t.OID {
		case types.OIDInt2:
			return 1
		case types.OIDInt4:
			return 2
		}
		return 3
	}
	if rank(a) >= rank(b) {
		if a.OID == types.OIDOid || a.OID == types.OIDXid {
			return types.TypeInt8
		}
		return a
	}
	return b
}

// numericCommon picks the common arithmetic type of two operand types,
// following PostgreSQL's implicit casts (int → numeric → float8).
func NumericCommon(a, b types.Type) (types.Type, bool) {
	ca, cb := types.CategoryOf(a), types.CategoryOf(b)
	switch {
	case ca == types.CatInt && cb == types.CatInt:
		return WiderInt(a, b), true
	case (ca == types.CatFloat || ca == types.CatInt || ca == types.CatNumeric) && (cb == types.CatFloat || cb == types.CatInt || cb == types.CatNumeric):
		if ca == types.CatFloat || cb == types.CatFloat {
			return types.TypeFloat8, true
		}
		return types.TypeNumeric, true
	}
	return types.Type{}, false
}

func ArithFn(op string, t types.Type) func(ec *EvalCtx, a, b types.Datum) (types.Datum, error) {
	switch types.CategoryOf(t) {
	case types.CatInt:
		return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) {
			var r int64
			x, y := a.I, b.I
			switch op {
			case "+":
				r = x + y
				if (r > x) != (y > 0) {
					return types.Datum{}, types.OutOfRange(t)
				}
			case "-":
				r = x - y
				if (r < x) != (y > 0) {
					return types.Datum{}, types.OutOfRange(t)
				}
			case "*":
				if x != 0 && y != 0 {
					r = x * y
					if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
						return types.Datum{}, types.OutOfRange(t)
					}
				}
			case "/":
				if y == 0 {
					return types.Datum{}, pgerr.New(pgerr.DivisionByZero, "division by zero")
				}
				if y == -1 && x == math.MinInt64 {
					return types.Datum{}, types.OutOfRange(t)
				}
				r = x / y
			case "%":
				if y == 0 {
					return types.Datum{}, pgerr.New(pgerr.DivisionByZero, "division by zero")
				}
				if y == -1 {
					r = 0
				} else {
					r = x % y
				}
			}
			if err := types.CheckIntRange(t, r); err != nil {
				return types.Datum{}, err
			}
			return types.IntDatum(r), nil
		}
	case types.CatFloat:
		return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) {
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
					return types.Datum{}, pgerr.New(pgerr.DivisionByZero, "division by zero")
				}
				r = x / y
			case "%":
				return types.Datum{}, pgerr.New(pgerr.UndefinedFunction, "operator does not exist: double precision %% double precision")
			}
			if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
				return types.Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			return types.FloatDatum(r), nil
		}
	default: // numeric
		return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) {
			x, y := types.MustNumeric(a.S), types.MustNumeric(b.S)
			var r *types.Numeric
			var err error
			switch op {
			case "+":
				r = x.Add(y)
			case "-":
				r = x.Sub(y)
			case "*":
				r = x.Mul(y)
			case "/":
				r, err = x.Div(y)
			case "%":
				r, err = x.Mod(y)
			}
			if err != nil {
				return types.Datum{}, err
			}
			return types.TextDatum(r.String()), nil
		}
	}
}

func CmpFn(op string, t types.Type) func(ec *EvalCtx, a, b types.Datum) (types.Datum, error) {
	switch types.CategoryOf(t) {
	case types.CatInt, types.CatBool, types.CatDatetime:
		// integer-valued types compare their int64s, the operator chosen
		// once rather than per row
		switch op {
		case "=":
			return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) { return types.BoolDatum(a.I == b.I), nil }
		case "<>", "!=":
			return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) { return types.BoolDatum(a.I != b.I), nil }
		case "<":
			return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) { return types.BoolDatum(a.I < b.I), nil }
		case ">":
			return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) { return types.BoolDatum(a.I > b.I), nil }
		case "<=":
			return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) { return types.BoolDatum(a.I <= b.I), nil }
		case ">=":
			return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) { return types.BoolDatum(a.I >= b.I), nil }
		}
	}
	c := types.Comparator(t)
	return func(_ *EvalCtx, a, b types.Datum) (types.Datum, error) {
		v, err := c(a, b)
		if err != nil {
			return types.Datum{}, err
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
		return types.BoolDatum(r), nil
	}
}

// likeMatch implements LIKE with % and _ and backslash escapes.
func LikeMatch(s, pattern string, fold bool) bool {
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
type RegexCache struct {
	m map[string]*regexp.Regexp
}

func (c *RegexCache) Get(pattern string, fold bool) (*regexp.Regexp, error) {
	key := pattern
	if fold {
		key = "\x00i" + pattern
	}
	if re, ok := c.m[key]; ok {
		return re, nil
	}
	re, err := CompileRegex(pattern, fold)
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
func CompileRegex(pattern string, fold bool) (*regexp.Regexp, error) {
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
