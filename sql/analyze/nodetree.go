package analyze

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// The analysed tree PostgreSQL stores for an expression (pg_node_tree:
// pg_constraint.conbin, pg_attrdef.adbin), which pg_get_constraintdef
// and pg_get_expr print (ruleutils.go).
//
// The analyzer builds the executable form of an expression, folding
// constants and coercing operands as evaluation needs. What PostgreSQL
// stores is its parse analysis before the planner folds anything:
// operators resolved among pg_operator's signatures (oper_select_candidate),
// the implicit coercions that resolution inserts as nodes, literals typed
// ('x'::text, '-1'::integer), IN lists as = ANY (ARRAY[...]), BETWEEN as
// two comparisons. When asked to (analyzer.trees set, by deparse), the
// analyzer also records that form for each node it analyses, built from
// its children's forms and the types it resolved; an expression outside
// what is modelled has no form and is printed by pg_query's deparser.

// treeNode is one node of PostgreSQL's analysed form of an expression.
type treeNode struct {
	kind treeKind
	t    types.Type
	name string // column, operator, function or keyword
	// constants: text is the value's output form; null a NULL constant
	text string
	null bool
	args []*treeNode
	// casts: implicit ones were added by coercion (hidden where ruleutils
	// passes showimplicit false); byFunc marks a cast done by a function
	// (a FuncExpr, always "simple"), as opposed to a relabelling or I/O
	// conversion (simple when its argument is)
	implicit, byFunc bool
	useOr            bool // = ANY (true) or <> ALL
	not              bool // IS NOT NULL, ...
}

type treeKind uint8

const (
	tnVar treeKind = iota
	tnConst
	tnOp            // binary or prefix operator
	tnAnd           // BoolExpr
	tnOr            //
	tnNot           //
	tnFunc          // function call
	tnCast          // coercion
	tnNullTest      // NullTest
	tnBoolTest      // BooleanTest (name: TRUE, FALSE, UNKNOWN)
	tnScalarArrayOp // ScalarArrayOpExpr
	tnArray         // ArrayExpr
	tnCoalesce      // COALESCE
	tnMinMax        // GREATEST, LEAST
	tnNullIf        // NULLIF
	tnDistinct      // IS DISTINCT FROM
	tnCase          // CASE: args are when, then, ..., else
	tnSQLValue      // CURRENT_DATE, ...
	tnTrim          // TRIM(BOTH|LEADING|TRAILING [chars] FROM s)
)

// errNoDeparse: the expression uses something the analysed form does not
// model; deparse falls back to pg_query's deparser.
var errNoDeparse = &deparseError{}

type deparseError struct{}

func (*deparseError) Error() string { return "sql: expression not modelled for pg_get_constraintdef" }

// deparseTree analyses n and returns PostgreSQL's analysed form of it;
// errNoDeparse when some part of it is not modelled.
func (a *Analyzer) deparseTree(n *pg.Node) (*treeNode, error) {
	a.trees = map[*pg.Node]*treeNode{}
	defer func() { a.trees = nil }()
	if _, err := a.Expr(n); err != nil {
		return nil, err
	}
	return a.tree(n)
}

// checkDefs is pg_get_constraintdef's text of a CHECK with expression n,
// plain and pretty; a's scope is the table's.
func (a *Analyzer) CheckDefs(n *pg.Node) (def, pretty string) {
	x, err := a.deparseTree(n)
	if err != nil {
		text, derr := DeparseExpr(n)
		if derr != nil {
			text = "?"
		}
		return "CHECK ((" + text + "))", "CHECK (" + text + ")"
	}
	return "CHECK (" + printTree(x, false) + ")", "CHECK (" + printTree(x, true) + ")"
}

// recordTree records the analysed form of n, which the analyzer has just
// analysed into e (when forms are being recorded).
func (a *Analyzer) recordTree(n *pg.Node, e expr.Expr) {
	if t, err := a.treeOf(n, e); err == nil {
		a.trees[n] = t
	}
}

// tree is the recorded form of a node analysed before.
func (a *Analyzer) tree(n *pg.Node) (*treeNode, error) {
	if t := a.trees[n]; t != nil {
		return t, nil
	}
	return nil, errNoDeparse
}

