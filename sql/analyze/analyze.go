package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// analyzer compiles parse-tree expressions into typed exprs over a
// query level's scope.
type Analyzer struct {
	S        *expr.Backend
	params   *[]types.Type
	Sc       *Scope          // the level's names; nil outside a query
	ParentSc *Scope          // the enclosing level of a query being compiled
	Fold     expr.EvalCtx    // for folding constants at analysis time
	Aggs     *[]*expr.AggRef // where aggregates may appear, their list
	AggCtx   string          // clause name for "not allowed in ..." errors
	inAgg    bool            // inside an aggregate's arguments
	AllowSRF bool            // a set-returning function may appear here
	// subquery compiles a subquery met in an expression (the planner's
	// compileSubquery): its plan, columns, and whether it reads the
	// enclosing level's row
	Subquery func(a *Analyzer, sel *pg.SelectStmt) (expr.Subplan, []types.Column, bool, error)
	// trees, when set, receives PostgreSQL's analysed form of each node
	// analysed (nodetree.go), for deparsing
	trees map[*pg.Node]*treeNode
	// keepUnknown: outputs of unknown type (NULL, 'text') stay unknown,
	// so the set operation this query is a branch of resolves them from
	// its other branches, as PostgreSQL does.
	KeepUnknown bool
	Ctes        *CteScope // WITH queries visible here
	// hiddenSc is the level a non-LATERAL subquery in FROM may not see
	// (only for the "cannot be referenced from this part" hint)
	HiddenSc *Scope
	// inheritLock is the FOR UPDATE clause of the query a subquery in
	// FROM belongs to, which locks the subquery's tables too
	InheritLock *LockSpec
}

// newExprAnalyzer returns an analyzer of expressions; one that may meet
// subqueries needs its subquery hook set (newAnalyzer does).
func NewExprAnalyzer(s *expr.Backend, params *[]types.Type) *Analyzer {
	a := &Analyzer{S: s, params: params}
	a.Fold.S = s
	return a
}

// level returns an analyzer for expressions of the query level sc, with
// aggregates not allowed.
func (a *Analyzer) Level(sc *Scope) *Analyzer {
	return &Analyzer{S: a.S, params: a.params, Sc: sc, ParentSc: sc.Parent, Fold: a.Fold, KeepUnknown: a.KeepUnknown, Ctes: a.Ctes, Subquery: a.Subquery}
}

// childWith returns an analyzer for a query nested in the level parent.
func (a *Analyzer) ChildWith(parent *Scope) *Analyzer {
	return &Analyzer{S: a.S, params: a.params, ParentSc: parent, Fold: a.Fold, Ctes: a.Ctes, Subquery: a.Subquery}
}

// noAggs is a copy of a for a clause where aggregates are not allowed.
func (a *Analyzer) NoAggs(clause string) *Analyzer {
	c := *a
	c.Aggs, c.AggCtx, c.AllowSRF = nil, clause, false
	return &c
}

func IsUnknown(e expr.Expr) bool { return e.Type().OID == types.OIDUnknown || e.Type().OID == 0 }

// coerceUnknown gives an unknown literal or parameter the type t.
func (a *Analyzer) CoerceUnknown(e expr.Expr, t types.Type) (expr.Expr, error) {
	switch x := e.(type) {
	case *expr.ParamExpr:
		if (*a.params)[x.N].OID == 0 || (*a.params)[x.N].OID == types.OIDUnknown {
			(*a.params)[x.N] = t
		}
		return a.CastTo(x, t, false)
	case *expr.ConstExpr:
		if x.D.Null {
			return &expr.ConstExpr{T: t, D: types.NullDatum}, nil
		}
		a.noteFold(t)
		d, err := types.ParseText(t, x.D.S, a.Fold.FormatCtx())
		if err != nil {
			return nil, err
		}
		return &expr.ConstExpr{T: t, D: d}, nil
	}
	return a.CastTo(e, t, false)
}

// noteFold records that a constant of type t was folded at analysis time.
// Date and time values can depend on the clock ('now') and the session's
// TimeZone, so a plan holding one must not be reused from a cache.
func (a *Analyzer) noteFold(t types.Type) {
	if types.CategoryOf(t) == types.CatDatetime || t.OID == types.OIDInterval {
		a.S.FoldedVolatile = true
	}
}

