package sql

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// pg_get_constraintdef of a CHECK constraint. PostgreSQL prints the
// analysed expression tree it stored (ruleutils.c get_rule_expr), not the
// text the user wrote: operators resolved to their argument types with the
// coercions parse analysis inserted shown as casts ((v)::text, (0)::numeric),
// literals typed ('x'::text, '-1'::integer), IN lists as = ANY (ARRAY[...]),
// BETWEEN as two comparisons. This file redoes that analysis for the
// expressions lockd supports — PostgreSQL's operator and function
// resolution (oper_select_candidate, select_common_type) over lockd's
// types — into a small tree, and prints it with ruleutils' rules: every
// operator parenthesised unless pretty, and in pretty mode the parentheses
// isSimpleNode asks for. An expression outside that subset is printed by
// pg_query's deparser instead.

// rx is one node of PostgreSQL's analysed form of an expression.
type rx struct {
	kind rxKind
	t    Type
	name string // column, operator, function or keyword
	// constants: text is the value's output form; null a NULL constant
	text string
	null bool
	args []*rx
	// casts: implicit ones were added by coercion (hidden where ruleutils
	// passes showimplicit false); byFunc marks a cast done by a function
	// (a FuncExpr, always "simple"), as opposed to a relabelling or I/O
	// conversion (simple when its argument is)
	implicit, byFunc bool
	useOr            bool // = ANY (true) or <> ALL
	not              bool // IS NOT NULL, ...
}

type rxKind uint8

const (
	rxVar rxKind = iota
	rxConst
	rxOp     // binary or prefix operator
	rxAnd    // BoolExpr
	rxOr     //
	rxNot    //
	rxFunc   // function call
	rxCast   // coercion
	rxNull   // NullTest
	rxBoolT  // BooleanTest (name: TRUE, FALSE, UNKNOWN)
	rxSAOp   // ScalarArrayOpExpr
	rxArray  // ArrayExpr
	rxCoal   // COALESCE
	rxMinMax // GREATEST, LEAST
	rxNullIf // NULLIF
	rxDist   // IS DISTINCT FROM
	rxCase   // CASE: args are when, then, ..., else
	rxSQLVal // CURRENT_DATE, ...
	rxTrim   // TRIM(BOTH|LEADING|TRAILING [chars] FROM s)
)

// errNoDeparse: the expression uses something this deparser does not
// model; the caller falls back to pg_query's deparser.
var errNoDeparse = &deparseError{}

type deparseError struct{}

func (*deparseError) Error() string { return "sql: expression not modelled for pg_get_constraintdef" }

// checkDefs returns pg_get_constraintdef's text of a CHECK on t, plain and
// pretty.
func (s *Backend) checkDefs(t *TableDef, n *pg.Node) (def, pretty string) {
	d := &rxAnalyzer{s: s, t: t}
	x, err := d.analyze(n)
	if err != nil {
		text, derr := deparseExpr(n)
		if derr != nil {
			text = "?"
		}
		return "CHECK ((" + text + "))", "CHECK (" + text + ")"
	}
	return "CHECK (" + printRx(x, false) + ")", "CHECK (" + printRx(x, true) + ")"
}

// --- analysis

type rxAnalyzer struct {
	s *Backend
	t *TableDef
}

func (d *rxAnalyzer) analyze(n *pg.Node) (*rx, error) {
	switch {
	case n == nil:
		return nil, errNoDeparse
	case n.GetColumnRef() != nil:
		cr := n.GetColumnRef()
		name := nodeName(cr.Fields[len(cr.Fields)-1])
		i := d.t.colIndex(name)
		if i < 0 {
			return nil, errNoDeparse
		}
		return &rx{kind: rxVar, t: d.t.Cols[i].Type(), name: name}, nil
	case n.GetAConst() != nil:
		return d.constant(n.GetAConst())
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		arg, err := d.analyze(tc.Arg)
		if err != nil {
			return nil, err
		}
		t, err := newAnalyzer(d.s, nil).typeName(tc.TypeName)
		if err != nil {
			return nil, errNoDeparse
		}
		return d.coerce(arg, t, false), nil
	case n.GetBoolExpr() != nil:
		be := n.GetBoolExpr()
		x := &rx{kind: rxAnd, t: TypeBool}
		switch be.Boolop {
		case pg.BoolExprType_OR_EXPR:
			x.kind = rxOr
		case pg.BoolExprType_NOT_EXPR:
			x.kind = rxNot
		}
		for _, a := range be.Args {
			y, err := d.analyze(a)
			if err != nil {
				return nil, err
			}
			x.args = append(x.args, d.coerce(y, TypeBool, true))
		}
		return x, nil
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		arg, err := d.analyze(nt.Arg)
		if err != nil {
			return nil, err
		}
		if arg.t.OID == OIDUnknown {
			arg = d.coerce(arg, TypeText, true)
		}
		return &rx{kind: rxNull, t: TypeBool, args: []*rx{arg}, not: nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
	case n.GetBooleanTest() != nil:
		bt := n.GetBooleanTest()
		arg, err := d.analyze(bt.Arg)
		if err != nil {
			return nil, err
		}
		x := &rx{kind: rxBoolT, t: TypeBool, args: []*rx{d.coerce(arg, TypeBool, true)}}
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
		return d.aexpr(n.GetAExpr())
	case n.GetFuncCall() != nil:
		return d.funcCall(n, n.GetFuncCall())
	case n.GetCoalesceExpr() != nil:
		args, t, err := d.common(n.GetCoalesceExpr().Args)
		if err != nil {
			return nil, err
		}
		return &rx{kind: rxCoal, t: t, args: args}, nil
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		args, t, err := d.common(mm.Args)
		if err != nil {
			return nil, err
		}
		name := "GREATEST"
		if mm.Op == pg.MinMaxOp_IS_LEAST {
			name = "LEAST"
		}
		return &rx{kind: rxMinMax, t: t, name: name, args: args}, nil
	case n.GetAArrayExpr() != nil:
		elems, t, err := d.common(n.GetAArrayExpr().Elements)
		if err != nil || len(elems) == 0 {
			return nil, errNoDeparse
		}
		at, ok := arrayOf(t)
		if !ok {
			return nil, errNoDeparse
		}
		return &rx{kind: rxArray, t: at, args: elems}, nil
	case n.GetCaseExpr() != nil:
		return d.caseExpr(n.GetCaseExpr())
	case n.GetSqlvalueFunction() != nil:
		switch n.GetSqlvalueFunction().Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return &rx{kind: rxSQLVal, t: TypeDate, name: "CURRENT_DATE"}, nil
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:
			return &rx{kind: rxSQLVal, t: TypeTimestamptz, name: "CURRENT_TIMESTAMP"}, nil
		case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:
			return &rx{kind: rxSQLVal, t: TypeTimestamp, name: "LOCALTIMESTAMP"}, nil
		}
	}
	return nil, errNoDeparse
}