// hasVar reports whether t reads a column.
func (t *treeNode) hasVar() bool {
	if t.kind == tnVar {
		return true
	}
	for _, c := range t.args {
		if c.hasVar() {
			return true
		}
	}
	return false
}

// treeOf builds the form of n from its children's recorded forms and
// what the analyzer made of n (e).
func (a *Analyzer) treeOf(n *pg.Node, e expr.Expr) (*treeNode, error) {
	switch {
	case n == nil:
		return nil, errNoDeparse
	case n.GetColumnRef() != nil:
		cr := n.GetColumnRef()
		if _, ok := e.(*expr.ColExpr); !ok {
			return nil, errNoDeparse
		}
		return &treeNode{kind: tnVar, t: e.Type(), name: NodeName(cr.Fields[len(cr.Fields)-1])}, nil
	case n.GetAConst() != nil:
		return treeConst(n.GetAConst())
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		arg, err := a.tree(tc.Arg)
		if err != nil {
			return nil, err
		}
		t, err := a.TypeName(tc.TypeName)
		if err != nil {
			return nil, errNoDeparse
		}
		return a.treeCoerce(arg, t, false), nil
	case n.GetBoolExpr() != nil:
		be := n.GetBoolExpr()
		x := &treeNode{kind: tnAnd, t: types.TypeBool}
		switch be.Boolop {
		case pg.BoolExprType_OR_EXPR:
			x.kind = tnOr
		case pg.BoolExprType_NOT_EXPR:
			x.kind = tnNot
		}
		for _, arg := range be.Args {
			y, err := a.tree(arg)
			if err != nil {
				return nil, err
			}
			x.args = append(x.args, a.treeCoerce(y, types.TypeBool, true))
		}
		return x, nil
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		arg, err := a.tree(nt.Arg)
		if err != nil {
			return nil, err
		}
		if arg.t.OID == types.OIDUnknown {
			arg = a.treeCoerce(arg, types.TypeText, true)
		}
		return &treeNode{kind: tnNullTest, t: types.TypeBool, args: []*treeNode{arg}, not: nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
	case n.GetBooleanTest() != nil:
		bt := n.GetBooleanTest()
		arg, err := a.tree(bt.Arg)
		if err != nil {
			return nil, err
		}
		x := &treeNode{kind: tnBoolTest, t: types.TypeBool, args: []*treeNode{a.treeCoerce(arg, types.TypeBool, true)}}
		switch bt.Booltesttype {
		case pg.BoolTestType_IS_TRUE, pg.BoolTestType_IS_NOT_TRUE:
			x.name = "TRUE"
		case pg.BoolTestType_IS_FALSE, pg.BoolTestType_IS_NOT_FALSE:
			x.name = "FALSE"
		default:
			x.name = "UNKNOWN"
		}
		switch bt.Booltesttype {
		case pg.BoolTestType_IS_NOT_TRUE, pg.BoolTestType_IS_NOT_FALSE, pg.BoolTestType_IS_NOT_UNKNOWN:
			x.not = true
		}
		return x, nil
	case n.GetAExpr() != nil:
		return a.treeAExpr(n.GetAExpr())
	case n.GetFuncCall() != nil:
		return a.treeFunc(n.GetFuncCall(), e)
	case n.GetCoalesceExpr() != nil:
		args, t, err := a.treeCommon(n.GetCoalesceExpr().Args)
		if err != nil {
			return nil, err
		}
		return &treeNode{kind: tnCoalesce, t: t, args: args}, nil
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		args, t, err := a.treeCommon(mm.Args)
		if err != nil {
			return nil, err
		}
		name := "GREATEST"
		if mm.Op == pg.MinMaxOp_IS_LEAST {
			name = "LEAST"
		}
		return &treeNode{kind: tnMinMax, t: t, name: name, args: args}, nil
	case n.GetAArrayExpr() != nil:
		elems, t, err := a.treeCommon(n.GetAArrayExpr().Elements)
		if err != nil || len(elems) == 0 {
			return nil, errNoDeparse
		}
		at, ok := types.ArrayOf(t)
		if !ok {
			return nil, errNoDeparse
		}
		return &treeNode{kind: tnArray, t: at, args: elems}, nil
	case n.GetCaseExpr() != nil:
		return a.treeCase(n.GetCaseExpr())
	case n.GetSqlvalueFunction() != nil:
		switch n.GetSqlvalueFunction().Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return &treeNode{kind: tnSQLValue, t: types.TypeDate, name: "CURRENT_DATE"}, nil
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:
			return &treeNode{kind: tnSQLValue, t: types.TypeTimestamptz, name: "CURRENT_TIMESTAMP"}, nil
		case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:
			return &treeNode{kind: tnSQLValue, t: types.TypeTimestamp, name: "LOCALTIMESTAMP"}, nil
		}
	}
	return nil, errNoDeparse
}

