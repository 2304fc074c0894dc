package analyze

import (
	"math"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

func (a *Analyzer) aexpr(x *pg.A_Expr) (expr.Expr, error) {
	op := ""
	if len(x.Name) > 0 {
		op = NodeName(x.Name[len(x.Name)-1])
	}
	switch x.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if x.Lexpr == nil {
			return a.prefixAExpr(op, x)
		}
		if lr, rr := x.Lexpr.GetRowExpr(), x.Rexpr.GetRowExpr(); lr != nil && rr != nil && isComparison(op) {
			return a.rowComparison(op, lr, rr, x.Location)
		}
		l, r, err := a.operands(x)
		if err != nil {
			return nil, err
		}
		return a.Binop(op, l, r, x.Location)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		l, r, err := a.operands(x)
		if err != nil {
			return nil, err
		}
		return a.likeOp(op, l, r)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		return a.quantifiedArray(op, x)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return nil, expr.PosErr(pgerr.NotSupported("SIMILAR TO is not supported"), x.Location)
	case pg.A_Expr_Kind_AEXPR_IN:
		return a.inList(op, x)
	case pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM,
		pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		return a.between(x)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		return a.distinct(x)
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		return a.nullIf(x)
	}
	return nil, expr.PosErr(pgerr.NotSupported("operator kind %s is not supported", x.Kind.String()), x.Location)
}

// prefixAExpr compiles a prefix operator: - and + on numbers and
// intervals, and |/, ||/, @, ~.
func (a *Analyzer) prefixAExpr(op string, x *pg.A_Expr) (expr.Expr, error) {
	r, err := a.Expr(x.Rexpr)
	if err != nil {
		return nil, err
	}
	switch op {
	case "-":
		if IsUnknown(r) {
			return nil, expr.PosErr(pgerr.New(pgerr.AmbiguousFunction, "operator is not unique: - unknown").WithHint("Could not choose a best candidate operator. You might need to add explicit type casts."), x.Location)
		}
		switch types.CategoryOf(r.Type()) {
		case types.CatInt, types.CatFloat, types.CatNumeric:
		default:
			if r.Type().OID != types.OIDInterval {
				return nil, expr.PosErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: - %s", r.Type().Name).
					WithHint("No operator matches the given name and argument type. You might need to add an explicit type cast."), x.Location)
			}
		}
		if c, ok := r.(*expr.ConstExpr); ok {
			d, err := (&expr.NegExpr{Arg: c}).Eval(&a.Fold, nil)
			if err != nil {
				return nil, err
			}
			return &expr.ConstExpr{T: c.T, D: d}, nil
		}
		return &expr.NegExpr{Arg: r}, nil
	case "+":
		return r, nil
	case "|/", "||/", "@", "~":
		return a.prefixOp(op, r, x.Location)
	}
	return nil, expr.PosErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s", op, r.Type().Name), x.Location)
}

