package analyze

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// checkDefaultExpr is cookDefault's check of what a DEFAULT may contain.
func CheckDefaultExpr(n *pg.Node) error {
	var err error
	WalkRawNodes(n, func(x *pg.Node) {
		switch {
		case err != nil:
		case x.GetColumnRef() != nil:
			err = pgerr.NotSupported("cannot use column reference in DEFAULT expression")
		case x.GetSubLink() != nil:
			err = pgerr.NotSupported("cannot use subquery in DEFAULT expression")
		}
	})
	return err
}

// prettyDefault is pg_get_expr(adbin, adrelid, true) of column c's
// default, as ruleutils prints the analysed expression — the literal
// typed ('x'::text), coerced to the column's type with the assignment
// cast hidden — when nodetree.go models it.
func PrettyDefault(s *expr.Backend, c *catalog.ColumnDef) (string, bool) {
	raw, err := ParseExprText(c.Default)
	if err != nil || CheckDefaultExpr(raw) != nil {
		return "", false
	}
	a := NewExprAnalyzer(s, nil) // a default reads no column
	x, err := a.deparseTree(raw)
	if err != nil {
		return "", false
	}
	// coerce_to_target_type: to the type, then the length coercion of its
	// typmod (both hidden, as implicit casts are)
	t := c.Type()
	base := t
	base.Mod = -1
	if x = a.treeCoerce(x, base, true); t.Mod >= 0 {
		x = &treeNode{kind: tnCast, t: t, args: []*treeNode{x}, implicit: true, byFunc: true}
	}
	return printTree(x, true), true
}

// Printing the analysed form of an expression as PostgreSQL's ruleutils.c
// does (get_rule_expr): every operator parenthesised unless pretty, and in
// pretty mode the parentheses isSimpleNode asks for.

type treePrinter struct {
	buf    []byte
	pretty bool
	indent int
}

func printTree(x *treeNode, pretty bool) string {
	p := &treePrinter{pretty: pretty}
	p.Expr(x, false)
	return string(p.buf)
}

func (p *treePrinter) str(s string) { p.buf = append(p.buf, s...) }

// open and close write the parentheses an operator-like node puts around
// itself when not pretty-printing.
func (p *treePrinter) open() {
	if !p.pretty {
		p.buf = append(p.buf, '(')
	}
}

func (p *treePrinter) close() {
	if !p.pretty {
		p.buf = append(p.buf, ')')
	}
}

// paren is get_rule_expr_paren: in pretty mode, x is parenthesised unless
// isSimpleNode says it needs none under parent.
func (p *treePrinter) paren(x *treeNode, showImplicit bool, parent *treeNode) {
	need := p.pretty && !treeSimple(x, parent)
	if need {
		p.str("(")
	}
	p.Expr(x, showImplicit)
	if need {
		p.str(")")
	}
}