// castTo converts e to t, folding constants.
func (a *Analyzer) CastTo(e expr.Expr, t types.Type, explicit bool) (expr.Expr, error) {
	from := e.Type()
	if from.OID == t.OID && (t.Mod < 0 || from.Mod == t.Mod) {
		return e, nil
	}
	if from.OID == types.OIDUnknown || from.OID == 0 {
		if p, ok := e.(*expr.ParamExpr); ok {
			(*a.params)[p.N] = t
			return p, nil
		}
	}
	if c, ok := e.(*expr.ConstExpr); ok {
		if c.D.Null {
			return &expr.ConstExpr{T: t, D: types.NullDatum}, nil
		}
		a.noteFold(t)
		a.noteFold(from)
		d, err := types.CastDatum(a.Fold.FormatCtx(), c.D, from, t, explicit)
		if err != nil {
			return nil, err
		}
		return &expr.ConstExpr{T: t, D: d}, nil
	}
	if !Castable(from, t) {
		return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from.Name, t.Name)
	}
	return &expr.CastExpr{Arg: e, T: t, Explicit: explicit}, nil
}

func Castable(from, to types.Type) bool {
	if fe, ok := types.ElemOf(from); ok {
		if te, ok := types.ElemOf(to); ok {
			return Castable(fe, te)
		}
	}
	fc, tc := types.CategoryOf(from), types.CategoryOf(to)
	switch {
	case tc == types.CatString || fc == types.CatString || fc == types.CatUnknown:
		return true
	case (fc == types.CatInt || fc == types.CatFloat || fc == types.CatNumeric) && (tc == types.CatInt || tc == types.CatFloat || tc == types.CatNumeric):
		return true
	case fc == types.CatDatetime && tc == types.CatDatetime:
		return true
	case from.OID == types.OIDInt4 && tc == types.CatBool, fc == types.CatBool && to.OID == types.OIDInt4:
		return true
	}
	return from.OID == to.OID
}

// assignable reports whether from converts to to in an assignment
// (INSERT and UPDATE values, EXECUTE's parameters): PostgreSQL's implicit
// and assignment casts, which leave out the explicit-only ones castable
// also allows (text to a number, boolean to integer and back).
func Assignable(from, to types.Type) bool {
	if fe, ok := types.ElemOf(from); ok {
		if te, ok := types.ElemOf(to); ok {
			return Assignable(fe, te)
		}
	}
	fc, tc := types.CategoryOf(from), types.CategoryOf(to)
	switch {
	case fc == types.CatUnknown || tc == types.CatString:
		return true // string types take any value's text (an I/O cast)
	case fc == types.CatString:
		return false
	case from.OID == types.OIDInt4 && tc == types.CatBool, fc == types.CatBool && to.OID == types.OIDInt4:
		return false
	}
	return Castable(from, to)
}

// finishParams gives still-untyped parameters the type text, as
// PostgreSQL resolves unknown to text in output positions.
func FinishParams(params []types.Type) {
	for i := range params {
		if params[i].OID == 0 || params[i].OID == types.OIDUnknown {
			params[i] = types.TypeText
		}
	}
}

// resolveOutput turns unknown-typed output expressions into text.
func (a *Analyzer) ResolveOutput(e expr.Expr) (expr.Expr, error) {
	if IsUnknown(e) && !a.KeepUnknown {
		return a.CoerceUnknown(e, types.TypeText)
	}
	return e, nil
}

