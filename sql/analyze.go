package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// Column describes one result column.
type Column struct {
	Name     string
	Type     Type
	TableOID uint32
	Attnum   int16
}

// analyzer compiles parse-tree expressions into typed exprs over a
// query level's scope.
type analyzer struct {
	s        *Backend
	params   *[]Type
	sc       *scope     // the level's names; nil outside a query
	parentSc *scope     // the enclosing level of a query being compiled
	fold     evalCtx    // for folding constants at analysis time
	aggs     *[]*aggRef // where aggregates may appear, their list
	aggCtx   string     // clause name for "not allowed in ..." errors
	inAgg    bool       // inside an aggregate's arguments
	allowSRF bool       // a set-returning function may appear here
	// subquery compiles a subquery met in an expression (the planner's
	// compileSubquery): its plan, columns, and whether it reads the
	// enclosing level's row
	subquery func(a *analyzer, sel *pg.SelectStmt) (subplan, []Column, bool, error)
	// trees, when set, receives PostgreSQL's analysed form of each node
	// analysed (nodetree.go), for deparsing
	trees map[*pg.Node]*treeNode
	// keepUnknown: outputs of unknown type (NULL, 'text') stay unknown,
	// so the set operation this query is a branch of resolves them from
	// its other branches, as PostgreSQL does.
	keepUnknown bool
	ctes        *cteScope // WITH queries visible here
	// hiddenSc is the level a non-LATERAL subquery in FROM may not see
	// (only for the "cannot be referenced from this part" hint)
	hiddenSc *scope
	// inheritLock is the FOR UPDATE clause of the query a subquery in
	// FROM belongs to, which locks the subquery's tables too
	inheritLock *lockSpec
}

// newExprAnalyzer returns an analyzer of expressions; one that may meet
// subqueries needs its subquery hook set (newAnalyzer does).
func newExprAnalyzer(s *Backend, params *[]Type) *analyzer {
	a := &analyzer{s: s, params: params}
	a.fold.s = s
	return a
}

// level returns an analyzer for expressions of the query level sc, with
// aggregates not allowed.
func (a *analyzer) level(sc *scope) *analyzer {
	return &analyzer{s: a.s, params: a.params, sc: sc, parentSc: sc.parent, fold: a.fold, keepUnknown: a.keepUnknown, ctes: a.ctes, subquery: a.subquery}
}

// childWith returns an analyzer for a query nested in the level parent.
func (a *analyzer) childWith(parent *scope) *analyzer {
	return &analyzer{s: a.s, params: a.params, parentSc: parent, fold: a.fold, ctes: a.ctes, subquery: a.subquery}
}

// noAggs is a copy of a for a clause where aggregates are not allowed.
func (a *analyzer) noAggs(clause string) *analyzer {
	c := *a
	c.aggs, c.aggCtx, c.allowSRF = nil, clause, false
	return &c
}

// singleTable sets up a's scope for a statement over one table's rows
// (UPDATE, DELETE): row positions are the source's column positions. It
// returns the one-item FROM clause it made.
func singleTable(a *analyzer, src rowSource, alias string) *fromBuilder {
	sc := newScope(nil)
	fb := &fromBuilder{a: a, sc: sc}
	_, _ = fb.addLeaf(src, alias, nil, len(src.columns())-numSysCols, nil, -1)
	a.sc = sc
	return fb
}

func posErr(e *pgerr.Error, loc int32) *pgerr.Error {
	if loc >= 0 && e.Position == 0 {
		e.Position = loc + 1
	}
	return e
}

func isUnknown(e expr) bool { return e.typ().OID == OIDUnknown || e.typ().OID == 0 }

// coerceUnknown gives an unknown literal or parameter the type t.
func (a *analyzer) coerceUnknown(e expr, t Type) (expr, error) {
	switch x := e.(type) {
	case *paramExpr:
		if (*a.params)[x.n].OID == 0 || (*a.params)[x.n].OID == OIDUnknown {
			(*a.params)[x.n] = t
		}
		return a.castTo(x, t, false)
	case *constExpr:
		if x.d.Null {
			return &constExpr{t: t, d: NullDatum}, nil
		}
		a.noteFold(t)
		d, err := parseText(t, x.d.S, a.fold.formatCtx())
		if err != nil {
			return nil, err
		}
		return &constExpr{t: t, d: d}, nil
	}
	return a.castTo(e, t, false)
}

// noteFold records that a constant of type t was folded at analysis time.
// Date and time values can depend on the clock ('now') and the session's
// TimeZone, so a plan holding one must not be reused from a cache.
func (a *analyzer) noteFold(t Type) {
	if categoryOf(t) == catDatetime || t.OID == OIDInterval {
		a.s.foldedVolatile = true
	}
}

// castTo converts e to t, folding constants.
func (a *analyzer) castTo(e expr, t Type, explicit bool) (expr, error) {
	from := e.typ()
	if from.OID == t.OID && (t.Mod < 0 || from.Mod == t.Mod) {
		return e, nil
	}
	if from.OID == OIDUnknown || from.OID == 0 {
		if p, ok := e.(*paramExpr); ok {
			(*a.params)[p.n] = t
			return p, nil
		}
	}
	if c, ok := e.(*constExpr); ok {
		if c.d.Null {
			return &constExpr{t: t, d: NullDatum}, nil
		}
		a.noteFold(t)
		a.noteFold(from)
		d, err := castDatum(a.fold.formatCtx(), c.d, from, t, explicit)
		if err != nil {
			return nil, err
		}
		return &constExpr{t: t, d: d}, nil
	}
	if !castable(from, t) {
		return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from.Name, t.Name)
	}
	return &castExpr{arg: e, t: t, explicit: explicit}, nil
}

func castable(from, to Type) bool {
	if fe, ok := elemOf(from); ok {
		if te, ok := elemOf(to); ok {
			return castable(fe, te)
		}
	}
	fc, tc := categoryOf(from), categoryOf(to)
	switch {
	case tc == catString || fc == catString || fc == catUnknown:
		return true
	case (fc == catInt || fc == catFloat || fc == catNumeric) && (tc == catInt || tc == catFloat || tc == catNumeric):
		return true
	case fc == catDatetime && tc == catDatetime:
		return true
	case from.OID == OIDInt4 && tc == catBool, fc == catBool && to.OID == OIDInt4:
		return true
	}
	return from.OID == to.OID
}