// constant is make_const: integers that fit are int4, larger ones int8,
// decimals numeric; strings stay unknown until coerced.
func (d *rxAnalyzer) constant(c *pg.A_Const) (*rx, error) {
	if c.Isnull {
		return &rx{kind: rxConst, t: TypeUnknown, null: true}, nil
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return &rx{kind: rxConst, t: TypeInt4, text: strconv.FormatInt(int64(v.Ival.Ival), 10)}, nil
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if i >= -1<<31 && i < 1<<31 {
				return &rx{kind: rxConst, t: TypeInt4, text: strconv.FormatInt(i, 10)}, nil
			}
			return &rx{kind: rxConst, t: TypeInt8, text: strconv.FormatInt(i, 10)}, nil
		}
		dt, err := parseText(TypeNumeric, s, nil)
		if err != nil {
			return nil, errNoDeparse
		}
		return &rx{kind: rxConst, t: TypeNumeric, text: dt.S}, nil
	case *pg.A_Const_Sval:
		return &rx{kind: rxConst, t: TypeUnknown, text: v.Sval.Sval}, nil
	case *pg.A_Const_Boolval:
		if v.Boolval.Boolval {
			return &rx{kind: rxConst, t: TypeBool, text: "t"}, nil
		}
		return &rx{kind: rxConst, t: TypeBool, text: "f"}, nil
	}
	return nil, errNoDeparse
}

// coerce converts x to t (coerce_type): an unknown literal becomes a
// constant of t; anything else gets a cast node, unless it already has
// the type.
func (d *rxAnalyzer) coerce(x *rx, t Type, implicit bool) *rx {
	if x.t.OID == t.OID && (t.Mod < 0 || x.t.Mod == t.Mod) {
		return x
	}
	if x.kind == rxConst && x.t.OID == OIDUnknown {
		c := &rx{kind: rxConst, t: t, null: x.null}
		if !x.null {
			c.text = x.text
			if v, err := parseText(t, x.text, &d.s.fc); err == nil {
				c.text = string(appendText(nil, t, v, &d.s.fc))
			}
		}
		return c
	}
	if x.kind == rxConst && x.null {
		return &rx{kind: rxConst, t: t, null: true}
	}
	return &rx{kind: rxCast, t: t, args: []*rx{x}, implicit: implicit, byFunc: castByFunction(x.t, t)}
}

// castByFunction reports whether PostgreSQL converts from to to with a
// cast function (a FuncExpr) rather than by relabelling or I/O.
func castByFunction(from, to Type) bool {
	if from.OID == to.OID {
		return true // a length coercion
	}
	if to.Mod >= 0 {
		return true // the length coercion is the outermost node
	}
	num := func(o uint32) bool {
		switch o {
		case OIDInt2, OIDInt4, OIDInt8, OIDFloat4, OIDFloat8, OIDNumeric:
			return true
		}
		return false
	}
	dt := func(o uint32) bool { return o == OIDDate || o == OIDTimestamp || o == OIDTimestamptz }
	switch {
	case num(from.OID) && num(to.OID), dt(from.OID) && dt(to.OID):
		return true
	case from.OID == OIDBpchar && (to.OID == OIDText || to.OID == OIDVarchar):
		return true
	}
	return false
}

// common is select_common_type over expressions, each coerced to the
// result.
func (d *rxAnalyzer) common(nodes []*pg.Node) ([]*rx, Type, error) {
	var xs []*rx
	for _, n := range nodes {
		x, err := d.analyze(n)
		if err != nil {
			return nil, Type{}, err
		}
		xs = append(xs, x)
	}
	t := commonType(xs)
	for i := range xs {
		xs[i] = d.coerce(xs[i], t, true)
	}
	return xs, t, nil
}