// inList compiles x IN (list) and NOT IN: the left side and the items
// unified to one type.
func (a *Analyzer) inList(op string, x *pg.A_Expr) (expr.Expr, error) {
	l, err := a.Expr(x.Lexpr)
	if err != nil {
		return nil, err
	}
	list := x.Rexpr.GetList()
	if list == nil {
		return nil, pgerr.NotSupported("IN with a subquery is not supported")
	}
	items := []expr.Expr{l}
	for _, it := range list.Items {
		e, err := a.Expr(it)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	items, t, err := a.Unify(items, "IN", x.Location)
	if err != nil {
		return nil, err
	}
	return &expr.InExpr{Arg: items[0], List: items[1:], Cmp: types.Comparator(t), Not: op == "<>"}, nil
}

// between compiles [NOT] BETWEEN [SYMMETRIC] as PostgreSQL's
// transformAExprBetween does: two comparisons, AND-ed (OR-ed for NOT).
func (a *Analyzer) between(x *pg.A_Expr) (expr.Expr, error) {
	if x.Kind == pg.A_Expr_Kind_AEXPR_BETWEEN_SYM || x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
		// x BETWEEN SYMMETRIC a AND b: (x BETWEEN a AND b) OR (x BETWEEN b AND a)
		bounds := x.Rexpr.GetList().GetItems()
		plain := pg.A_Expr_Kind_AEXPR_BETWEEN
		one, err := a.aexpr(&pg.A_Expr{Kind: plain, Lexpr: x.Lexpr, Rexpr: x.Rexpr, Location: x.Location})
		if err != nil {
			return nil, err
		}
		rev := pg.MakeListNode([]*pg.Node{bounds[1], bounds[0]})
		two, err := a.aexpr(&pg.A_Expr{Kind: plain, Lexpr: x.Lexpr, Rexpr: rev, Location: x.Location})
		if err != nil {
			return nil, err
		}
		var e expr.Expr = &expr.BoolExpr{Op: pg.BoolExprType_OR_EXPR, Args: []expr.Expr{one, two}}
		if x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
			e = &expr.BoolExpr{Op: pg.BoolExprType_NOT_EXPR, Args: []expr.Expr{e}}
		}
		return e, nil
	}
	l, err := a.Expr(x.Lexpr)
	if err != nil {
		return nil, err
	}
	bounds := x.Rexpr.GetList().GetItems()
	lo, err := a.Expr(bounds[0])
	if err != nil {
		return nil, err
	}
	hi, err := a.Expr(bounds[1])
	if err != nil {
		return nil, err
	}
	ge, err := a.Binop(">=", l, lo, x.Location)
	if err != nil {
		return nil, err
	}
	le, err := a.Binop("<=", l, hi, x.Location)
	if err != nil {
		return nil, err
	}
	var e expr.Expr = &expr.BoolExpr{Op: pg.BoolExprType_AND_EXPR, Args: []expr.Expr{ge, le}}
	if x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
		e = &expr.BoolExpr{Op: pg.BoolExprType_NOT_EXPR, Args: []expr.Expr{e}}
	}
	return e, nil
}

// distinct compiles IS [NOT] DISTINCT FROM.
func (a *Analyzer) distinct(x *pg.A_Expr) (expr.Expr, error) {
	l, r, err := a.operands(x)
	if err != nil {
		return nil, err
	}
	items, t, err := a.Unify([]expr.Expr{l, r}, "IS DISTINCT FROM", x.Location)
	if err != nil {
		return nil, err
	}
	cmp := types.Comparator(t)
	not := x.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT
	return &expr.FuncExpr{Name: "distinct", T: types.TypeBool, Args: items, NonStrict: true, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		var distinct bool
		switch {
		case v[0].Null && v[1].Null:
			distinct = false
		case v[0].Null || v[1].Null:
			distinct = true
		default:
			c, err := cmp(v[0], v[1])
			if err != nil {
				return types.Datum{}, err
			}
			distinct = c != 0
		}
		return types.BoolDatum(distinct != not), nil
	}}, nil
}

// nullIf compiles NULLIF(l, r).
func (a *Analyzer) nullIf(x *pg.A_Expr) (expr.Expr, error) {
	l, r, err := a.operands(x)
	if err != nil {
		return nil, err
	}
	items, t, err := a.Unify([]expr.Expr{l, r}, "NULLIF", x.Location)
	if err != nil {
		return nil, err
	}
	cmp := types.Comparator(t)
	return &expr.FuncExpr{Name: "nullif", T: t, Args: items, NonStrict: true, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		if v[0].Null || v[1].Null {
			return v[0], nil
		}
		c, err := cmp(v[0], v[1])
		if err != nil || c == 0 {
			return types.NullDatum, err
		}
		return v[0], nil
	}}, nil
}

// operands compiles both sides of a binary A_Expr.
func (a *Analyzer) operands(x *pg.A_Expr) (expr.Expr, expr.Expr, error) {
	l, err := a.Expr(x.Lexpr)
	if err != nil {
		return nil, nil, err
	}
	r, err := a.Expr(x.Rexpr)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func isComparison(op string) bool {
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		return true
	}
	return false
}