// assignable reports whether from converts to to in an assignment
// (INSERT and UPDATE values, EXECUTE's parameters): PostgreSQL's implicit
// and assignment casts, which leave out the explicit-only ones castable
// also allows (text to a number, boolean to integer and back).
func assignable(from, to Type) bool {
	if fe, ok := elemOf(from); ok {
		if te, ok := elemOf(to); ok {
			return assignable(fe, te)
		}
	}
	fc, tc := categoryOf(from), categoryOf(to)
	switch {
	case fc == catUnknown || tc == catString:
		return true // string types take any value's text (an I/O cast)
	case fc == catString:
		return false
	case from.OID == OIDInt4 && tc == catBool, fc == catBool && to.OID == OIDInt4:
		return false
	}
	return castable(from, to)
}

// finishParams gives still-untyped parameters the type text, as
// PostgreSQL resolves unknown to text in output positions.
func finishParams(params []Type) {
	for i := range params {
		if params[i].OID == 0 || params[i].OID == OIDUnknown {
			params[i] = TypeText
		}
	}
}

// resolveOutput turns unknown-typed output expressions into text.
func (a *analyzer) resolveOutput(e expr) (expr, error) {
	if isUnknown(e) && !a.keepUnknown {
		return a.coerceUnknown(e, TypeText)
	}
	return e, nil
}