// constant is make_const: integers that fit are int4, larger ones int8,
// decimals numeric; strings stay unknown until coerced.
func treeConst(c *pg.A_Const) (*treeNode, error) {
	if c.Isnull {
		return &treeNode{kind: tnConst, t: types.TypeUnknown, null: true}, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return &treeNode{kind: tnConst, t: types.TypeInt4, text: strconv.FormatInt(int64(v.Ival.Ival), 10)}, nil
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if i >= -1<<31 && i < 1<<31 {
				return &treeNode{kind: tnConst, t: types.TypeInt4, text: strconv.FormatInt(i, 10)}, nil
			}
			return &treeNode{kind: tnConst, t: types.TypeInt8, text: strconv.FormatInt(i, 10)}, nil
		}
		dt, err := types.ParseText(types.TypeNumeric, s, nil)
		if err != nil {
			return nil, errNoDeparse
		}
		return &treeNode{kind: tnConst, t: types.TypeNumeric, text: dt.S}, nil
	case *pg.A_Const_Sval:
		return &treeNode{kind: tnConst, t: types.TypeUnknown, text: v.Sval.Sval}, nil
	case *pg.A_Const_Boolval:
		if v.Boolval.Boolval {
			return &treeNode{kind: tnConst, t: types.TypeBool, text: "t"}, nil
		}
		return &treeNode{kind: tnConst, t: types.TypeBool, text: "f"}, nil
	}
	return nil, errNoDeparse
}

// coerce converts x to t (coerce_type): an unknown literal becomes a
// constant of t; anything else gets a cast node, unless it already has
// the type.
func (a *Analyzer) treeCoerce(x *treeNode, t types.Type, implicit bool) *treeNode {
	if x.t.OID == t.OID && (t.Mod < 0 || x.t.Mod == t.Mod) {
		return x
	}
	if x.kind == tnConst && x.t.OID == types.OIDUnknown {
		c := &treeNode{kind: tnConst, t: t, null: x.null}
		if !x.null {
			c.text = x.text
			if v, err := types.ParseText(t, x.text, a.Fold.FormatCtx()); err == nil {
				c.text = string(types.AppendText(nil, t, v, a.Fold.FormatCtx()))
			}
		}
		return c
	}
	if x.kind == tnConst && x.null {
		return &treeNode{kind: tnConst, t: t, null: true}
	}
	return &treeNode{kind: tnCast, t: t, args: []*treeNode{x}, implicit: implicit, byFunc: castByFunction(x.t, t)}
}

// common is select_common_type over expressions, each coerced to the
// result.
func (a *Analyzer) treeCommon(nodes []*pg.Node) ([]*treeNode, types.Type, error) {
	var xs []*treeNode
	for _, n := range nodes {
		x, err := a.tree(n)
		if err != nil {
			return nil, types.Type{}, err
		}
		xs = append(xs, x)
	}
	t := commonType(xs)
	for i := range xs {
		xs[i] = a.treeCoerce(xs[i], t, true)
	}
	return xs, t, nil
}