// binop resolves an operator by its operand types.
func (a *Analyzer) Binop(op string, l, r expr.Expr, loc int32) (expr.Expr, error) {
	if lr, ok := l.(*expr.RowExpr); ok && isComparison(op) {
		if rr, ok := r.(*expr.RowExpr); ok {
			return a.rowCompare(op, lr, rr, loc)
		}
	}
	lu, ru := IsUnknown(l), IsUnknown(r)
	var err error
	switch {
	case lu && ru:
		if isComparison(op) || op == "||" || isTextOperator(op) {
			if l, err = a.CoerceUnknown(l, types.TypeText); err != nil {
				return nil, err
			}
			if r, err = a.CoerceUnknown(r, types.TypeText); err != nil {
				return nil, err
			}
		} else {
			return nil, expr.PosErr(pgerr.New(pgerr.AmbiguousFunction, "operator is not unique: unknown %s unknown", op).WithHint("Could not choose a best candidate operator. You might need to add explicit type casts."), loc)
		}
	case lu:
		target := r.Type()
		if op == "||" {
			target = types.TypeText
		}
		if l, err = a.CoerceUnknown(l, target); err != nil {
			return nil, expr.PosErr(pgerr.From(err), loc)
		}
	case ru:
		target := l.Type()
		if op == "||" {
			target = types.TypeText
		}
		if r, err = a.CoerceUnknown(r, target); err != nil {
			return nil, expr.PosErr(pgerr.From(err), loc)
		}
	}
	lt, rt := l.Type(), r.Type()
	noOp := func() (expr.Expr, error) {
		return nil, expr.PosErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s %s", lt.Name, op, rt.Name).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts."), loc)
	}
	switch op {
	case "+", "-", "*", "/", "%":
		if t, ok := expr.NumericCommon(lt, rt); ok {
			if l, err = a.CastTo(l, t, false); err != nil {
				return nil, err
			}
			if r, err = a.CastTo(r, t, false); err != nil {
				return nil, err
			}
			return a.foldBinop(&expr.BinopExpr{Op: op, T: t, L: l, R: r, Fn: expr.ArithFn(op, t)})
		}
		if e, ok := datetimeArith(op, l, r); ok {
			return e, nil
		}
		if e, ok := dateArith(op, l, r); ok {
			return a.foldBinop(e.(*expr.BinopExpr))
		}
		return noOp()
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		var t types.Type
		switch {
		case lt.OID == rt.OID:
			t = lt
		case types.CategoryOf(lt) == types.CatString && types.CategoryOf(rt) == types.CatString:
			t = types.TypeText
		case types.CategoryOf(lt) == types.CatDatetime && types.CategoryOf(rt) == types.CatDatetime:
			t = types.TypeTimestamptz
		case types.IsOIDLike(lt) && types.IsOIDLike(rt):
			t = types.TypeOid
		default:
			c, ok := expr.NumericCommon(lt, rt)
			if !ok {
				return noOp()
			}
			t = c
		}
		if l, err = a.CastTo(l, t, false); err != nil {
			return nil, err
		}
		if r, err = a.CastTo(r, t, false); err != nil {
			return nil, err
		}
		return a.foldBinop(&expr.BinopExpr{Op: op, T: types.TypeBool, L: l, R: r, Fn: expr.CmpFn(op, t)})
	case "||":
		if e, ok, err := a.arrayConcat(l, r, loc); ok || err != nil {
			return e, err
		}
		if types.CategoryOf(lt) != types.CatString && types.CategoryOf(rt) != types.CatString {
			return noOp() // text || anything needs a string on one side
		}
		if l, err = a.toText(l); err != nil {
			return nil, err
		}
		if r, err = a.toText(r); err != nil {
			return nil, err
		}
		return a.foldBinop(&expr.BinopExpr{Op: op, T: types.TypeText, L: l, R: r, Fn: func(_ *expr.EvalCtx, x, y types.Datum) (types.Datum, error) {
			return types.TextDatum(x.S + y.S), nil
		}})
	case "~~", "!~~", "~~*", "!~~*":
		return a.likeOp(op, l, r)
	case "^", "&", "|", "#", "<<", ">>":
		return a.numericOp(op, l, r, loc, noOp)
	case "~", "~*", "!~", "!~*":
		if l, err = a.toText(l); err != nil {
			return nil, err
		}
		if r, err = a.toText(r); err != nil {
			return nil, err
		}
		return a.regexOp(op, l, r, loc)
	}
	return noOp()
}

// foldBinop evaluates an operator on two constants at analysis time.
func (a *Analyzer) foldBinop(b *expr.BinopExpr) (expr.Expr, error) {
	_, lc := b.L.(*expr.ConstExpr)
	_, rc := b.R.(*expr.ConstExpr)
	if lc && rc {
		d, err := b.Eval(&a.Fold, nil)
		if err != nil {
			return nil, err
		}
		return &expr.ConstExpr{T: b.T, D: d}, nil
	}
	return b, nil
}