func nodeName(n *pg.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

func qualifiedName(nodes []*pg.Node) (schema, name string) {
	switch len(nodes) {
	case 0:
		return "", ""
	case 1:
		return "", nodeName(nodes[0])
	default:
		return nodeName(nodes[len(nodes)-2]), nodeName(nodes[len(nodes)-1])
	}
}

// expr compiles one expression node.
func (a *analyzer) expr(n *pg.Node) (expr, error) {
	e, err := a.exprNode(n)
	if err == nil && a.trees != nil {
		a.recordTree(n, e)
	}
	return e, err
}

func (a *analyzer) exprNode(n *pg.Node) (expr, error) {
	switch {
	case n.GetAConst() != nil:
		return a.constant(n.GetAConst())
	case n.GetParamRef() != nil:
		p := n.GetParamRef()
		idx := int(p.Number) - 1
		if idx < 0 || idx >= 65535 {
			return nil, posErr(pgerr.New(pgerr.UndefinedParameter, "there is no parameter $%d", p.Number), p.Location)
		}
		for len(*a.params) <= idx {
			*a.params = append(*a.params, Type{})
		}
		return &paramExpr{n: idx, types: a.params}, nil
	case n.GetColumnRef() != nil:
		return a.columnRef(n.GetColumnRef())
	case n.GetAExpr() != nil:
		return a.aexpr(n.GetAExpr())
	case n.GetBoolExpr() != nil:
		b := n.GetBoolExpr()
		be := &boolExpr{op: b.Boolop}
		for _, arg := range b.Args {
			e, err := a.expr(arg)
			if err != nil {
				return nil, err
			}
			if e, err = a.asBool(e, boolOpName(b.Boolop), b.Location); err != nil {
				return nil, err
			}
			be.args = append(be.args, e)
		}
		return be, nil
	case n.GetNullTest() != nil:
		t := n.GetNullTest()
		e, err := a.expr(t.Arg)
		if err != nil {
			return nil, err
		}
		return &nullTestExpr{arg: e, isNull: t.Nulltesttype == pg.NullTestType_IS_NULL}, nil
	case n.GetBooleanTest() != nil:
		t := n.GetBooleanTest()
		e, err := a.expr(t.Arg)
		if err != nil {
			return nil, err
		}
		if e, err = a.asBool(e, "IS", t.Location); err != nil {
			return nil, err
		}
		return &boolTestExpr{arg: e, kind: t.Booltesttype}, nil
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		t, err := a.typeName(tc.TypeName)
		if err != nil {
			return nil, err
		}
		e, err := a.expr(tc.Arg)
		if err != nil {
			return nil, err
		}
		loc := exprLocation(n)
		if isUnknown(e) {
			if c, ok := e.(*constExpr); ok && !c.d.Null {
				a.noteFold(t)
				var d Datum
				if t.OID == OIDBpchar || t.OID == OIDVarchar {
					d, err = coerceString(t, c.d.S, true)
				} else {
					d, err = parseText(t, c.d.S, a.fold.formatCtx())
				}
				if err != nil {
					return nil, posErr(pgerr.From(err), loc)
				}
				return &constExpr{t: t, d: d}, nil
			}
		}
		r, err := a.castTo(e, t, true)
		if err != nil {
			// a constant that does not convert points at itself, a cast
			// that does not exist at the ::
			if pe := pgerr.From(err); pe.Code == pgerr.CannotCoerce {
				return nil, posErr(pe, tc.Location)
			}
			return nil, posErr(pgerr.From(err), loc)
		}
		return r, nil
	case n.GetFuncCall() != nil:
		return a.funcCall(n.GetFuncCall())
	case n.GetSqlvalueFunction() != nil:
		return a.sqlValueFunction(n.GetSqlvalueFunction())
	case n.GetCaseExpr() != nil:
		return a.caseExpr(n.GetCaseExpr())
	case n.GetCoalesceExpr() != nil:
		c := n.GetCoalesceExpr()
		args, t, err := a.commonArgs(c.Args, "COALESCE", c.Location)
		if err != nil {
			return nil, err
		}
		return &coalesceExpr{t: t, args: args}, nil
	case n.GetMinMaxExpr() != nil:
		m := n.GetMinMaxExpr()
		name := "GREATEST"
		if m.Op == pg.MinMaxOp_IS_LEAST {
			name = "LEAST"
		}
		args, t, err := a.commonArgs(m.Args, name, m.Location)
		if err != nil {
			return nil, err
		}
		return minMax(args, t, m.Op == pg.MinMaxOp_IS_GREATEST), nil
	case n.GetGroupingSet() != nil:
		return nil, posErr(pgerr.NotSupported("GROUPING SETS, ROLLUP and CUBE are not supported"), n.GetGroupingSet().Location)
	case n.GetAArrayExpr() != nil:
		ae := n.GetAArrayExpr()
		args, t, err := a.commonArgs(ae.Elements, "ARRAY", ae.Location)
		if err != nil {
			return nil, err
		}
		at, ok := arrayOf(t)
		if !ok {
			return nil, pgerr.NotSupported("arrays of type %s are not supported", t.Name)
		}
		return &funcExpr{name: "array", t: at, args: args, nonStrict: true, fn: func(_ *evalCtx, vals []Datum) (Datum, error) {
			return Datum{A: append([]Datum(nil), vals...)}, nil
		}}, nil
	case n.GetSubLink() != nil:
		return a.sublink(n.GetSubLink())
	case n.GetCollateClause() != nil:
		return a.collate(n.GetCollateClause())
	case n.GetAIndirection() != nil:
		return a.indirection(n.GetAIndirection())
	case n.GetRowExpr() != nil:
		return a.rowExpr(n.GetRowExpr())
	}
	return nil, pgerr.NotSupported("expression %s is not supported", nodeKind(n))
}

func boolOpName(op pg.BoolExprType) string {
	switch op {
	case pg.BoolExprType_AND_EXPR:
		return "AND"
	case pg.BoolExprType_OR_EXPR:
		return "OR"
	}
	return "NOT"
}

// asBool requires a boolean (resolving unknowns to bool).
func (a *analyzer) asBool(e expr, ctxName string, loc int32) (expr, error) {
	if isUnknown(e) {
		return a.coerceUnknown(e, TypeBool)
	}
	if e.typ().OID != OIDBool {
		return nil, posErr(pgerr.New(pgerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", ctxName, e.typ().Name), loc)
	}
	return e, nil
}

// nodeKind names a parse node for error messages.
func nodeKind(n *pg.Node) string {
	s := fmt.Sprintf("%T", n.GetNode())
	s = strings.TrimPrefix(s, "*pg_query.Node_")
	return s
}

func (a *analyzer) constant(c *pg.A_Const) (expr, error) {
	if c.Isnull {
		return &constExpr{t: TypeUnknown, d: NullDatum}, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return &constExpr{t: TypeInt4, d: intDatum(int64(v.Ival.Ival))}, nil
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		// Integers too large for int4 arrive as Fval: int8 if they fit.
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				if i >= math.MinInt32 && i <= math.MaxInt32 {
					// -2147483648: the grammar folds the sign into the constant
					return &constExpr{t: TypeInt4, d: intDatum(i)}, nil
				}
				return &constExpr{t: TypeInt8, d: intDatum(i)}, nil
			}
		}
		n, err := parseNumeric(s)
		if err != nil {
			return nil, posErr(invalidInput(TypeNumeric, s), c.Location)
		}
		return &constExpr{t: TypeNumeric, d: textDatum(n.String())}, nil
	case *pg.A_Const_Sval:
		return &constExpr{t: TypeUnknown, d: textDatum(v.Sval.Sval)}, nil
	case *pg.A_Const_Boolval:
		return &constExpr{t: TypeBool, d: boolDatum(v.Boolval.Boolval)}, nil
	case *pg.A_Const_Bsval:
		return nil, posErr(pgerr.NotSupported("bit string literals are not supported"), c.Location)
	}
	return nil, pgerr.NotSupported("constant is not supported")
}

func (a *analyzer) columnRef(c *pg.ColumnRef) (expr, error) {
	var names []string
	for _, f := range c.Fields {
		if f.GetAStar() != nil {
			return nil, posErr(pgerr.New(pgerr.SyntaxError, "* is not allowed here"), c.Location)
		}
		names = append(names, nodeName(f))
	}
	name := names[len(names)-1]
	qual := ""
	if len(names) > 1 {
		qual = names[len(names)-2]
	}
	if len(names) > 3 {
		return nil, posErr(pgerr.NotSupported("cross-database references are not implemented: %s", strings.Join(names, ".")), c.Location)
	}
	if a.sc == nil {
		if qual != "" {
			return nil, posErr(pgerr.New(pgerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", qual), c.Location)
		}
		return nil, posErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" does not exist", name), c.Location)
	}
	e, _, _, err := a.sc.lookupColumn(qual, name, c.Location)
	return e, err
}

func (a *analyzer) aexpr(x *pg.A_Expr) (expr, error) {
	op := ""
	if len(x.Name) > 0 {
		op = nodeName(x.Name[len(x.Name)-1])
	}
	switch x.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if x.Lexpr == nil {
			r, err := a.expr(x.Rexpr)
			if err != nil {
				return nil, err
			}
			switch op {
			case "-":
				if isUnknown(r) {
					return nil, posErr(pgerr.New(pgerr.AmbiguousFunction, "operator is not unique: - unknown").WithHint("Could not choose a best candidate operator. You might need to add explicit type casts."), x.Location)
				}
				switch categoryOf(r.typ()) {
				case catInt, catFloat, catNumeric:
				default:
					if r.typ().OID != OIDInterval {
						return nil, posErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: - %s", r.typ().Name).
							WithHint("No operator matches the given name and argument type. You might need to add an explicit type cast."), x.Location)
					}
				}
				if c, ok := r.(*constExpr); ok {
					d, err := (&negExpr{arg: c}).eval(&a.fold, nil)
					if err != nil {
						return nil, err
					}
					return &constExpr{t: c.t, d: d}, nil
				}
				return &negExpr{arg: r}, nil
			case "+":
				return r, nil
			case "|/", "||/", "@", "~":
				return a.prefixOp(op, r, x.Location)
			}
			return nil, posErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s", op, r.typ().Name), x.Location)
		}
		l, r, err := a.operands(x)
		if err != nil {
			return nil, err
		}
		return a.binop(op, l, r, x.Location)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		l, r, err := a.operands(x)
		if err != nil {
			return nil, err
		}
		return a.likeOp(op, l, r)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		return a.quantifiedArray(op, x)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return nil, posErr(pgerr.NotSupported("SIMILAR TO is not supported"), x.Location)
	case pg.A_Expr_Kind_AEXPR_IN:
		l, err := a.expr(x.Lexpr)
		if err != nil {
			return nil, err
		}
		list := x.Rexpr.GetList()
		if list == nil {
			return nil, pgerr.NotSupported("IN with a subquery is not supported")
		}
		items := []expr{l}
		for _, it := range list.Items {
			e, err := a.expr(it)
			if err != nil {
				return nil, err
			}
			items = append(items, e)
		}
		items, t, err := a.unify(items, "IN", x.Location)
		if err != nil {
			return nil, err
		}
		return &inExpr{arg: items[0], list: items[1:], cmp: comparator(t), not: op == "<>"}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
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
		var e expr = &boolExpr{op: pg.BoolExprType_OR_EXPR, args: []expr{one, two}}
		if x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
			e = &boolExpr{op: pg.BoolExprType_NOT_EXPR, args: []expr{e}}
		}
		return e, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		l, err := a.expr(x.Lexpr)
		if err != nil {
			return nil, err
		}
		bounds := x.Rexpr.GetList().GetItems()
		lo, err := a.expr(bounds[0])
		if err != nil {
			return nil, err
		}
		hi, err := a.expr(bounds[1])
		if err != nil {
			return nil, err
		}
		ge, err := a.binop(">=", l, lo, x.Location)
		if err != nil {
			return nil, err
		}
		le, err := a.binop("<=", l, hi, x.Location)
		if err != nil {
			return nil, err
		}
		var e expr = &boolExpr{op: pg.BoolExprType_AND_EXPR, args: []expr{ge, le}}
		if x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			e = &boolExpr{op: pg.BoolExprType_NOT_EXPR, args: []expr{e}}
		}
		return e, nil
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, r, err := a.operands(x)
		if err != nil {
			return nil, err
		}
		items, t, err := a.unify([]expr{l, r}, "IS DISTINCT FROM", x.Location)
		if err != nil {
			return nil, err
		}
		cmp := comparator(t)
		not := x.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT
		return &funcExpr{name: "distinct", t: TypeBool, args: items, nonStrict: true, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			var distinct bool
			switch {
			case v[0].Null && v[1].Null:
				distinct = false
			case v[0].Null || v[1].Null:
				distinct = true
			default:
				c, err := cmp(v[0], v[1])
				if err != nil {
					return Datum{}, err
				}
				distinct = c != 0
			}
			return boolDatum(distinct != not), nil
		}}, nil
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, r, err := a.operands(x)
		if err != nil {
			return nil, err
		}
		items, t, err := a.unify([]expr{l, r}, "NULLIF", x.Location)
		if err != nil {
			return nil, err
		}
		cmp := comparator(t)
		return &funcExpr{name: "nullif", t: t, args: items, nonStrict: true, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			if v[0].Null || v[1].Null {
				return v[0], nil
			}
			c, err := cmp(v[0], v[1])
			if err != nil || c == 0 {
				return NullDatum, err
			}
			return v[0], nil
		}}, nil
	}
	return nil, posErr(pgerr.NotSupported("operator kind %s is not supported", x.Kind.String()), x.Location)
}