func NodeName(n *pg.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

func QualifiedName(nodes []*pg.Node) (schema, name string) {
	switch len(nodes) {
	case 0:
		return "", ""
	case 1:
		return "", NodeName(nodes[0])
	default:
		return NodeName(nodes[len(nodes)-2]), NodeName(nodes[len(nodes)-1])
	}
}

// expr compiles one expression node.
func (a *Analyzer) Expr(n *pg.Node) (expr.Expr, error) {
	e, err := a.exprNode(n)
	if err == nil && a.trees != nil {
		a.recordTree(n, e)
	}
	return e, err
}

func (a *Analyzer) exprNode(n *pg.Node) (expr.Expr, error) {
	switch {
	case n.GetAConst() != nil:
		return a.constant(n.GetAConst())
	case n.GetParamRef() != nil:
		p := n.GetParamRef()
		idx := int(p.Number) - 1
		if idx < 0 || idx >= 65535 {
			return nil, expr.PosErr(pgerr.New(pgerr.UndefinedParameter, "there is no parameter $%d", p.Number), p.Location)
		}
		for len(*a.params) <= idx {
			*a.params = append(*a.params, types.Type{})
		}
		return &expr.ParamExpr{N: idx, Types: a.params}, nil
	case n.GetColumnRef() != nil:
		return a.columnRef(n.GetColumnRef())
	case n.GetAExpr() != nil:
		return a.aexpr(n.GetAExpr())
	case n.GetBoolExpr() != nil:
		b := n.GetBoolExpr()
		be := &expr.BoolExpr{Op: b.Boolop}
		for _, arg := range b.Args {
			e, err := a.Expr(arg)
			if err != nil {
				return nil, err
			}
			if e, err = a.AsBool(e, boolOpName(b.Boolop), b.Location); err != nil {
				return nil, err
			}
			be.Args = append(be.Args, e)
		}
		return be, nil
	case n.GetNullTest() != nil:
		t := n.GetNullTest()
		e, err := a.Expr(t.Arg)
		if err != nil {
			return nil, err
		}
		return &expr.NullTestExpr{Arg: e, IsNull: t.Nulltesttype == pg.NullTestType_IS_NULL}, nil
	case n.GetBooleanTest() != nil:
		t := n.GetBooleanTest()
		e, err := a.Expr(t.Arg)
		if err != nil {
			return nil, err
		}
		if e, err = a.AsBool(e, "IS", t.Location); err != nil {
			return nil, err
		}
		return &expr.BoolTestExpr{Arg: e, Kind: t.Booltesttype}, nil
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		t, err := a.TypeName(tc.TypeName)
		if err != nil {
			return nil, err
		}
		e, err := a.Expr(tc.Arg)
		if err != nil {
			return nil, err
		}
		loc := ExprLocation(n)
		if IsUnknown(e) {
			if c, ok := e.(*expr.ConstExpr); ok && !c.D.Null {
				a.noteFold(t)
				var d types.Datum
				if t.OID == types.OIDBpchar || t.OID == types.OIDVarchar {
					d, err = types.CoerceString(t, c.D.S, true)
				} else {
					d, err = types.ParseText(t, c.D.S, a.Fold.FormatCtx())
				}
				if err != nil {
					return nil, expr.PosErr(pgerr.From(err), loc)
				}
				return &expr.ConstExpr{T: t, D: d}, nil
			}
		}
		r, err := a.CastTo(e, t, true)
		if err != nil {
			// a constant that does not convert points at itself, a cast
			// that does not exist at the ::
			if pe := pgerr.From(err); pe.Code == pgerr.CannotCoerce {
				return nil, expr.PosErr(pe, tc.Location)
			}
			return nil, expr.PosErr(pgerr.From(err), loc)
		}
		return r, nil
	case n.GetFuncCall() != nil:
		return a.FuncCall(n.GetFuncCall())
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
		return &expr.CoalesceExpr{T: t, Args: args}, nil
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
		return nil, expr.PosErr(pgerr.NotSupported("GROUPING SETS, ROLLUP and CUBE are not supported"), n.GetGroupingSet().Location)
	case n.GetAArrayExpr() != nil:
		ae := n.GetAArrayExpr()
		args, t, err := a.commonArgs(ae.Elements, "ARRAY", ae.Location)
		if err != nil {
			return nil, err
		}
		at, ok := types.ArrayOf(t)
		if !ok {
			return nil, pgerr.NotSupported("arrays of type %s are not supported", t.Name)
		}
		return &expr.FuncExpr{Name: "array", T: at, Args: args, NonStrict: true, Fn: func(_ *expr.EvalCtx, vals []types.Datum) (types.Datum, error) {
			return types.Datum{A: append([]types.Datum(nil), vals...)}, nil
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
	return nil, pgerr.NotSupported("expression %s is not supported", NodeKind(n))
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
func (a *Analyzer) AsBool(e expr.Expr, ctxName string, loc int32) (expr.Expr, error) {
	if IsUnknown(e) {
		return a.CoerceUnknown(e, types.TypeBool)
	}
	if e.Type().OID != types.OIDBool {
		return nil, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", ctxName, e.Type().Name), loc)
	}
	return e, nil
}

// nodeKind names a parse node for error messages.
func NodeKind(n *pg.Node) string {
	s := fmt.Sprintf("%T", n.GetNode())
	s = strings.TrimPrefix(s, "*pg_query.Node_")
	return s
}

func (a *Analyzer) constant(c *pg.A_Const) (expr.Expr, error) {
	if c.Isnull {
		return &expr.ConstExpr{T: types.TypeUnknown, D: types.NullDatum}, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return &expr.ConstExpr{T: types.TypeInt4, D: types.IntDatum(int64(v.Ival.Ival))}, nil
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		// Integers too large for int4 arrive as Fval: int8 if they fit.
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				if i >= math.MinInt32 && i <= math.MaxInt32 {
					// -2147483648: the grammar folds the sign into the constant
					return &expr.ConstExpr{T: types.TypeInt4, D: types.IntDatum(i)}, nil
				}
				return &expr.ConstExpr{T: types.TypeInt8, D: types.IntDatum(i)}, nil
			}
		}
		n, err := types.ParseNumeric(s)
		if err != nil {
			return nil, expr.PosErr(types.InvalidInput(types.TypeNumeric, s), c.Location)
		}
		return &expr.ConstExpr{T: types.TypeNumeric, D: types.TextDatum(n.String())}, nil
	case *pg.A_Const_Sval:
		return &expr.ConstExpr{T: types.TypeUnknown, D: types.TextDatum(v.Sval.Sval)}, nil
	case *pg.A_Const_Boolval:
		return &expr.ConstExpr{T: types.TypeBool, D: types.BoolDatum(v.Boolval.Boolval)}, nil
	case *pg.A_Const_Bsval:
		return nil, expr.PosErr(pgerr.NotSupported("bit string literals are not supported"), c.Location)
	}
	return nil, pgerr.NotSupported("constant is not supported")
}

func (a *Analyzer) columnRef(c *pg.ColumnRef) (expr.Expr, error) {
	var names []string
	for _, f := range c.Fields {
		if f.GetAStar() != nil {
			return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "* is not allowed here"), c.Location)
		}
		names = append(names, NodeName(f))
	}
	name := names[len(names)-1]
	qual := ""
	if len(names) > 1 {
		qual = names[len(names)-2]
	}
	if len(names) > 3 {
		return nil, expr.PosErr(pgerr.NotSupported("cross-database references are not implemented: %s", strings.Join(names, ".")), c.Location)
	}
	if a.Sc == nil {
		if qual != "" {
			return nil, expr.PosErr(pgerr.New(pgerr.UndefinedTable, "missing FROM-clause entry for table \"%s\"", qual), c.Location)
		}
		return nil, expr.PosErr(pgerr.New(pgerr.UndefinedColumn, "column \"%s\" does not exist", name), c.Location)
	}
	e, _, _, err := a.Sc.LookupColumn(qual, name, c.Location)
	return e, err
}

func (a *Analyzer) aexpr(x *pg.A_Expr) (expr.Expr, error) {
	op := ""
	if len(x.Name) > 0 {
		op = NodeName(x.Name[len(x.Name)-1])
	}
	switch x.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if x.Lexpr == nil {
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
		var e expr.Expr = &expr.BoolExpr{Op: pg.BoolExprType_OR_EXPR, Args: []expr.Expr{one, two}}
		if x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
			e = &expr.BoolExpr{Op: pg.BoolExprType_NOT_EXPR, Args: []expr.Expr{e}}
		}
		return e, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
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
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
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
	case pg.A_Expr_Kind_AEXPR_NULLIF:
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
	return nil, expr.PosErr(pgerr.NotSupported("operator kind %s is not supported", x.Kind.String()), x.Location)
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

func (a *Analyzer) toText(e expr.Expr) (expr.Expr, error) {
	if IsUnknown(e) {
		return a.CoerceUnknown(e, types.TypeText)
	}
	if types.CategoryOf(e.Type()) == types.CatString {
		if e.Type().OID == types.OIDBpchar {
			return a.CastTo(e, types.TypeText, false)
		}
		return e, nil
	}
	return a.CastTo(e, types.TypeText, false)
}

// unify resolves a list of expressions to one common type (CASE, IN,
// COALESCE, VALUES rules: unknowns take the type of the others; all
// unknown → text).
func (a *Analyzer) Unify(items []expr.Expr, ctxName string, loc int32) ([]expr.Expr, types.Type, error) {
	return a.UnifyAt(items, nil, ctxName, loc)
}

// unifyAt is unify with the source position of each item (-1: unknown),
// so an error points at the item that caused it.
func (a *Analyzer) UnifyAt(items []expr.Expr, locs []int32, ctxName string, loc int32) ([]expr.Expr, types.Type, error) {
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
	var t types.Type
	for i, e := range items {
		if IsUnknown(e) {
			continue
		}
		et := e.Type()
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
		if c, ok := expr.NumericCommon(t, et); ok {
			t = c
			continue
		}
		if types.CategoryOf(t) == types.CatString && types.CategoryOf(et) == types.CatString {
			t.Mod = -1
			continue
		}
		if types.CategoryOf(t) == types.CatDatetime && types.CategoryOf(et) == types.CatDatetime {
			rank := map[uint32]int{types.OIDDate: 1, types.OIDTimestamp: 2, types.OIDTimestamptz: 3}
			if rank[et.OID] > rank[t.OID] {
				t = et
			}
			continue
		}
		if types.IsOidLike(t) && types.IsOidLike(et) {
			t = types.TypeOid
			continue
		}
		return nil, types.Type{}, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "%s types %s and %s cannot be matched", ctxName, t.Name, et.Name), at(i))
	}
	if t.OID == 0 {
		if a.KeepUnknown {
			return items, types.TypeUnknown, nil // a set operation's branch: the other branches decide
		}
		t = types.TypeText
	}
	out := make([]expr.Expr, len(items))
	for i, e := range items {
		var err error
		if IsUnknown(e) {
			out[i], err = a.CoerceUnknown(e, t)
		} else {
			out[i], err = a.CastTo(e, t, false)
		}
		if err != nil {
			return nil, types.Type{}, expr.PosErr(pgerr.From(err), at(i))
		}
	}
	return out, t, nil
}