func datetimeArith(op string, l, r expr.Expr) (expr.Expr, bool) {
	lt, rt := l.Type(), r.Type()
	isTS := func(t types.Type) bool { return t.OID == types.OIDTimestamp || t.OID == types.OIDTimestamptz }
	switch {
	case isTS(lt) && rt.OID == types.OIDInterval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return &expr.BinopExpr{Op: op, T: lt, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			return types.IntDatum(a.I + sign*b.I), nil
		}}, true
	case lt.OID == types.OIDInterval && isTS(rt) && op == "+":
		return &expr.BinopExpr{Op: op, T: rt, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			return types.IntDatum(a.I + b.I), nil
		}}, true
	case isTS(lt) && lt.OID == rt.OID && op == "-":
		return &expr.BinopExpr{Op: op, T: types.TypeInterval, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			return types.IntDatum(a.I - b.I), nil
		}}, true
	case lt.OID == types.OIDInterval && rt.OID == types.OIDInterval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return &expr.BinopExpr{Op: op, T: types.TypeInterval, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
			return types.IntDatum(a.I + sign*b.I), nil
		}}, true
	}
	return nil, false
}

// isTextOperator reports the pattern-matching operators, whose unknown
// operands resolve to text.
func isTextOperator(op string) bool {
	switch op {
	case "~", "~*", "!~", "!~*", "~~", "!~~", "~~*", "!~~*":
		return true
	}
	return false
}

// likeOp compiles LIKE (~~), ILIKE (~~*) and their negations.
func (a *Analyzer) likeOp(op string, l, r expr.Expr) (expr.Expr, error) {
	var err error
	if l, err = a.toText(l); err != nil {
		return nil, err
	}
	if r, err = a.toText(r); err != nil {
		return nil, err
	}
	fold := strings.HasSuffix(op, "*")
	neg := strings.HasPrefix(op, "!")
	return a.foldBinop(&expr.BinopExpr{Op: op, T: types.TypeBool, L: l, R: r, Fn: func(_ *expr.EvalCtx, a, b types.Datum) (types.Datum, error) {
		return types.BoolDatum(expr.LikeMatch(a.S, b.S, fold) != neg), nil
	}})
}