// operands compiles both sides of a binary A_Expr.
func (a *analyzer) operands(x *pg.A_Expr) (expr, expr, error) {
	l, err := a.expr(x.Lexpr)
	if err != nil {
		return nil, nil, err
	}
	r, err := a.expr(x.Rexpr)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func (a *analyzer) toText(e expr) (expr, error) {
	if isUnknown(e) {
		return a.coerceUnknown(e, TypeText)
	}
	if categoryOf(e.typ()) == catString {
		if e.typ().OID == OIDBpchar {
			return a.castTo(e, TypeText, false)
		}
		return e, nil
	}
	return a.castTo(e, TypeText, false)
}

// unify resolves a list of expressions to one common type (CASE, IN,
// COALESCE, VALUES rules: unknowns take the type of the others; all
// unknown → text).
func (a *analyzer) unify(items []expr, ctxName string, loc int32) ([]expr, Type, error) {
	return a.unifyAt(items, nil, ctxName, loc)
}

// unifyAt is unify with the source position of each item (-1: unknown),
// so an error points at the item that caused it.
func (a *analyzer) unifyAt(items []expr, locs []int32, ctxName string, loc int32) ([]expr, Type, error) {
	at := func(i int) int32 {
		if i < len(locs) && locs[i] >= 0 {
			return locs[i]
		}
		return loc
	}
	// PostgreSQL's select_common_type: the first known type, replaced by
	// a later one only when the earlier converts to it implicitly and not
	// the other way (int4 → numeric → float8, date → timestamp →
	// timestamptz); string types keep the first. Differing typmods of the
	// chosen type are dropped.
	var t Type
	for i, e := range items {
		if isUnknown(e) {
			continue
		}
		et := e.typ()
		if t.OID == 0 {
			t = et
			continue
		}
		if t.OID == et.OID {
			if t.Mod != et.Mod {
				t.Mod = -1
			}
			continue
		}
		if c, ok := numericCommon(t, et); ok {
			t = c
			continue
		}
		if categoryOf(t) == catString && categoryOf(et) == catString {
			t.Mod = -1
			continue
		}
		if categoryOf(t) == catDatetime && categoryOf(et) == catDatetime {
			rank := map[uint32]int{OIDDate: 1, OIDTimestamp: 2, OIDTimestamptz: 3}
			if rank[et.OID] > rank[t.OID] {
				t = et
			}
			continue
		}
		if isOidLike(t) && isOidLike(et) {
			t = TypeOid
			continue
		}
		return nil, Type{}, posErr(pgerr.New(pgerr.DatatypeMismatch, "%s types %s and %s cannot be matched", ctxName, t.Name, et.Name), at(i))
	}
	if t.OID == 0 {
		if a.keepUnknown {
			return items, TypeUnknown, nil // a set operation's branch: the other branches decide
		}
		t = TypeText
	}
	out := make([]expr, len(items))
	for i, e := range items {
		var err error
		if isUnknown(e) {
			out[i], err = a.coerceUnknown(e, t)
		} else {
			out[i], err = a.castTo(e, t, false)
		}
		if err != nil {
			return nil, Type{}, posErr(pgerr.From(err), at(i))
		}
	}
	return out, t, nil
}

func (a *analyzer) commonArgs(nodes []*pg.Node, ctxName string, loc int32) ([]expr, Type, error) {
	var items []expr
	var locs []int32
	for _, n := range nodes {
		e, err := a.expr(n)
		if err != nil {
			return nil, Type{}, err
		}
		items = append(items, e)
		locs = append(locs, exprLocation(n))
	}
	return a.unifyAt(items, locs, ctxName, loc)
}

func isComparison(op string) bool {
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		return true
	}
	return false
}