// binop resolves op over l and r (oper_select_candidate with the
// binary_oper_exact shortcut for one unknown side) and coerces them.
func (a *Analyzer) treeBinop(op string, l, r *treeNode) (*treeNode, error) {
	sigs := operatorSigs(op)
	if op == "||" {
		// anytextcat and textanycat: text with anything that is not a
		// string keeps its type
		ls, rs := types.CategoryOf(l.t) == types.CatString || l.t.OID == types.OIDUnknown, types.CategoryOf(r.t) == types.CatString || r.t.OID == types.OIDUnknown
		if !ls || !rs {
			if l.t.OID == types.OIDUnknown {
				l = a.treeCoerce(l, types.TypeText, true)
			}
			if r.t.OID == types.OIDUnknown {
				r = a.treeCoerce(r, types.TypeText, true)
			}
			return &treeNode{kind: tnOp, t: types.TypeText, name: op, args: []*treeNode{l, r}}, nil
		}
	}
	if len(sigs) == 0 {
		return nil, errNoDeparse
	}
	find := func(a, b uint32) (opSig, bool) {
		for _, s := range sigs {
			if s.l == a && s.r == b {
				return s, true
			}
		}
		return opSig{}, false
	}
	var sig opSig
	ok := false
	switch {
	case l.t.OID != types.OIDUnknown && r.t.OID != types.OIDUnknown:
		sig, ok = find(l.t.OID, r.t.OID)
	case l.t.OID == types.OIDUnknown && r.t.OID != types.OIDUnknown:
		sig, ok = find(r.t.OID, r.t.OID)
	case r.t.OID == types.OIDUnknown && l.t.OID != types.OIDUnknown:
		sig, ok = find(l.t.OID, l.t.OID)
	}
	if !ok {
		var all [][]uint32
		for _, s := range sigs {
			all = append(all, []uint32{s.l, s.r, s.res})
		}
		trimmed := make([][]uint32, len(all))
		for i, s := range all {
			trimmed[i] = s[:2]
		}
		c, found := selectCandidate(trimmed, []uint32{l.t.OID, r.t.OID})
		if !found {
			return nil, errNoDeparse
		}
		sig, _ = find(c[0], c[1])
	}
	lt, rt := typeOf(sig.l), typeOf(sig.r)
	if l.t.OID == sig.l {
		lt = l.t
	}
	if r.t.OID == sig.r {
		rt = r.t
	}
	res := typeOf(sig.res)
	return &treeNode{kind: tnOp, t: res, name: op, args: []*treeNode{a.treeCoerce(l, lt, true), a.treeCoerce(r, rt, true)}}, nil
}

