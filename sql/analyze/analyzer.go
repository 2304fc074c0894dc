package analyze

import (
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
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
	// SublinkHook, when set, compiles the subqueries of this level's
	// expressions in place of Sublink (which it may call): the planner's
	// pull-up of EXISTS and IN into semi joins. Analyzers of other levels
	// (Level, ChildWith) do not inherit it.
	SublinkHook func(a *Analyzer, sl *pg.SubLink) (expr.Expr, error)
}

// newExprAnalyzer returns an analyzer of expressions; one that may meet
// subqueries needs its subquery hook set (newAnalyzer does).
func NewExprAnalyzer(s *expr.Backend, params *[]types.Type) *Analyzer {
	a := &Analyzer{S: s, params: params}
	a.Fold.B = s
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

// expr compiles one expression node.
func (a *Analyzer) Expr(n *pg.Node) (expr.Expr, error) {
	e, err := a.exprNode(n)
	if err == nil && a.trees != nil {
		a.recordTree(n, e)
	}
	if f, ok := e.(*expr.FuncExpr); ok && f.Volatile {
		// a subquery calling it gives a new result each time it runs
		a.Sc.Record(OuterRef{})
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
		if a.SublinkHook != nil {
			return a.SublinkHook(a, n.GetSubLink())
		}
		return a.Sublink(n.GetSubLink())
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

// lockSpec is one strength and wait policy of a FOR ... clause.
type LockSpec struct {
	Mode   txn.TupleLockMode
	Policy storage.WaitPolicy
	Word   string // FOR UPDATE, FOR SHARE, ... for messages
}

func (l *LockSpec) Merge(o *LockSpec) {
	if o.Mode > l.Mode {
		l.Mode, l.Word = o.Mode, o.Word
	}
	// NOWAIT beats SKIP LOCKED beats waiting
	if o.Policy == storage.WaitError || o.Policy == storage.WaitSkip && l.Policy == storage.WaitBlock {
		l.Policy = o.Policy
	}
}