// binop resolves an operator by its operand types.
func (a *analyzer) binop(op string, l, r expr, loc int32) (expr, error) {
	if lr, ok := l.(*rowExpr); ok && isComparison(op) {
		if rr, ok := r.(*rowExpr); ok {
			return a.rowCompare(op, lr, rr, loc)
		}
	}
	lu, ru := isUnknown(l), isUnknown(r)
	var err error
	switch {
	case lu && ru:
		if isComparison(op) || op == "||" || isTextOperator(op) {
			if l, err = a.coerceUnknown(l, TypeText); err != nil {
				return nil, err
			}
			if r, err = a.coerceUnknown(r, TypeText); err != nil {
				return nil, err
			}
		} else {
			return nil, posErr(pgerr.New(pgerr.AmbiguousFunction, "operator is not unique: unknown %s unknown", op).WithHint("Could not choose a best candidate operator. You might need to add explicit type casts."), loc)
		}
	case lu:
		target := r.typ()
		if op == "||" {
			target = TypeText
		}
		if l, err = a.coerceUnknown(l, target); err != nil {
			return nil, posErr(pgerr.From(err), loc)
		}
	case ru:
		target := l.typ()
		if op == "||" {
			target = TypeText
		}
		if r, err = a.coerceUnknown(r, target); err != nil {
			return nil, posErr(pgerr.From(err), loc)
		}
	}
	lt, rt := l.typ(), r.typ()
	noOp := func() (expr, error) {
		return nil, posErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s %s", lt.Name, op, rt.Name).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts."), loc)
	}
	switch op {
	case "+", "-", "*", "/", "%":
		if t, ok := numericCommon(lt, rt); ok {
			if l, err = a.castTo(l, t, false); err != nil {
				return nil, err
			}
			if r, err = a.castTo(r, t, false); err != nil {
				return nil, err
			}
			return a.foldBinop(&binopExpr{op: op, t: t, l: l, r: r, fn: arithFn(op, t)})
		}
		if e, ok := datetimeArith(op, l, r); ok {
			return e, nil
		}
		if e, ok := dateArith(op, l, r); ok {
			return a.foldBinop(e.(*binopExpr))
		}
		return noOp()
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		var t Type
		switch {
		case lt.OID == rt.OID:
			t = lt
		case categoryOf(lt) == catString && categoryOf(rt) == catString:
			t = TypeText
		case categoryOf(lt) == catDatetime && categoryOf(rt) == catDatetime:
			t = TypeTimestamptz
		case isOidLike(lt) && isOidLike(rt):
			t = TypeOid
		default:
			c, ok := numericCommon(lt, rt)
			if !ok {
				return noOp()
			}
			t = c
		}
		if l, err = a.castTo(l, t, false); err != nil {
			return nil, err
		}
		if r, err = a.castTo(r, t, false); err != nil {
			return nil, err
		}
		return a.foldBinop(&binopExpr{op: op, t: TypeBool, l: l, r: r, fn: cmpFn(op, t)})
	case "||":
		if e, ok, err := a.arrayConcat(l, r, loc); ok || err != nil {
			return e, err
		}
		if categoryOf(lt) != catString && categoryOf(rt) != catString {
			return noOp() // text || anything needs a string on one side
		}
		if l, err = a.toText(l); err != nil {
			return nil, err
		}
		if r, err = a.toText(r); err != nil {
			return nil, err
		}
		return a.foldBinop(&binopExpr{op: op, t: TypeText, l: l, r: r, fn: func(_ *evalCtx, x, y Datum) (Datum, error) {
			return textDatum(x.S + y.S), nil
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
func (a *analyzer) foldBinop(b *binopExpr) (expr, error) {
	_, lc := b.l.(*constExpr)
	_, rc := b.r.(*constExpr)
	if lc && rc {
		d, err := b.eval(&a.fold, nil)
		if err != nil {
			return nil, err
		}
		return &constExpr{t: b.t, d: d}, nil
	}
	return b, nil
}

func datetimeArith(op string, l, r expr) (expr, bool) {
	lt, rt := l.typ(), r.typ()
	isTS := func(t Type) bool { return t.OID == OIDTimestamp || t.OID == OIDTimestamptz }
	switch {
	case isTS(lt) && rt.OID == OIDInterval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return &binopExpr{op: op, t: lt, l: l, r: r, fn: func(_ *evalCtx, a, b Datum) (Datum, error) {
			return intDatum(a.I + sign*b.I), nil
		}}, true
	case lt.OID == OIDInterval && isTS(rt) && op == "+":
		return &binopExpr{op: op, t: rt, l: l, r: r, fn: func(_ *evalCtx, a, b Datum) (Datum, error) {
			return intDatum(a.I + b.I), nil
		}}, true
	case isTS(lt) && lt.OID == rt.OID && op == "-":
		return &binopExpr{op: op, t: TypeInterval, l: l, r: r, fn: func(_ *evalCtx, a, b Datum) (Datum, error) {
			return intDatum(a.I - b.I), nil
		}}, true
	case lt.OID == OIDInterval && rt.OID == OIDInterval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return &binopExpr{op: op, t: TypeInterval, l: l, r: r, fn: func(_ *evalCtx, a, b Datum) (Datum, error) {
			return intDatum(a.I + sign*b.I), nil
		}}, true
	}
	return nil, false
}

func (a *analyzer) caseExpr(c *pg.CaseExpr) (expr, error) {
	var arg expr
	var err error
	if c.Arg != nil {
		if arg, err = a.expr(c.Arg); err != nil {
			return nil, err
		}
	}
	ce := &caseExpr{}
	var results []expr
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := a.expr(cw.Expr)
		if err != nil {
			return nil, err
		}
		if arg != nil {
			if cond, err = a.binop("=", arg, cond, cw.Location); err != nil {
				return nil, err
			}
		} else if cond, err = a.asBool(cond, "CASE/WHEN", cw.Location); err != nil {
			return nil, err
		}
		ce.whens = append(ce.whens, cond)
		res, err := a.expr(cw.Result)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	if c.Defresult != nil {
		d, err := a.expr(c.Defresult)
		if err != nil {
			return nil, err
		}
		results = append(results, d)
	}
	results, t, err := a.unify(results, "CASE", c.Location)
	if err != nil {
		return nil, err
	}
	ce.t = t
	ce.results = results[:len(ce.whens)]
	if c.Defresult != nil {
		ce.def = results[len(results)-1]
	}
	return ce, nil
}

func minMax(args []expr, t Type, greatest bool) expr {
	cmp := comparator(t)
	name := "least"
	if greatest {
		name = "greatest"
	}
	return &funcExpr{name: name, t: t, args: args, nonStrict: true, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
		best := NullDatum
		for _, d := range v {
			if d.Null {
				continue
			}
			if best.Null {
				best = d
				continue
			}
			c, err := cmp(d, best)
			if err != nil {
				return Datum{}, err
			}
			if (greatest && c > 0) || (!greatest && c < 0) {
				best = d
			}
		}
		return best, nil
	}}
}

// typeName resolves a TypeName node.
func (a *analyzer) typeName(tn *pg.TypeName) (Type, error) {
	_, name := qualifiedName(tn.Names)
	name = strings.ToLower(name)
	var mods []int32
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil {
			return Type{}, posErr(pgerr.New(pgerr.SyntaxError, "type modifiers must be simple constants or identifiers"), tn.Location)
		}
		iv, ok := c.Val.(*pg.A_Const_Ival)
		if !ok {
			return Type{}, posErr(pgerr.New(pgerr.SyntaxError, "type modifiers must be simple constants or identifiers"), tn.Location)
		}
		mods = append(mods, iv.Ival.Ival)
	}
	t, ok := lookupType(name)
	if !ok {
		return Type{}, posErr(pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name), tn.Location)
	}
	mod, err := typmodFor(t, mods)
	if err != nil {
		return Type{}, posErr(err.(*pgerr.Error), tn.Location)
	}
	t.Mod = mod
	if len(tn.ArrayBounds) > 0 {
		at, ok := arrayOf(t)
		if !ok {
			return Type{}, pgerr.NotSupported("arrays of type %s are not supported", t.Name)
		}
		return at, nil
	}
	return t, nil
}

// lookupType maps a type name as the grammar delivers it (int4, bpchar,
// varchar, ... or a name a user wrote) to its type.
func lookupType(name string) (Type, bool) {
	if strings.HasSuffix(name, "[]") {
		e, ok := lookupType(strings.TrimSuffix(name, "[]"))
		if !ok {
			return Type{}, false
		}
		return arrayOf(e)
	}
	if strings.HasPrefix(name, "_") {
		if e, ok := lookupType(name[1:]); ok {
			return arrayOf(e)
		}
	}
	switch name {
	case "bool", "boolean":
		return TypeBool, true
	case "int2", "smallint":
		return TypeInt2, true
	case "int4", "int", "integer", "serial":
		return TypeInt4, true
	case "int8", "bigint", "bigserial":
		return TypeInt8, true
	case "float8", "double precision", "float":
		return TypeFloat8, true
	case "float4", "real":
		return TypeFloat4, true
	case "numeric", "decimal":
		return TypeNumeric, true
	case "text":
		return TypeText, true
	case "varchar", "character varying":
		return TypeVarchar, true
	case "bpchar", "character":
		return TypeBpchar, true
	case "char", "\"char\"":
		return TypeChar, true
	case "name":
		return TypeName, true
	case "oid":
		return TypeOid, true
	case "tid":
		return TypeTid, true
	case "regclass":
		return TypeRegclass, true
	case "regtype":
		return TypeRegtype, true
	case "regproc":
		return TypeRegproc, true
	case "regnamespace":
		return TypeRegnsp, true
	case "regrole":
		return TypeRegrole, true
	case "xid":
		return TypeXid, true
	case "timestamptz", "timestamp with time zone":
		return TypeTimestamptz, true
	case "timestamp", "timestamp without time zone":
		return TypeTimestamp, true
	case "date":
		return TypeDate, true
	case "interval":
		return TypeInterval, true
	case "unknown":
		return TypeUnknown, true
	case "pg_node_tree":
		return TypeNodeTree, true
	}
	return Type{}, false
}

// typmodFor computes the typmod of t(mods...) as PostgreSQL's typmodin
// functions do.
func typmodFor(t Type, mods []int32) (int32, error) {
	switch t.OID {
	case OIDBpchar, OIDVarchar:
		if len(mods) == 0 {
			return -1, nil // (the grammar gives CHAR without a length its (1))
		}
		if len(mods) > 1 {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid type modifier")
		}
		if mods[0] < 1 {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "length for type %s must be at least 1", map[uint32]string{OIDBpchar: "char", OIDVarchar: "varchar"}[t.OID])
		}
		return mods[0] + 4, nil
	case OIDNumeric:
		switch len(mods) {
		case 0:
			return -1, nil
		case 1, 2:
			p, sc := mods[0], int32(0)
			if len(mods) == 2 {
				sc = mods[1]
			}
			if p < 1 || p > 1000 {
				return 0, pgerr.New(pgerr.InvalidParameterValue, "NUMERIC precision %d must be between 1 and 1000", p)
			}
			if sc < -1000 || sc > 1000 {
				return 0, pgerr.New(pgerr.InvalidParameterValue, "NUMERIC scale %d must be between -1000 and 1000", sc)
			}
			return (p<<16 | sc&0xffff) + 4, nil
		}
		return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid NUMERIC type modifier")
	case OIDTimestamp, OIDTimestamptz, OIDInterval:
		if len(mods) == 1 && mods[0] >= 0 && mods[0] <= 6 {
			return mods[0], nil
		}
	}
	if len(mods) > 0 {
		return 0, pgerr.New(pgerr.SyntaxError, "type modifier is not allowed for type \"%s\"", t.Name)
	}
	return -1, nil
}