func (a *Analyzer) commonArgs(nodes []*pg.Node, ctxName string, loc int32) ([]expr.Expr, types.Type, error) {
	var items []expr.Expr
	var locs []int32
	for _, n := range nodes {
		e, err := a.Expr(n)
		if err != nil {
			return nil, types.Type{}, err
		}
		items = append(items, e)
		locs = append(locs, ExprLocation(n))
	}
	return a.UnifyAt(items, locs, ctxName, loc)
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
		case types.IsOidLike(lt) && types.IsOidLike(rt):
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

func (a *Analyzer) caseExpr(c *pg.CaseExpr) (expr.Expr, error) {
	var arg expr.Expr
	var err error
	if c.Arg != nil {
		if arg, err = a.Expr(c.Arg); err != nil {
			return nil, err
		}
	}
	ce := &expr.CaseExpr{}
	var results []expr.Expr
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := a.Expr(cw.Expr)
		if err != nil {
			return nil, err
		}
		if arg != nil {
			if cond, err = a.Binop("=", arg, cond, cw.Location); err != nil {
				return nil, err
			}
		} else if cond, err = a.AsBool(cond, "CASE/WHEN", cw.Location); err != nil {
			return nil, err
		}
		ce.Whens = append(ce.Whens, cond)
		res, err := a.Expr(cw.Result)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	if c.Defresult != nil {
		d, err := a.Expr(c.Defresult)
		if err != nil {
			return nil, err
		}
		results = append(results, d)
	}
	results, t, err := a.Unify(results, "CASE", c.Location)
	if err != nil {
		return nil, err
	}
	ce.T = t
	ce.Results = results[:len(ce.Whens)]
	if c.Defresult != nil {
		ce.Def = results[len(results)-1]
	}
	return ce, nil
}

func minMax(args []expr.Expr, t types.Type, greatest bool) expr.Expr {
	cmp := types.Comparator(t)
	name := "least"
	if greatest {
		name = "greatest"
	}
	return &expr.FuncExpr{Name: name, T: t, Args: args, NonStrict: true, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		best := types.NullDatum
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
				return types.Datum{}, err
			}
			if (greatest && c > 0) || (!greatest && c < 0) {
				best = d
			}
		}
		return best, nil
	}}
}