// commonType is select_common_type: the first known type, replaced by a
// later one it coerces to implicitly but not back, unless it is the
// category's preferred type; text when all are unknown.
func commonType(xs []*rx) Type {
	var p Type
	have := false
	for _, x := range xs {
		if x.t.OID == OIDUnknown {
			continue
		}
		if !have {
			p, have = x.t, true
			continue
		}
		n := x.t
		if n.OID == p.OID {
			continue
		}
		if !preferredType(p) && implicitCast(p, n) && !implicitCast(n, p) {
			p = n
		}
	}
	if !have {
		return TypeText
	}
	p.Mod = -1 // coerce_to_common_type coerces to the type alone
	return p
}

// preferredType: the type PostgreSQL prefers within its category
// (typispreferred).
func preferredType(t Type) bool {
	switch t.OID {
	case OIDText, OIDFloat8, OIDBool, OIDTimestamptz, OIDInterval, OIDOid:
		return true
	}
	return false
}

// implicitCast reports whether pg_cast has an implicit cast from → to
// (or they are the same type).
func implicitCast(from, to Type) bool {
	if from.OID == to.OID || from.OID == OIDUnknown {
		return true
	}
	rank := map[uint32]int{OIDInt2: 1, OIDInt4: 2, OIDInt8: 3, OIDNumeric: 4, OIDFloat4: 5, OIDFloat8: 6}
	if a, ok := rank[from.OID]; ok {
		b, ok := rank[to.OID]
		return ok && a < b
	}
	switch from.OID {
	case OIDText:
		return to.OID == OIDVarchar || to.OID == OIDBpchar || to.OID == OIDName
	case OIDVarchar:
		return to.OID == OIDText || to.OID == OIDBpchar || to.OID == OIDName
	case OIDBpchar:
		return to.OID == OIDText || to.OID == OIDVarchar || to.OID == OIDName
	case OIDName:
		return to.OID == OIDText
	case OIDDate:
		return to.OID == OIDTimestamp || to.OID == OIDTimestamptz
	case OIDTimestamp:
		return to.OID == OIDTimestamptz
	}
	return false
}

// --- operators

// opSig is one operator (or function) signature.
type opSig struct {
	l, r, res uint32
}

var (
	intOIDs   = []uint32{OIDInt2, OIDInt4, OIDInt8}
	floatOIDs = []uint32{OIDFloat4, OIDFloat8}
	dateOIDs  = []uint32{OIDDate, OIDTimestamp, OIDTimestamptz}
)

// operatorSigs lists the operators called op among lockd's types, as
// pg_operator has them (the cross-type integer, float and datetime
// families included).
func operatorSigs(op string) []opSig {
	var out []opSig
	cross := func(fam []uint32, res func(a, b uint32) uint32) {
		for _, a := range fam {
			for _, b := range fam {
				out = append(out, opSig{a, b, res(a, b)})
			}
		}
	}
	boolRes := func(uint32, uint32) uint32 { return OIDBool }
	wider := func(a, b uint32) uint32 {
		rank := map[uint32]int{OIDInt2: 1, OIDInt4: 2, OIDInt8: 3, OIDFloat4: 1, OIDFloat8: 2}
		if rank[a] >= rank[b] {
			return a
		}
		return b
	}
	switch op {
	case "=", "<>", "<", ">", "<=", ">=":
		for _, t := range []uint32{OIDBool, OIDNumeric, OIDText, OIDBpchar, OIDName, OIDInterval, OIDOid, OIDChar} {
			out = append(out, opSig{t, t, OIDBool})
		}
		cross(intOIDs, boolRes)
		cross(floatOIDs, boolRes)
		cross(dateOIDs, boolRes)
		out = append(out, opSig{OIDName, OIDText, OIDBool}, opSig{OIDText, OIDName, OIDBool})
	case "+", "-", "*", "/":
		cross(intOIDs, wider)
		cross(floatOIDs, func(a, b uint32) uint32 {
			if a == OIDFloat4 && b == OIDFloat4 {
				return OIDFloat4
			}
			return OIDFloat8
		})
		out = append(out, opSig{OIDNumeric, OIDNumeric, OIDNumeric})
		switch op {
		case "+":
			out = append(out, opSig{OIDInterval, OIDInterval, OIDInterval}, opSig{OIDDate, OIDInt4, OIDDate},
				opSig{OIDInt4, OIDDate, OIDDate}, opSig{OIDTimestamp, OIDInterval, OIDTimestamp},
				opSig{OIDTimestamptz, OIDInterval, OIDTimestamptz}, opSig{OIDDate, OIDInterval, OIDTimestamp})
		case "-":
			out = append(out, opSig{OIDInterval, OIDInterval, OIDInterval}, opSig{OIDDate, OIDInt4, OIDDate},
				opSig{OIDDate, OIDDate, OIDInt4}, opSig{OIDTimestamp, OIDInterval, OIDTimestamp},
				opSig{OIDTimestamptz, OIDInterval, OIDTimestamptz}, opSig{OIDTimestamp, OIDTimestamp, OIDInterval},
				opSig{OIDTimestamptz, OIDTimestamptz, OIDInterval}, opSig{OIDDate, OIDInterval, OIDTimestamp})
		}
	case "%":
		for _, t := range []uint32{OIDInt2, OIDInt4, OIDInt8, OIDNumeric} {
			out = append(out, opSig{t, t, t})
		}
	case "~~", "!~~", "~~*", "!~~*", "~", "!~", "~*", "!~*":
		out = append(out, opSig{OIDText, OIDText, OIDBool}, opSig{OIDBpchar, OIDText, OIDBool}, opSig{OIDName, OIDText, OIDBool})
	case "||":
		out = append(out, opSig{OIDText, OIDText, OIDText})
	}
	return out
}