// outputName is the column name PostgreSQL gives an unnamed target
// (FigureColname).
func outputName(n *pg.Node) string {
	name, _ := figureColname(n)
	if name == "" {
		return "?column?"
	}
	return name
}

// figureColname returns a name for n and how strongly it holds: 2 for a
// column or function name, 1 for a type name from a cast (which a
// stronger inner name beats), 0 for none.
func figureColname(n *pg.Node) (string, int) {
	switch {
	case n == nil:
		return "", 0
	case n.GetColumnRef() != nil:
		f := n.GetColumnRef().Fields
		if f[len(f)-1].GetAStar() != nil {
			if len(f) > 1 {
				return nodeName(f[len(f)-2]), 2
			}
			return "", 0
		}
		return nodeName(f[len(f)-1]), 2
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		for i := len(ind.Indirection) - 1; i >= 0; i-- {
			if s := ind.Indirection[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
		return figureColname(ind.Arg)
	case n.GetFuncCall() != nil:
		_, name := qualifiedName(n.GetFuncCall().Funcname)
		return name, 2
	case n.GetAExpr() != nil:
		if n.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		if name, strength := figureColname(tc.Arg); strength > 1 {
			return name, strength
		}
		_, name := qualifiedName(tc.TypeName.Names)
		switch name {
		case "int", "integer":
			name = "int4"
		case "bigint":
			name = "int8"
		case "smallint":
			name = "int2"
		case "boolean":
			name = "bool"
		case "double precision":
			name = "float8"
		case "real":
			name = "float4"
		case "character", "char":
			name = "bpchar"
		}
		return name, 1
	case n.GetCollateClause() != nil:
		return figureColname(n.GetCollateClause().Arg)
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg.SubLinkType_EXPR_SUBLINK:
			if sel := sl.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) > 0 {
				rt := sel.TargetList[0].GetResTarget()
				if rt.Name != "" {
					return rt.Name, 2
				}
				return figureColname(rt.Val)
			}
		}
	case n.GetSqlvalueFunction() != nil:
		return sqlValueFunctionName(n.GetSqlvalueFunction().Op), 2
	case n.GetCaseExpr() != nil:
		if name, strength := figureColname(n.GetCaseExpr().Defresult); strength > 1 {
			return name, strength
		}
		return "case", 1
	case n.GetCoalesceExpr() != nil:
		return "coalesce", 2
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg.MinMaxOp_IS_GREATEST {
			return "greatest", 2
		}
		return "least", 2
	case n.GetAArrayExpr() != nil:
		return "array", 2
	}
	return "", 0
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

// exprLocation is the leftmost source position of an expression node
// (PostgreSQL's exprLocation), or -1.
func exprLocation(n *pg.Node) int32 {
	if n == nil {
		return -1
	}
	min := func(a, b int32) int32 {
		if a < 0 || (b >= 0 && b < a) {
			return b
		}
		return a
	}
	switch {
	case n.GetAConst() != nil:
		return n.GetAConst().Location
	case n.GetColumnRef() != nil:
		return n.GetColumnRef().Location
	case n.GetParamRef() != nil:
		return n.GetParamRef().Location
	case n.GetFuncCall() != nil:
		return n.GetFuncCall().Location
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		return min(exprLocation(tc.Arg), tc.Location)
	case n.GetAExpr() != nil:
		x := n.GetAExpr()
		return min(exprLocation(x.Lexpr), x.Location)
	case n.GetBoolExpr() != nil:
		return n.GetBoolExpr().Location
	case n.GetSubLink() != nil:
		return n.GetSubLink().Location
	case n.GetCaseExpr() != nil:
		return n.GetCaseExpr().Location
	case n.GetRowExpr() != nil:
		return n.GetRowExpr().Location
	case n.GetAArrayExpr() != nil:
		return n.GetAArrayExpr().Location
	case n.GetCollateClause() != nil:
		return min(exprLocation(n.GetCollateClause().Arg), n.GetCollateClause().Location)
	case n.GetNullTest() != nil:
		return min(exprLocation(n.GetNullTest().Arg), n.GetNullTest().Location)
	}
	return -1
}

// likeOp compiles LIKE (~~), ILIKE (~~*) and their negations.
func (a *analyzer) likeOp(op string, l, r expr) (expr, error) {
	var err error
	if l, err = a.toText(l); err != nil {
		return nil, err
	}
	if r, err = a.toText(r); err != nil {
		return nil, err
	}
	fold := strings.HasSuffix(op, "*")
	neg := strings.HasPrefix(op, "!")
	return a.foldBinop(&binopExpr{op: op, t: TypeBool, l: l, r: r, fn: func(_ *evalCtx, a, b Datum) (Datum, error) {
		return boolDatum(likeMatch(a.S, b.S, fold) != neg), nil
	}})
}

// arrayConcat compiles || with an array operand: array || array,
// array || element, element || array.
func (a *analyzer) arrayConcat(l, r expr, loc int32) (expr, bool, error) {
	la, ra := isArray(l.typ()), isArray(r.typ())
	if !la && !ra {
		return nil, false, nil
	}
	at := l.typ()
	if !la {
		at = r.typ()
	}
	elem, _ := elemOf(at)
	var err error
	conv := func(e expr, asArray bool) (expr, error) {
		want := elem
		if asArray {
			want = at
		}
		if isUnknown(e) {
			return a.coerceUnknown(e, want)
		}
		return a.castTo(e, want, false)
	}
	// an unknown literal next to an array is an array literal
	la, ra = la || isUnknown(l), ra || isUnknown(r)
	if l, err = conv(l, la); err != nil {
		return nil, true, posErr(pgerr.From(err), loc)
	}
	if r, err = conv(r, ra); err != nil {
		return nil, true, posErr(pgerr.From(err), loc)
	}
	return &funcExpr{name: "array_cat", t: at, args: []expr{l, r}, nonStrict: true, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
		var out []Datum
		for i, d := range v {
			isArr := (i == 0 && la) || (i == 1 && ra)
			switch {
			case isArr && d.Null:
			case isArr:
				out = append(out, d.A...)
			default:
				out = append(out, d)
			}
		}
		if out == nil {
			if la && ra && v[0].Null && v[1].Null {
				return NullDatum, nil
			}
			out = []Datum{}
		}
		return Datum{A: out}, nil
	}}, true, nil
}