// numericOp compiles ^ (power) and the integer bitwise operators.
func (a *Analyzer) numericOp(op string, l, r expr.Expr, loc int32, noOp func() (expr.Expr, error)) (expr.Expr, error) {
	lt, rt := l.Type(), r.Type()
	var err error
	if op == "^" {
		t := types.TypeFloat8
		if types.CategoryOf(lt) == types.CatNumeric || types.CategoryOf(rt) == types.CatNumeric {
			if types.CategoryOf(lt) != types.CatFloat && types.CategoryOf(rt) != types.CatFloat {
				t = types.TypeNumeric
			}
		}
		if types.CategoryOf(lt) != types.CatInt && types.CategoryOf(lt) != types.CatNumeric && types.CategoryOf(lt) != types.CatFloat ||
			types.CategoryOf(rt) != types.CatInt && types.CategoryOf(rt) != types.CatNumeric && types.CategoryOf(rt) != types.CatFloat {
			return noOp()
		}
		if l, err = a.CastTo(l, t, false); err != nil {
			return nil, err
		}
		if r, err = a.CastTo(r, t, false); err != nil {
			return nil, err
		}
		return a.foldBinop(&expr.BinopExpr{Op: op, T: t, L: l, R: r, Fn: func(_ *expr.EvalCtx, x, y types.Datum) (types.Datum, error) {
			if t.OID == types.OIDNumeric {
				p, err := types.MustNumeric(x.S).Pow(types.MustNumeric(y.S))
				if err != nil {
					return types.Datum{}, err
				}
				return types.TextDatum(p.String()), nil
			}
			if x.F == 0 && y.F < 0 {
				return types.Datum{}, pgerr.New("2201F", "zero raised to a negative power is undefined")
			}
			if x.F < 0 && y.F != math.Trunc(y.F) {
				return types.Datum{}, pgerr.New("2201F", "a negative number raised to a non-integer power yields a complex result")
			}
			v := math.Pow(x.F, y.F)
			if math.IsInf(v, 0) {
				return types.Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			return types.FloatDatum(v), nil
		}})
	}
	if types.CategoryOf(lt) != types.CatInt || types.CategoryOf(rt) != types.CatInt {
		return noOp()
	}
	t := expr.WiderInt(lt, rt)
	if op == "<<" || op == ">>" {
		t = lt
		if r, err = a.CastTo(r, types.TypeInt4, false); err != nil {
			return nil, err
		}
	} else {
		if l, err = a.CastTo(l, t, false); err != nil {
			return nil, err
		}
		if r, err = a.CastTo(r, t, false); err != nil {
			return nil, err
		}
	}
	return a.foldBinop(&expr.BinopExpr{Op: op, T: t, L: l, R: r, Fn: func(_ *expr.EvalCtx, x, y types.Datum) (types.Datum, error) {
		var v int64
		switch op {
		case "&":
			v = x.I & y.I
		case "|":
			v = x.I | y.I
		case "#":
			v = x.I ^ y.I
		case "<<":
			v = x.I << uint(y.I&63)
		case ">>":
			v = x.I >> uint(y.I&63)
		}
		switch t.OID {
		case types.OIDInt2:
			v = int64(int16(v))
		case types.OIDInt4:
			v = int64(int32(v))
		}
		return types.IntDatum(v), nil
	}})
}

// prefixOp compiles the prefix operators |/ (square root), ||/ (cube
// root), @ (absolute value) and ~ (bitwise not).
func (a *Analyzer) prefixOp(op string, r expr.Expr, loc int32) (expr.Expr, error) {
	var err error
	if IsUnknown(r) {
		if r, err = a.CoerceUnknown(r, types.TypeFloat8); err != nil {
			return nil, err
		}
	}
	rt := r.Type()
	cat := types.CategoryOf(rt)
	switch op {
	case "|/", "||/":
		if cat != types.CatInt && cat != types.CatNumeric && cat != types.CatFloat {
			break
		}
		if r, err = a.CastTo(r, types.TypeFloat8, false); err != nil {
			return nil, err
		}
		return &expr.FuncExpr{Name: op, T: types.TypeFloat8, Args: []expr.Expr{r}, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if op == "||/" {
				return types.FloatDatum(math.Cbrt(v[0].F)), nil
			}
			if v[0].F < 0 {
				return types.Datum{}, pgerr.New("2201F", "cannot take square root of a negative number")
			}
			return types.FloatDatum(math.Sqrt(v[0].F)), nil
		}}, nil
	case "@":
		if cat != types.CatInt && cat != types.CatNumeric && cat != types.CatFloat {
			break
		}
		return &expr.FuncExpr{Name: op, T: rt, Args: []expr.Expr{r}, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			switch cat {
			case types.CatFloat:
				return types.FloatDatum(math.Abs(v[0].F)), nil
			case types.CatNumeric:
				return types.TextDatum(strings.TrimPrefix(v[0].S, "-")), nil
			}
			if v[0].I < 0 {
				return (&expr.NegExpr{Arg: &expr.ConstExpr{T: rt, D: v[0]}}).Eval(ec, nil)
			}
			return v[0], nil
		}}, nil
	case "~":
		if cat != types.CatInt {
			break
		}
		return &expr.FuncExpr{Name: op, T: rt, Args: []expr.Expr{r}, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			return types.IntDatum(^v[0].I), nil
		}}, nil
	}
	return nil, expr.PosErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s", op, rt.Name).
		WithHint("No operator matches the given name and argument type. You might need to add an explicit type cast."), loc)
}

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

// regexOp compiles text ~ pattern (and ~*, !~, !~*).
func (a *Analyzer) regexOp(op string, l, r expr.Expr, loc int32) (expr.Expr, error) {
	fold := strings.HasSuffix(op, "*")
	neg := strings.HasPrefix(op, "!")
	if c, ok := r.(*expr.ConstExpr); ok && !c.D.Null {
		re, err := expr.CompileRegex(c.D.S, fold)
		if err != nil {
			return nil, expr.PosErr(err.(*pgerr.Error), loc)
		}
		return a.foldBinop(&expr.BinopExpr{Op: op, T: types.TypeBool, L: l, R: r, Fn: func(_ *expr.EvalCtx, x, _ types.Datum) (types.Datum, error) {
			return types.BoolDatum(re.MatchString(x.S) != neg), nil
		}})
	}
	cache := &expr.RegexCache{}
	return &expr.BinopExpr{Op: op, T: types.TypeBool, L: l, R: r, Fn: func(_ *expr.EvalCtx, x, y types.Datum) (types.Datum, error) {
		re, err := cache.Get(y.S, fold)
		if err != nil {
			return types.Datum{}, err
		}
		return types.BoolDatum(re.MatchString(x.S) != neg), nil
	}}, nil
}