// selectCandidate is func_select_candidate over signatures for argument
// types in (OIDUnknown for an unknown literal): of the candidates every
// argument coerces to implicitly, those with the most exact matches, then
// with the most exact-or-preferred types at the known arguments, then —
// at unknown arguments — of the string category if one offers it (else
// the one category all offer), preferred types first.
func selectCandidate(sigs [][]uint32, in []uint32) ([]uint32, bool) {
	var cands [][]uint32
	for _, s := range sigs {
		ok := len(s) == len(in)
		for i := 0; ok && i < len(in); i++ {
			ok = implicitCast(Type{OID: in[i]}, Type{OID: s[i]})
		}
		if ok {
			cands = append(cands, s)
		}
	}
	keepMax := func(score func([]uint32) int) {
		best := -1
		var kept [][]uint32
		for _, c := range cands {
			switch n := score(c); {
			case n > best:
				best, kept = n, [][]uint32{c}
			case n == best:
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	if len(cands) > 1 {
		keepMax(func(c []uint32) int {
			n := 0
			for i := range in {
				if in[i] != OIDUnknown && in[i] == c[i] {
					n++
				}
			}
			return n
		})
	}
	if len(cands) > 1 {
		keepMax(func(c []uint32) int {
			n := 0
			for i := range in {
				if in[i] != OIDUnknown && (in[i] == c[i] || preferredType(Type{OID: c[i]})) {
					n++
				}
			}
			return n
		})
	}
	for i := 0; len(cands) > 1 && i < len(in); i++ {
		if in[i] != OIDUnknown {
			continue
		}
		cat, havePreferred, conflict := catOther, false, false
		for j, c := range cands {
			ct := categoryOf(Type{OID: c[i]})
			switch {
			case j == 0 || ct == cat:
				if j == 0 {
					cat = ct
				}
				havePreferred = havePreferred || preferredType(Type{OID: c[i]})
			case ct == catString:
				cat, havePreferred = ct, preferredType(Type{OID: c[i]})
			default:
				conflict = true
			}
		}
		if conflict && cat != catString {
			break
		}
		var kept [][]uint32
		for _, c := range cands {
			if categoryOf(Type{OID: c[i]}) == cat && (!havePreferred || preferredType(Type{OID: c[i]})) {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	if len(cands) == 1 {
		return cands[0], true
	}
	return nil, false
}

func typeOf(oid uint32) Type {
	t, _ := typeByOID(oid)
	return t
}

// binop resolves op over l and r (oper_select_candidate with the
// binary_oper_exact shortcut for one unknown side) and coerces them.
func (d *rxAnalyzer) binop(op string, l, r *rx) (*rx, error) {
	sigs := operatorSigs(op)
	if op == "||" {
		// anytextcat and textanycat: text with anything that is not a
		// string keeps its type
		ls, rs := categoryOf(l.t) == catString || l.t.OID == OIDUnknown, categoryOf(r.t) == catString || r.t.OID == OIDUnknown
		if !ls || !rs {
			if l.t.OID == OIDUnknown {
				l = d.coerce(l, TypeText, true)
			}
			if r.t.OID == OIDUnknown {
				r = d.coerce(r, TypeText, true)
			}
			return &rx{kind: rxOp, t: TypeText, name: op, args: []*rx{l, r}}, nil
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
	case l.t.OID != OIDUnknown && r.t.OID != OIDUnknown:
		sig, ok = find(l.t.OID, r.t.OID)
	case l.t.OID == OIDUnknown && r.t.OID != OIDUnknown:
		sig, ok = find(r.t.OID, r.t.OID)
	case r.t.OID == OIDUnknown && l.t.OID != OIDUnknown:
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
	return &rx{kind: rxOp, t: res, name: op, args: []*rx{d.coerce(l, lt, true), d.coerce(r, rt, true)}}, nil
}

func (d *rxAnalyzer) aexpr(x *pg.A_Expr) (*rx, error) {
	op := ""
	if len(x.Name) > 0 {
		op = nodeName(x.Name[len(x.Name)-1])
	}
	switch x.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if x.Lexpr == nil {
			arg, err := d.analyze(x.Rexpr)
			if err != nil || (op != "-" && op != "+") || arg.t.OID == OIDUnknown {
				return nil, errNoDeparse
			}
			return &rx{kind: rxOp, t: arg.t, name: op, args: []*rx{arg}}, nil
		}
		l, err := d.analyze(x.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := d.analyze(x.Rexpr)
		if err != nil {
			return nil, err
		}
		return d.binop(op, l, r)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		if x.Rexpr.GetFuncCall() != nil { // ESCAPE
			return nil, errNoDeparse
		}
		l, err := d.analyze(x.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := d.analyze(x.Rexpr)
		if err != nil {
			return nil, err
		}
		return d.binop(op, l, r)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg.A_Expr_Kind_AEXPR_NULLIF:
		l, err := d.analyze(x.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := d.analyze(x.Rexpr)
		if err != nil {
			return nil, err
		}
		eq, err := d.binop("=", l, r)
		if err != nil {
			return nil, err
		}
		switch x.Kind {
		case pg.A_Expr_Kind_AEXPR_NULLIF:
			return &rx{kind: rxNullIf, t: eq.args[0].t, args: eq.args}, nil
		case pg.A_Expr_Kind_AEXPR_DISTINCT:
			return &rx{kind: rxDist, t: TypeBool, args: eq.args}, nil
		}
		return &rx{kind: rxNot, t: TypeBool, args: []*rx{{kind: rxDist, t: TypeBool, args: eq.args}}}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		bounds := x.Rexpr.GetList().GetItems()
		if len(bounds) != 2 {
			return nil, errNoDeparse
		}
		ops := [2]string{">=", "<="}
		kind := rxAnd
		if x.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			ops, kind = [2]string{"<", ">"}, rxOr
		}
		out := &rx{kind: kind, t: TypeBool}
		for i, b := range bounds {
			l, err := d.analyze(x.Lexpr)
			if err != nil {
				return nil, err
			}
			r, err := d.analyze(b)
			if err != nil {
				return nil, err
			}
			c, err := d.binop(ops[i], l, r)
			if err != nil {
				return nil, err
			}
			out.args = append(out.args, c)
		}
		return out, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		return d.inList(op, x)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		l, err := d.analyze(x.Lexpr)
		if err != nil {
			return nil, err
		}
		arr, err := d.analyze(x.Rexpr)
		if err != nil {
			return nil, err
		}
		return d.scalarArrayOp(op, x.Kind == pg.A_Expr_Kind_AEXPR_OP_ANY, l, arr)
	}
	return nil, errNoDeparse
}

// scalarArrayOp is make_scalar_array_op: op resolved between l and the
// array's element type; the array cast as a whole if its elements must be.
func (d *rxAnalyzer) scalarArrayOp(op string, useOr bool, l, arr *rx) (*rx, error) {
	elem, ok := elemOf(arr.t)
	if !ok {
		return nil, errNoDeparse
	}
	probe, err := d.binop(op, l, &rx{kind: rxVar, t: elem})
	if err != nil || probe.t.OID != OIDBool {
		return nil, errNoDeparse
	}
	want := probe.args[1].t
	if want.OID != elem.OID {
		at, ok := arrayOf(want)
		if !ok {
			return nil, errNoDeparse
		}
		arr = &rx{kind: rxCast, t: at, args: []*rx{arr}, implicit: true}
	}
	return &rx{kind: rxSAOp, t: TypeBool, name: op, useOr: useOr, args: []*rx{probe.args[0], arr}}, nil
}

// inList is transformAExprIn: the items without column references (when
// there are at least two) form an = ANY (ARRAY[...]) of their common type
// with the left side; every other item is a comparison of its own, OR-ed
// (AND-ed for NOT IN) on.
func (d *rxAnalyzer) inList(op string, x *pg.A_Expr) (*rx, error) {
	items := x.Rexpr.GetList().GetItems()
	lexpr := func() (*rx, error) { return d.analyze(x.Lexpr) }
	var nonVars, vars []*pg.Node
	for _, it := range items {
		hasVar := false
		walkRawNodes(it, func(n *pg.Node) {
			if n.GetColumnRef() != nil {
				hasVar = true
			}
		})
		if hasVar {
			vars = append(vars, it)
		} else {
			nonVars = append(nonVars, it)
		}
	}
	var result *rx
	rest := items
	if len(nonVars) > 1 {
		l, err := lexpr()
		if err != nil {
			return nil, err
		}
		all := []*rx{l}
		for _, n := range nonVars {
			y, err := d.analyze(n)
			if err != nil {
				return nil, err
			}
			all = append(all, y)
		}
		t := commonType(all)
		at, ok := arrayOf(t)
		if !ok {
			return nil, errNoDeparse
		}
		arr := &rx{kind: rxArray, t: at}
		for _, y := range all[1:] {
			arr.args = append(arr.args, d.coerce(y, t, true))
		}
		if result, err = d.scalarArrayOp(op, op == "=", l, arr); err != nil {
			return nil, err
		}
		rest = vars
	}
	kind := rxOr
	if op == "<>" {
		kind = rxAnd
	}
	for _, it := range rest {
		l, err := lexpr()
		if err != nil {
			return nil, err
		}
		r, err := d.analyze(it)
		if err != nil {
			return nil, err
		}
		c, err := d.binop(op, l, r)
		if err != nil {
			return nil, err
		}
		if result == nil {
			result = c
		} else {
			result = &rx{kind: kind, t: TypeBool, args: []*rx{result, c}}
		}
	}
	if result == nil {
		return nil, errNoDeparse
	}
	return result, nil
}

func (d *rxAnalyzer) caseExpr(c *pg.CaseExpr) (*rx, error) {
	if c.Arg != nil {
		return nil, errNoDeparse
	}
	var conds []*rx
	var results []*pg.Node
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := d.analyze(cw.Expr)
		if err != nil {
			return nil, err
		}
		conds = append(conds, d.coerce(cond, TypeBool, true))
		results = append(results, cw.Result)
	}
	if c.Defresult != nil {
		results = append(results, c.Defresult)
	}
	res, t, err := d.common(results)
	if err != nil {
		return nil, err
	}
	x := &rx{kind: rxCase, t: t}
	for i := range conds {
		x.args = append(x.args, conds[i], res[i])
	}
	if c.Defresult != nil {
		x.args = append(x.args, res[len(res)-1])
	} else {
		x.args = append(x.args, &rx{kind: rxConst, t: t, null: true})
	}
	return x, nil
}

// funcSigs lists the signatures (arguments, then the result) of the
// functions this deparser resolves itself.
var funcSigs = map[string][][]uint32{
	"lower":            {{OIDText, OIDText}},
	"upper":            {{OIDText, OIDText}},
	"initcap":          {{OIDText, OIDText}},
	"md5":              {{OIDText, OIDText}},
	"reverse":          {{OIDText, OIDText}},
	"btrim":            {{OIDText, OIDText}, {OIDText, OIDText, OIDText}},
	"ltrim":            {{OIDText, OIDText}, {OIDText, OIDText, OIDText}},
	"rtrim":            {{OIDText, OIDText}, {OIDText, OIDText, OIDText}},
	"length":           {{OIDText, OIDInt4}, {OIDBpchar, OIDInt4}},
	"char_length":      {{OIDText, OIDInt4}, {OIDBpchar, OIDInt4}},
	"character_length": {{OIDText, OIDInt4}, {OIDBpchar, OIDInt4}},
	"octet_length":     {{OIDText, OIDInt4}, {OIDBpchar, OIDInt4}},
	"abs": {{OIDInt2, OIDInt2}, {OIDInt4, OIDInt4}, {OIDInt8, OIDInt8}, {OIDFloat4, OIDFloat4},
		{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}},
	"substr":  {{OIDText, OIDInt4, OIDText}, {OIDText, OIDInt4, OIDInt4, OIDText}},
	"replace": {{OIDText, OIDText, OIDText, OIDText}},
	"left":    {{OIDText, OIDInt4, OIDText}},
	"right":   {{OIDText, OIDInt4, OIDText}},
	"strpos":  {{OIDText, OIDText, OIDInt4}},
	"repeat":  {{OIDText, OIDInt4, OIDText}},
	"lpad":    {{OIDText, OIDInt4, OIDText}, {OIDText, OIDInt4, OIDText, OIDText}},
	"rpad":    {{OIDText, OIDInt4, OIDText}, {OIDText, OIDInt4, OIDText, OIDText}},
	"round":   {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}, {OIDNumeric, OIDInt4, OIDNumeric}},
	"trunc":   {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}, {OIDNumeric, OIDInt4, OIDNumeric}},
	"floor":   {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}},
	"ceil":    {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}},
	"ceiling": {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}},
	"sqrt":    {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}},
	"exp":     {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}},
	"ln":      {{OIDFloat8, OIDFloat8}, {OIDNumeric, OIDNumeric}},
	"mod": {{OIDInt2, OIDInt2, OIDInt2}, {OIDInt4, OIDInt4, OIDInt4}, {OIDInt8, OIDInt8, OIDInt8},
		{OIDNumeric, OIDNumeric, OIDNumeric}},
	"now":                   {{OIDTimestamptz}},
	"statement_timestamp":   {{OIDTimestamptz}},
	"transaction_timestamp": {{OIDTimestamptz}},
	"clock_timestamp":       {{OIDTimestamptz}},
	"random":                {{OIDFloat8}},
	"date_trunc":            {{OIDText, OIDTimestamp, OIDTimestamp}, {OIDText, OIDTimestamptz, OIDTimestamptz}},
}

func (d *rxAnalyzer) funcCall(n *pg.Node, fc *pg.FuncCall) (*rx, error) {
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || fc.Over != nil || len(fc.AggOrder) > 0 || fc.FuncVariadic {
		return nil, errNoDeparse
	}
	_, name := qualifiedName(fc.Funcname)
	name = strings.ToLower(name)
	var args []*rx
	for _, a := range fc.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, errNoDeparse
		}
		x, err := d.analyze(a)
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
		f, err := d.resolveFunc(name, args)
		if err != nil {
			return nil, err
		}
		f.kind, f.name = rxTrim, word
		return f, nil
	}
	if name == "concat" {
		return &rx{kind: rxFunc, t: TypeText, name: name, args: args}, nil
	}
	if _, ok := funcSigs[name]; ok {
		return d.resolveFunc(name, args)
	}
	// another function: lockd's analyzer knows its result type; its
	// arguments are printed as they are
	a := newAnalyzer(d.s, nil)
	singleTable(a, newTableSource(d.t, d.t.Name), d.t.Name)
	e, err := a.expr(n)
	if err != nil {
		return nil, errNoDeparse
	}
	for _, x := range args {
		if x.t.OID == OIDUnknown {
			return nil, errNoDeparse
		}
	}
	return &rx{kind: rxFunc, t: e.typ(), name: name, args: args}, nil
}