// numericOp compiles ^ (power) and the integer bitwise operators.
func (a *analyzer) numericOp(op string, l, r expr, loc int32, noOp func() (expr, error)) (expr, error) {
	lt, rt := l.typ(), r.typ()
	var err error
	if op == "^" {
		t := TypeFloat8
		if categoryOf(lt) == catNumeric || categoryOf(rt) == catNumeric {
			if categoryOf(lt) != catFloat && categoryOf(rt) != catFloat {
				t = TypeNumeric
			}
		}
		if categoryOf(lt) != catInt && categoryOf(lt) != catNumeric && categoryOf(lt) != catFloat ||
			categoryOf(rt) != catInt && categoryOf(rt) != catNumeric && categoryOf(rt) != catFloat {
			return noOp()
		}
		if l, err = a.castTo(l, t, false); err != nil {
			return nil, err
		}
		if r, err = a.castTo(r, t, false); err != nil {
			return nil, err
		}
		return a.foldBinop(&binopExpr{op: op, t: t, l: l, r: r, fn: func(_ *evalCtx, x, y Datum) (Datum, error) {
			if t.OID == OIDNumeric {
				p, err := mustNumeric(x.S).pow(mustNumeric(y.S))
				if err != nil {
					return Datum{}, err
				}
				return textDatum(p.String()), nil
			}
			if x.F == 0 && y.F < 0 {
				return Datum{}, pgerr.New("2201F", "zero raised to a negative power is undefined")
			}
			if x.F < 0 && y.F != math.Trunc(y.F) {
				return Datum{}, pgerr.New("2201F", "a negative number raised to a non-integer power yields a complex result")
			}
			v := math.Pow(x.F, y.F)
			if math.IsInf(v, 0) {
				return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
			}
			return floatDatum(v), nil
		}})
	}
	if categoryOf(lt) != catInt || categoryOf(rt) != catInt {
		return noOp()
	}
	t := widerInt(lt, rt)
	if op == "<<" || op == ">>" {
		t = lt
		if r, err = a.castTo(r, TypeInt4, false); err != nil {
			return nil, err
		}
	} else {
		if l, err = a.castTo(l, t, false); err != nil {
			return nil, err
		}
		if r, err = a.castTo(r, t, false); err != nil {
			return nil, err
		}
	}
	return a.foldBinop(&binopExpr{op: op, t: t, l: l, r: r, fn: func(_ *evalCtx, x, y Datum) (Datum, error) {
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
		case OIDInt2:
			v = int64(int16(v))
		case OIDInt4:
			v = int64(int32(v))
		}
		return intDatum(v), nil
	}})
}