func (a *Analyzer) treeAExpr(x *pg.A_Expr) (*treeNode, error) {
	op := ""
	if len(x.Name) > 0 {
		op = NodeName(x.Name[len(x.Name)-1])
	}
	switch x.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if x.Lexpr == nil {
			arg, err := a.tree(x.Rexpr)
			if err != nil || (op != "-" && op != "+") || arg.t.OID == types.OIDUnknown {
				return nil, errNoDeparse
			}
			return &treeNode{kind: tnOp, t: arg.t, name: op, args: []*treeNode{arg}}, nil
		}
		l, err := a.tree(x.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := a.tree(x.Rexpr)
		if err != nil {
			return nil, err
		}
		return a.treeBinop(op, l, r)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		if x.Rexpr.GetFuncCall() != nil { // ESCAPE
			return nil, errNoDeparse
		}
		l, err := a.tree(x.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := a.tree(x.Rexpr)
		if err != nil {
			return nil, err
		}
		return a.treeBinop(op, l, r)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg.A_Expr_Kind_AEXPR_NULLIF:
		l, err := a.tree(x.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := a.tree(x.Rexpr)
		if err != nil {
			return nil, err
		}
		eq, err := a.treeBinop("=", l, r)
		if err != nil {
			return nil, err
		}
		switch x.Kind {
		case pg.A_Expr_Kind_AEXPR_NULLIF:
			return &treeNode{kind: tnNullIf, t: eq.args[0].t, args: eq.args}, nil
		case pg.A_Expr_Kind_AEXPR_DISTINCT:
			return &treeNode{kind: tnDistinct, t: types.TypeBool, args: eq.args}, nil
		}
		return &treeNode{kind: tnNot, t: types.TypeBool, args: []*treeNode{{kind: tnDistinct, t: types.TypeBool, args: eq.args}}}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		bounds := x.Rexpr.GetList().GetItems()
		if len(bounds) != 2 {
			return nil, errNoDeparse
		}
		ops := [2]string{">=", "<="}
		kind := tnAnd
		if x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			ops, kind = [2]string{"<", ">"}, tnOr
		}
		out := &treeNode{kind: kind, t: types.TypeBool}
		for i, b := range bounds {
			l, err := a.tree(x.Lexpr)
			if err != nil {
				return nil, err
			}
			r, err := a.tree(b)
			if err != nil {
				return nil, err
			}
			c, err := a.treeBinop(ops[i], l, r)
			if err != nil {
				return nil, err
			}
			out.args = append(out.args, c)
		}
		return out, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		return a.treeInList(op, x)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		l, err := a.tree(x.Lexpr)
		if err != nil {
			return nil, err
		}
		arr, err := a.tree(x.Rexpr)
		if err != nil {
			return nil, err
		}
		return a.treeScalarArrayOp(op, x.Kind == pg.A_Expr_Kind_AEXPR_OP_ANY, l, arr)
	}
	return nil, errNoDeparse
}

// scalarArrayOp is make_scalar_array_op: op resolved between l and the
// array's element type; the array cast as a whole if its elements must be.
func (a *Analyzer) treeScalarArrayOp(op string, useOr bool, l, arr *treeNode) (*treeNode, error) {
	elem, ok := types.ElemOf(arr.t)
	if !ok {
		return nil, errNoDeparse
	}
	probe, err := a.treeBinop(op, l, &treeNode{kind: tnVar, t: elem})
	if err != nil || probe.t.OID != types.OIDBool {
		return nil, errNoDeparse
	}
	want := probe.args[1].t
	if want.OID != elem.OID {
		at, ok := types.ArrayOf(want)
		if !ok {
			return nil, errNoDeparse
		}
		arr = &treeNode{kind: tnCast, t: at, args: []*treeNode{arr}, implicit: true}
	}
	return &treeNode{kind: tnScalarArrayOp, t: types.TypeBool, name: op, useOr: useOr, args: []*treeNode{probe.args[0], arr}}, nil
}

// inList is transformAExprIn: the items without column references (when
// there are at least two) form an = ANY (ARRAY[...]) of their common type
// with the left side; every other item is a comparison of its own, OR-ed
// (AND-ed for NOT IN) on.
func (a *Analyzer) treeInList(op string, x *pg.A_Expr) (*treeNode, error) {
	items := x.Rexpr.GetList().GetItems()
	lexpr := func() (*treeNode, error) { return a.tree(x.Lexpr) }
	var nonVars, vars []*pg.Node
	for _, it := range items {
		t, err := a.tree(it)
		if err != nil {
			return nil, err
		}
		if t.hasVar() {
			vars = append(vars, it)
		} else {
			nonVars = append(nonVars, it)
		}
	}
	var result *treeNode
	rest := items
	if len(nonVars) > 1 {
		l, err := lexpr()
		if err != nil {
			return nil, err
		}
		all := []*treeNode{l}
		for _, n := range nonVars {
			y, err := a.tree(n)
			if err != nil {
				return nil, err
			}
			all = append(all, y)
		}
		t := commonType(all)
		at, ok := types.ArrayOf(t)
		if !ok {
			return nil, errNoDeparse
		}
		arr := &treeNode{kind: tnArray, t: at}
		for _, y := range all[1:] {
			arr.args = append(arr.args, a.treeCoerce(y, t, true))
		}
		if result, err = a.treeScalarArrayOp(op, op == "=", l, arr); err != nil {
			return nil, err
		}
		rest = vars
	}
	kind := tnOr
	if op == "<>" {
		kind = tnAnd
	}
	for _, it := range rest {
		l, err := lexpr()
		if err != nil {
			return nil, err
		}
		r, err := a.tree(it)
		if err != nil {
			return nil, err
		}
		c, err := a.treeBinop(op, l, r)
		if err != nil {
			return nil, err
		}
		if result == nil {
			result = c
		} else {
			result = &treeNode{kind: kind, t: types.TypeBool, args: []*treeNode{result, c}}
		}
	}
	if result == nil {
		return nil, errNoDeparse
	}
	return result, nil
}

func (a *Analyzer) treeCase(c *pg.CaseExpr) (*treeNode, error) {
	if c.Arg != nil {
		return nil, errNoDeparse
	}
	var conds []*treeNode
	var results []*pg.Node
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := a.tree(cw.Expr)
		if err != nil {
			return nil, err
		}
		conds = append(conds, a.treeCoerce(cond, types.TypeBool, true))
		results = append(results, cw.Result)
	}
	if c.Defresult != nil {
		results = append(results, c.Defresult)
	}
	res, t, err := a.treeCommon(results)
	if err != nil {
		return nil, err
	}
	x := &treeNode{kind: tnCase, t: t}
	for i := range conds {
		x.args = append(x.args, conds[i], res[i])
	}
	if c.Defresult != nil {
		x.args = append(x.args, res[len(res)-1])
	} else {
		x.args = append(x.args, &treeNode{kind: tnConst, t: t, null: true})
	}
	return x, nil
}