// typeName resolves a TypeName node.
func (a *Analyzer) TypeName(tn *pg.TypeName) (types.Type, error) {
	_, name := QualifiedName(tn.Names)
	name = strings.ToLower(name)
	var mods []int32
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil {
			return types.Type{}, expr.PosErr(pgerr.New(pgerr.SyntaxError, "type modifiers must be simple constants or identifiers"), tn.Location)
		}
		iv, ok := c.Val.(*pg.A_Const_Ival)
		if !ok {
			return types.Type{}, expr.PosErr(pgerr.New(pgerr.SyntaxError, "type modifiers must be simple constants or identifiers"), tn.Location)
		}
		mods = append(mods, iv.Ival.Ival)
	}
	t, ok := types.LookupType(name)
	if !ok {
		return types.Type{}, expr.PosErr(pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name), tn.Location)
	}
	mod, err := typmodFor(t, mods)
	if err != nil {
		return types.Type{}, expr.PosErr(err.(*pgerr.Error), tn.Location)
	}
	t.Mod = mod
	if len(tn.ArrayBounds) > 0 {
		at, ok := types.ArrayOf(t)
		if !ok {
			return types.Type{}, pgerr.NotSupported("arrays of type %s are not supported", t.Name)
		}
		return at, nil
	}
	return t, nil
}