// collate compiles expr COLLATE name. lockd compares strings bytewise,
// which is the C collation; the collations it knows all mean that
// ordering here (see the README).
func (a *analyzer) collate(cc *pg.CollateClause) (expr, error) {
	e, err := a.expr(cc.Arg)
	if err != nil {
		return nil, err
	}
	_, name := qualifiedName(cc.Collname)
	switch name {
	case "default", "C", "POSIX", "ucs_basic", "C.UTF-8", "C.utf8":
	default:
		return nil, posErr(pgerr.New(pgerr.UndefinedObject, "collation \"%s\" for encoding \"UTF8\" does not exist", name), cc.Location)
	}
	if !isUnknown(e) && categoryOf(e.typ()) != catString {
		return nil, posErr(pgerr.New(pgerr.DatatypeMismatch, "collations are not supported by type %s", e.typ().Name), cc.Location)
	}
	return e, nil
}

// prefixOp compiles the prefix operators |/ (square root), ||/ (cube
// root), @ (absolute value) and ~ (bitwise not).
func (a *analyzer) prefixOp(op string, r expr, loc int32) (expr, error) {
	var err error
	if isUnknown(r) {
		if r, err = a.coerceUnknown(r, TypeFloat8); err != nil {
			return nil, err
		}
	}
	rt := r.typ()
	cat := categoryOf(rt)
	switch op {
	case "|/", "||/":
		if cat != catInt && cat != catNumeric && cat != catFloat {
			break
		}
		if r, err = a.castTo(r, TypeFloat8, false); err != nil {
			return nil, err
		}
		return &funcExpr{name: op, t: TypeFloat8, args: []expr{r}, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			if op == "||/" {
				return floatDatum(math.Cbrt(v[0].F)), nil
			}
			if v[0].F < 0 {
				return Datum{}, pgerr.New("2201F", "cannot take square root of a negative number")
			}
			return floatDatum(math.Sqrt(v[0].F)), nil
		}}, nil
	case "@":
		if cat != catInt && cat != catNumeric && cat != catFloat {
			break
		}
		return &funcExpr{name: op, t: rt, args: []expr{r}, fn: func(ec *evalCtx, v []Datum) (Datum, error) {
			switch cat {
			case catFloat:
				return floatDatum(math.Abs(v[0].F)), nil
			case catNumeric:
				return textDatum(strings.TrimPrefix(v[0].S, "-")), nil
			}
			if v[0].I < 0 {
				return (&negExpr{arg: &constExpr{t: rt, d: v[0]}}).eval(ec, nil)
			}
			return v[0], nil
		}}, nil
	case "~":
		if cat != catInt {
			break
		}
		return &funcExpr{name: op, t: rt, args: []expr{r}, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			return intDatum(^v[0].I), nil
		}}, nil
	}
	return nil, posErr(pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s", op, rt.Name).
		WithHint("No operator matches the given name and argument type. You might need to add an explicit type cast."), loc)
}