// resolveFunc picks the signature of a known function and coerces the
// arguments to it.
func (d *rxAnalyzer) resolveFunc(name string, args []*rx) (*rx, error) {
	var sigs [][]uint32
	for _, s := range funcSigs[name] {
		if len(s) == len(args)+1 {
			sigs = append(sigs, s[:len(args)])
		}
	}
	in := make([]uint32, len(args))
	for i, a := range args {
		in[i] = a.t.OID
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
	x := &rx{kind: rxFunc, t: typeOf(res), name: name}
	for i, a := range args {
		want := typeOf(sig[i])
		if a.t.OID == want.OID {
			want = a.t
		}
		x.args = append(x.args, d.coerce(a, want, true))
	}
	return x, nil
}

func equalOIDs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// --- printing (ruleutils.c)

type rxPrinter struct {
	buf    []byte
	pretty bool
	indent int
}

func printRx(x *rx, pretty bool) string {
	p := &rxPrinter{pretty: pretty}
	p.expr(x, false)
	return string(p.buf)
}

func (p *rxPrinter) str(s string) { p.buf = append(p.buf, s...) }

// open and close write the parentheses an operator-like node puts around
// itself when not pretty-printing.
func (p *rxPrinter) open() {
	if !p.pretty {
		p.buf = append(p.buf, '(')
	}
}

func (p *rxPrinter) close() {
	if !p.pretty {
		p.buf = append(p.buf, ')')
	}
}

// paren is get_rule_expr_paren: in pretty mode, x is parenthesised unless
// isSimpleNode says it needs none under parent.
func (p *rxPrinter) paren(x *rx, showImplicit bool, parent *rx) {
	need := p.pretty && !rxSimple(x, parent)
	if need {
		p.str("(")
	}
	p.expr(x, showImplicit)
	if need {
		p.str(")")
	}
}

// keyword is appendContextKeyword with PRETTYFLAG_INDENT (on in both
// modes of pg_get_constraintdef): a new line, indented.
func (p *rxPrinter) keyword(s string, before, after int) {
	p.indent += before
	for len(p.buf) > 0 && p.buf[len(p.buf)-1] == ' ' {
		p.buf = p.buf[:len(p.buf)-1]
	}
	p.buf = append(p.buf, '\n')
	for i := 0; i < max(p.indent, 0); i++ {
		p.buf = append(p.buf, ' ')
	}
	p.str(s)
	p.indent = max(p.indent+after, 0)
}

func (p *rxPrinter) expr(x *rx, showImplicit bool) {
	switch x.kind {
	case rxVar:
		p.str(quoteIdent(x.name))
	case rxConst:
		p.constant(x, 0)
	case rxOp:
		p.open()
		if len(x.args) == 1 {
			p.str(x.name + " ")
			p.paren(x.args[0], true, x)
		} else {
			p.paren(x.args[0], true, x)
			p.str(" " + x.name + " ")
			p.paren(x.args[1], true, x)
		}
		p.close()
	case rxAnd, rxOr:
		word := " AND "
		if x.kind == rxOr {
			word = " OR "
		}
		p.open()
		for i, a := range x.args {
			if i > 0 {
				p.str(word)
			}
			p.paren(a, false, x)
		}
		p.close()
	case rxNot:
		p.open()
		p.str("NOT ")
		p.paren(x.args[0], false, x)
		p.close()
	case rxCast:
		if x.implicit && !showImplicit {
			p.paren(x.args[0], false, x)
			return
		}
		arg := x.args[0]
		if arg.kind == rxConst && arg.t.OID == x.t.OID && arg.t.Mod < 0 {
			p.constant(arg, -1)
		} else {
			p.open()
			p.paren(arg, false, x)
			p.close()
		}
		p.str("::" + formatType(x.t.OID, x.t.Mod))
	case rxFunc:
		p.str(quoteIdent(x.name) + "(")
		p.list(x.args)
		p.str(")")
	case rxTrim:
		p.str("TRIM(" + x.name)
		if len(x.args) > 1 {
			p.str(" ")
			p.expr(x.args[1], false)
		}
		p.str(" FROM ")
		p.expr(x.args[0], false)
		p.str(")")
	case rxNull:
		p.open()
		p.paren(x.args[0], true, x)
		if x.not {
			p.str(" IS NOT NULL")
		} else {
			p.str(" IS NULL")
		}
		p.close()
	case rxBoolT:
		p.open()
		p.paren(x.args[0], false, x)
		if x.not {
			p.str(" IS NOT " + x.name)
		} else {
			p.str(" IS " + x.name)
		}
		p.close()
	case rxDist:
		p.open()
		p.paren(x.args[0], true, x)
		p.str(" IS DISTINCT FROM ")
		p.paren(x.args[1], true, x)
		p.close()
	case rxSAOp:
		p.open()
		p.paren(x.args[0], true, x)
		if x.useOr {
			p.str(" " + x.name + " ANY (")
		} else {
			p.str(" " + x.name + " ALL (")
		}
		p.paren(x.args[1], true, x)
		p.str(")")
		p.close()
	case rxArray:
		p.str("ARRAY[")
		p.list(x.args)
		p.str("]")
	case rxCoal:
		p.str("COALESCE(")
		p.list(x.args)
		p.str(")")
	case rxMinMax:
		p.str(x.name + "(")
		p.list(x.args)
		p.str(")")
	case rxNullIf:
		p.str("NULLIF(")
		p.list(x.args)
		p.str(")")
	case rxSQLVal:
		p.str(x.name)
	case rxCase:
		p.keyword("CASE", 0, 4)
		n := len(x.args) - 1
		for i := 0; i < n; i += 2 {
			p.keyword("WHEN ", 0, 0)
			p.expr(x.args[i], false)
			p.str(" THEN ")
			p.expr(x.args[i+1], true)
		}
		p.keyword("ELSE ", 0, 0)
		p.expr(x.args[n], true)
		p.keyword("END", -4, 0)
	}
}

func (p *rxPrinter) list(args []*rx) {
	for i, a := range args {
		if i > 0 {
			p.str(", ")
		}
		p.expr(a, true)
	}
}

// constant is get_const_expr; showType -1 never labels the type, 0
// labels it unless the literal reads back as that type anyway.
func (p *rxPrinter) constant(x *rx, showType int) {
	label := "::" + formatType(x.t.OID, x.t.Mod)
	if x.null {
		p.str("NULL")
		if showType >= 0 {
			p.str(label)
		}
		return
	}
	needLabel := false
	switch x.t.OID {
	case OIDInt4:
		if strings.HasPrefix(x.text, "-") {
			p.str(simpleQuoteLiteral(x.text))
			needLabel = true
		} else {
			p.str(x.text)
		}
	case OIDNumeric:
		if x.text != "" && x.text[0] >= '0' && x.text[0] <= '9' && strings.ContainsAny(x.text, "eE.") {
			p.str(x.text)
		} else {
			p.str(simpleQuoteLiteral(x.text))
			needLabel = true
		}
		needLabel = needLabel || x.t.Mod >= 0
	case OIDBool:
		if x.text == "t" || x.text == "true" {
			p.str("true")
		} else {
			p.str("false")
		}
	case OIDUnknown:
		p.str(simpleQuoteLiteral(x.text))
	default:
		p.str(simpleQuoteLiteral(x.text))
		needLabel = true
	}
	if needLabel && showType >= 0 {
		p.str(label)
	}
}

// simpleQuoteLiteral is simple_quote_literal with standard_conforming_strings on.
func simpleQuoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// rxSimple is isSimpleNode with PRETTYFLAG_PAREN: whether x needs no
// parentheses as an argument of parent.
func rxSimple(x, parent *rx) bool {
	switch x.kind {
	case rxVar, rxConst, rxFunc, rxCoal, rxMinMax, rxNullIf, rxArray, rxCase, rxSQLVal, rxTrim:
		return true
	case rxCast:
		if x.byFunc {
			return true
		}
		return rxSimple(x.args[0], x)
	case rxOp:
		if parent.kind == rxOp {
			if len(x.args) != 2 || len(parent.args) != 2 {
				return false
			}
			lo, hi := strings.Contains("+-", x.name) && len(x.name) == 1, strings.Contains("*/%", x.name) && len(x.name) == 1
			plo, phi := strings.Contains("+-", parent.name) && len(parent.name) == 1, strings.Contains("*/%", parent.name) && len(parent.name) == 1
			switch {
			case !(lo || hi) || !(plo || phi):
				return false
			case hi && plo:
				return true
			case lo && phi:
				return false
			}
			return parent.args[0] == x // (a - b) - c, not a - (b - c)
		}
		return simpleUnder(parent)
	case rxNull, rxBoolT, rxDist:
		return simpleUnder(parent)
	case rxAnd, rxOr, rxNot:
		switch parent.kind {
		case rxAnd, rxOr, rxNot:
			switch x.kind {
			case rxNot, rxAnd:
				return parent.kind == rxAnd || parent.kind == rxOr
			default:
				return parent.kind == rxOr
			}
		case rxCast:
			return false
		case rxFunc, rxArray, rxCoal, rxMinMax, rxNullIf, rxCase:
			return true
		}
	}
	return false
}

// simpleUnder is isSimpleNode's test on the parent for operators, null
// tests and the like.
func simpleUnder(parent *rx) bool {
	switch parent.kind {
	case rxCast:
		return false
	case rxFunc, rxAnd, rxOr, rxNot, rxArray, rxCoal, rxMinMax, rxNullIf, rxCase:
		return true
	}
	return false
}

// walkRawNodes calls fn for n and the sub-expressions of the expression
// node kinds a CHECK constraint can hold.
func walkRawNodes(n *pg.Node, fn func(*pg.Node)) {
	if n == nil {
		return
	}
	fn(n)
	each := func(l []*pg.Node) {
		for _, x := range l {
			walkRawNodes(x, fn)
		}
	}
	switch {
	case n.GetAExpr() != nil:
		x := n.GetAExpr()
		walkRawNodes(x.Lexpr, fn)
		walkRawNodes(x.Rexpr, fn)
	case n.GetBoolExpr() != nil:
		each(n.GetBoolExpr().Args)
	case n.GetFuncCall() != nil:
		each(n.GetFuncCall().Args)
	case n.GetTypeCast() != nil:
		walkRawNodes(n.GetTypeCast().Arg, fn)
	case n.GetNullTest() != nil:
		walkRawNodes(n.GetNullTest().Arg, fn)
	case n.GetBooleanTest() != nil:
		walkRawNodes(n.GetBooleanTest().Arg, fn)
	case n.GetCoalesceExpr() != nil:
		each(n.GetCoalesceExpr().Args)
	case n.GetMinMaxExpr() != nil:
		each(n.GetMinMaxExpr().Args)
	case n.GetCaseExpr() != nil:
		c := n.GetCaseExpr()
		walkRawNodes(c.Arg, fn)
		each(c.Args)
		walkRawNodes(c.Defresult, fn)
	case n.GetCaseWhen() != nil:
		walkRawNodes(n.GetCaseWhen().Expr, fn)
		walkRawNodes(n.GetCaseWhen().Result, fn)
	case n.GetAArrayExpr() != nil:
		each(n.GetAArrayExpr().Elements)
	case n.GetList() != nil:
		each(n.GetList().Items)
	case n.GetCollateClause() != nil:
		walkRawNodes(n.GetCollateClause().Arg, fn)
	case n.GetAIndirection() != nil:
		walkRawNodes(n.GetAIndirection().Arg, fn)
	case n.GetRowExpr() != nil:
		each(n.GetRowExpr().Args)
	case n.GetSubLink() != nil:
		walkRawNodes(n.GetSubLink().Testexpr, fn)
	}
}