// keyword is appendContextKeyword with PRETTYFLAG_INDENT (on in both
// modes of pg_get_constraintdef): a new line, indented.
func (p *treePrinter) keyword(s string, before, after int) {
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

func (p *treePrinter) Expr(x *treeNode, showImplicit bool) {
	switch x.kind {
	case tnVar:
		p.str(types.QuoteIdent(x.name))
	case tnConst:
		p.constant(x, 0)
	case tnOp:
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
	case tnAnd, tnOr:
		word := " AND "
		if x.kind == tnOr {
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
	case tnNot:
		p.open()
		p.str("NOT ")
		p.paren(x.args[0], false, x)
		p.close()
	case tnCast:
		if x.implicit && !showImplicit {
			p.paren(x.args[0], false, x)
			return
		}
		arg := x.args[0]
		if arg.kind == tnConst && arg.t.OID == x.t.OID && arg.t.Mod < 0 {
			p.constant(arg, -1)
		} else {
			p.open()
			p.paren(arg, false, x)
			p.close()
		}
		p.str("::" + types.FormatType(x.t.OID, x.t.Mod))
	case tnFunc:
		p.str(types.QuoteIdent(x.name) + "(")
		p.list(x.args)
		p.str(")")
	case tnTrim:
		p.str("TRIM(" + x.name)
		if len(x.args) > 1 {
			p.str(" ")
			p.Expr(x.args[1], false)
		}
		p.str(" FROM ")
		p.Expr(x.args[0], false)
		p.str(")")
	case tnNullTest:
		p.open()
		p.paren(x.args[0], true, x)
		if x.not {
			p.str(" IS NOT NULL")
		} else {
			p.str(" IS NULL")
		}
		p.close()
	case tnBoolTest:
		p.open()
		p.paren(x.args[0], false, x)
		if x.not {
			p.str(" IS NOT " + x.name)
		} else {
			p.str(" IS " + x.name)
		}
		p.close()
	case tnDistinct:
		p.open()
		p.paren(x.args[0], true, x)
		p.str(" IS DISTINCT FROM ")
		p.paren(x.args[1], true, x)
		p.close()
	case tnScalarArrayOp:
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
	case tnArray:
		p.str("ARRAY[")
		p.list(x.args)
		p.str("]")
	case tnCoalesce:
		p.str("COALESCE(")
		p.list(x.args)
		p.str(")")
	case tnMinMax:
		p.str(x.name + "(")
		p.list(x.args)
		p.str(")")
	case tnNullIf:
		p.str("NULLIF(")
		p.list(x.args)
		p.str(")")
	case tnSQLValue:
		p.str(x.name)
	case tnCase:
		p.keyword("CASE", 0, 4)
		n := len(x.args) - 1
		for i := 0; i < n; i += 2 {
			p.keyword("WHEN ", 0, 0)
			p.Expr(x.args[i], false)
			p.str(" THEN ")
			p.Expr(x.args[i+1], true)
		}
		p.keyword("ELSE ", 0, 0)
		p.Expr(x.args[n], true)
		p.keyword("END", -4, 0)
	}
}

func (p *treePrinter) list(args []*treeNode) {
	for i, a := range args {
		if i > 0 {
			p.str(", ")
		}
		p.Expr(a, true)
	}
}

// constant is get_const_expr; showType -1 never labels the type, 0
// labels it unless the literal reads back as that type anyway.
func (p *treePrinter) constant(x *treeNode, showType int) {
	label := "::" + types.FormatType(x.t.OID, x.t.Mod)
	if x.null {
		p.str("NULL")
		if showType >= 0 {
			p.str(label)
		}
		return
	}
	needLabel := false
	switch x.t.OID {
	case types.OIDInt4:
		if strings.HasPrefix(x.text, "-") {
			p.str(simpleQuoteLiteral(x.text))
			needLabel = true
		} else {
			p.str(x.text)
		}
	case types.OIDNumeric:
		if x.text != "" && x.text[0] >= '0' && x.text[0] <= '9' && strings.ContainsAny(x.text, "eE.") {
			p.str(x.text)
		} else {
			p.str(simpleQuoteLiteral(x.text))
			needLabel = true
		}
		needLabel = needLabel || x.t.Mod >= 0
	case types.OIDBool:
		if x.text == "t" || x.text == "true" {
			p.str("true")
		} else {
			p.str("false")
		}
	case types.OIDUnknown:
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

// treeSimple is isSimpleNode with PRETTYFLAG_PAREN: whether x needs no
// parentheses as an argument of parent.
func treeSimple(x, parent *treeNode) bool {
	switch x.kind {
	case tnVar, tnConst, tnFunc, tnCoalesce, tnMinMax, tnNullIf, tnArray, tnCase, tnSQLValue, tnTrim:
		return true
	case tnCast:
		if x.byFunc {
			return true
		}
		return treeSimple(x.args[0], x)
	case tnOp:
		if parent.kind == tnOp {
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
	case tnNullTest, tnBoolTest, tnDistinct:
		return simpleUnder(parent)
	case tnAnd, tnOr, tnNot:
		switch parent.kind {
		case tnAnd, tnOr, tnNot:
			switch x.kind {
			case tnNot, tnAnd:
				return parent.kind == tnAnd || parent.kind == tnOr
			default:
				return parent.kind == tnOr
			}
		case tnCast:
			return false
		case tnFunc, tnArray, tnCoalesce, tnMinMax, tnNullIf, tnCase:
			return true
		}
	}
	return false
}

// simpleUnder is isSimpleNode's test on the parent for operators, null
// tests and the like.
func simpleUnder(parent *treeNode) bool {
	switch parent.kind {
	case tnCast:
		return false
	case tnFunc, tnAnd, tnOr, tnNot, tnArray, tnCoalesce, tnMinMax, tnNullIf, tnCase:
		return true
	}
	return false
}