// typmodFor computes the typmod of t(mods...) as PostgreSQL's typmodin
// functions do.
func typmodFor(t types.Type, mods []int32) (int32, error) {
	switch t.OID {
	case types.OIDBpchar, types.OIDVarchar:
		if len(mods) == 0 {
			return -1, nil // (the grammar gives CHAR without a length its (1))
		}
		if len(mods) > 1 {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid type modifier")
		}
		if mods[0] < 1 {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "length for type %s must be at least 1", map[uint32]string{types.OIDBpchar: "char", types.OIDVarchar: "varchar"}[t.OID])
		}
		return mods[0] + 4, nil
	case types.OIDNumeric:
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
	case types.OIDTimestamp, types.OIDTimestamptz, types.OIDInterval:
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
func OutputName(n *pg.Node) string {
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
				return NodeName(f[len(f)-2]), 2
			}
			return "", 0
		}
		return NodeName(f[len(f)-1]), 2
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		for i := len(ind.Indirection) - 1; i >= 0; i-- {
			if s := ind.Indirection[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
		return figureColname(ind.Arg)
	case n.GetFuncCall() != nil:
		_, name := QualifiedName(n.GetFuncCall().Funcname)
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
		_, name := QualifiedName(tc.TypeName.Names)
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
		return funcs.SqlValueFunctionName(n.GetSqlvalueFunction().Op), 2
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
func ExprLocation(n *pg.Node) int32 {
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
		return min(ExprLocation(tc.Arg), tc.Location)
	case n.GetAExpr() != nil:
		x := n.GetAExpr()
		return min(ExprLocation(x.Lexpr), x.Location)
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
		return min(ExprLocation(n.GetCollateClause().Arg), n.GetCollateClause().Location)
	case n.GetNullTest() != nil:
		return min(ExprLocation(n.GetNullTest().Arg), n.GetNullTest().Location)
	}
	return -1
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

// arrayConcat compiles || with an array operand: array || array,
// array || element, element || array.
func (a *Analyzer) arrayConcat(l, r expr.Expr, loc int32) (expr.Expr, bool, error) {
	la, ra := types.IsArray(l.Type()), types.IsArray(r.Type())
	if !la && !ra {
		return nil, false, nil
	}
	at := l.Type()
	if !la {
		at = r.Type()
	}
	elem, _ := types.ElemOf(at)
	var err error
	conv := func(e expr.Expr, asArray bool) (expr.Expr, error) {
		want := elem
		if asArray {
			want = at
		}
		if IsUnknown(e) {
			return a.CoerceUnknown(e, want)
		}
		return a.CastTo(e, want, false)
	}
	// an unknown literal next to an array is an array literal
	la, ra = la || IsUnknown(l), ra || IsUnknown(r)
	if l, err = conv(l, la); err != nil {
		return nil, true, expr.PosErr(pgerr.From(err), loc)
	}
	if r, err = conv(r, ra); err != nil {
		return nil, true, expr.PosErr(pgerr.From(err), loc)
	}
	return &expr.FuncExpr{Name: "array_cat", T: at, Args: []expr.Expr{l, r}, NonStrict: true, Fn: func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		var out []types.Datum
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
				return types.NullDatum, nil
			}
			out = []types.Datum{}
		}
		return types.Datum{A: out}, nil
	}}, true, nil
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

// collate compiles expr COLLATE name. lockd compares strings bytewise,
// which is the C collation; the collations it knows all mean that
// ordering here (see the README).
func (a *Analyzer) collate(cc *pg.CollateClause) (expr.Expr, error) {
	e, err := a.Expr(cc.Arg)
	if err != nil {
		return nil, err
	}
	_, name := QualifiedName(cc.Collname)
	switch name {
	case "default", "C", "POSIX", "ucs_basic", "C.UTF-8", "C.utf8":
	default:
		return nil, expr.PosErr(pgerr.New(pgerr.UndefinedObject, "collation \"%s\" for encoding \"UTF8\" does not exist", name), cc.Location)
	}
	if !IsUnknown(e) && types.CategoryOf(e.Type()) != types.CatString {
		return nil, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "collations are not supported by type %s", e.Type().Name), cc.Location)
	}
	return e, nil
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