func (a *Analyzer) treeFunc(fc *pg.FuncCall, e expr.Expr) (*treeNode, error) {
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || fc.Over != nil || len(fc.AggOrder) > 0 || fc.FuncVariadic {
		return nil, errNoDeparse
	}
	_, name := QualifiedName(fc.Funcname)
	name = strings.ToLower(name)
	var args []*treeNode
	for _, arg := range fc.Args {
		if arg.GetNamedArgExpr() != nil {
			return nil, errNoDeparse
		}
		x, err := a.tree(arg)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	if fc.Funcformat == pg.CoercionForm_COERCE_SQL_SYNTAX {
		word := map[string]string{"btrim": "BOTH", "ltrim": "LEADING", "rtrim": "TRAILING"}[name]
		if word == "" {
			return nil, errNoDeparse
		}
		f, err := a.treeResolveFunc(name, args)
		if err != nil {
			return nil, err
		}
		f.kind, f.name = tnTrim, word
		return f, nil
	}
	if name == "concat" {
		return &treeNode{kind: tnFunc, t: types.TypeText, name: name, args: args}, nil
	}
	if _, ok := funcSigs[name]; ok {
		return a.treeResolveFunc(name, args)
	}
	// another function: the analyzer gave its result type; its arguments
	// are printed as they are
	for _, x := range args {
		if x.t.OID == types.OIDUnknown {
			return nil, errNoDeparse
		}
	}
	return &treeNode{kind: tnFunc, t: e.Type(), name: name, args: args}, nil
}

// resolveFunc picks the signature of a known function and coerces the
// arguments to it.
func (a *Analyzer) treeResolveFunc(name string, args []*treeNode) (*treeNode, error) {
	var sigs [][]uint32
	for _, s := range funcSigs[name] {
		if len(s) == len(args)+1 {
			sigs = append(sigs, s[:len(args)])
		}
	}
	in := make([]uint32, len(args))
	for i, arg := range args {
		in[i] = arg.t.OID
	}
	var sig []uint32
	for _, s := range sigs {
		exact := true
		for i := range in {
			exact = exact && s[i] == in[i]
		}
		if exact {
			sig = s
		}
	}
	if sig == nil {
		c, ok := selectCandidate(sigs, in)
		if !ok {
			return nil, errNoDeparse
		}
		sig = c
	}
	var res uint32
	for _, s := range funcSigs[name] {
		if len(s) == len(args)+1 && equalOIDs(s[:len(args)], sig) {
			res = s[len(args)]
		}
	}
	x := &treeNode{kind: tnFunc, t: typeOf(res), name: name}
	for i, arg := range args {
		want := typeOf(sig[i])
		if arg.t.OID == want.OID {
			want = arg.t
		}
		x.args = append(x.args, a.treeCoerce(arg, want, true))
	}
	return x, nil
}
