package difftest

import (
	"fmt"
	"strconv"
	"strings"
)

// Predicates and expressions. None of them can raise an error for some
// rows only, so a result never depends on which rows a plan evaluates
// them on: no division by columns, no arithmetic that can overflow, no
// scalar subquery that can return more than one row.

func (g *gen) cmpOp() string {
	return []string{"=", "<>", "<", "<=", ">", ">="}[g.pickW(3, 2, 2, 2, 2, 2)]
}

// less reports whether literal a sorts before literal b of a column of
// type t, where both are plain literals of it (else false).
func less(t typ, a, b string) bool {
	switch t {
	case tInt, tBig, tNum:
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		return err1 == nil && err2 == nil && x < y
	case tText, tDate, tTS:
		strip := func(s string) (string, bool) {
			s = strings.TrimPrefix(strings.TrimPrefix(s, "date "), "timestamp ")
			if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
				return "", false
			}
			return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), true
		}
		x, ok1 := strip(a)
		y, ok2 := strip(b)
		return ok1 && ok2 && x < y
	}
	return false
}

// value picks a value for c: mostly one of its rows' values, so that
// predicates select something, else one of its domain.
func (g *gen) value(c *rcol) value {
	if len(c.vals) > 0 && g.chance(0.7) {
		if v := c.vals[g.intn(len(c.vals))]; !v.null {
			return v
		}
	}
	if c.dom.t != c.t { // a derived column of another type (counts)
		return defaultDomain(c.t).nonNull(g.r)
	}
	return c.dom.nonNull(g.r)
}

func defaultDomain(t typ) domain {
	switch t {
	case tInt, tBig:
		return domain{t: t, lo: -2, hi: 25}
	case tNum:
		return domain{t: t, lo: -2000, hi: 5000}
	case tDate, tTS:
		return domain{t: t, lo: -20, hi: 200}
	}
	return domain{t: t}
}

// lit is a literal to compare c with, or a parameter in its place.
func (g *gen) lit(c cref) string {
	if g.paramP > 0 && g.chance(g.paramP) {
		return g.newParam(&param{t: c.c.t, col: c.c})
	}
	if g.chance(0.02) {
		return "NULL"
	}
	if g.chance(0.06) {
		// a literal of another type of the family
		switch c.c.t {
		case tInt:
			if g.chance(0.8) {
				return g.value(c.c).text + ".5"
			}
			return "3000000000"
		case tNum:
			return strconv.Itoa(g.intn(40) - 5)
		case tDate:
			return "timestamp " + quote(g.value(c.c).text+" 12:00:00")
		case tTS:
			return "date " + quote(g.value(c.c).text[:10])
		}
	}
	return g.value(c.c).lit(c.c.t, g.chance(0.3))
}

// typLit is a literal of type t, typed where the context may not say.
func (g *gen) typLit(t typ) string {
	return defaultDomain(t).nonNull(g.r).lit(t, true)
}

func (g *gen) newParam(p *param) string {
	g.params = append(g.params, p)
	return fmt.Sprintf("$%d", len(g.params))
}

// arrayLit is ARRAY[...] of values of c (typed, so the array's type is
// c's), or an array parameter.
func (g *gen) arrayLit(c cref) string {
	if g.paramP > 0 && g.chance(g.paramP) {
		return g.newParam(&param{t: c.c.t, col: c.c, array: true})
	}
	if g.chance(0.05) {
		return "'{}'::" + c.c.t.String() + "[]"
	}
	var els []string
	for range 1 + g.intn(5) {
		if g.chance(0.1) {
			els = append(els, "NULL")
			continue
		}
		els = append(els, g.value(c.c).lit(c.c.t, true))
	}
	if els[0] == "NULL" {
		return "array[" + strings.Join(els, ", ") + "]::" + c.c.t.String() + "[]"
	}
	return "array[" + strings.Join(els, ", ") + "]"
}

// pred is a boolean condition over sc; depth bounds nesting.
func (g *gen) pred(sc *scope, depth int) string {
	sub := 0
	if depth < 2 {
		sub = 1
	}
	nest := 0
	if depth < 3 {
		nest = 1
	}
	switch g.pickW(20, 8, 7, 8, 6, 6, 3, 3*nest, 8*nest, 5*sub, 5*sub, 2*sub, 4*sub, 3, 3, 3, 1, 2, 2) {
	case 0: // column op literal, or literal op column
		c, _ := g.col(sc, anyCol)
		if g.chance(0.25) {
			return fmt.Sprintf("%s %s %s", g.lit(c), g.cmpOp(), c.sql())
		}
		return fmt.Sprintf("%s %s %s", c.sql(), g.cmpOp(), g.lit(c))
	case 1: // column op column (another one: c op c is dull)
		c, _ := g.col(sc, anyCol)
		d, ok := g.col(sc, func(o *rcol) bool { return o.t.family() == c.c.t.family() && o != c.c })
		if !ok {
			d = c
		}
		return fmt.Sprintf("%s %s %s", c.sql(), g.cmpOp(), d.sql())
	case 2: // [NOT] BETWEEN [SYMMETRIC]
		c, ok := g.col(sc, ofType(typ.ordered))
		if !ok {
			return g.pred(sc, depth)
		}
		not, sym := "", ""
		if g.chance(0.2) {
			not = "not "
		}
		if g.chance(0.1) {
			sym = "symmetric "
		}
		lo, hi := g.lit(c), g.lit(c)
		if g.chance(0.8) && g.paramP == 0 && less(c.c.t, hi, lo) {
			lo, hi = hi, lo // mostly a range that holds something
		}
		return fmt.Sprintf("%s %sbetween %s%s and %s", c.sql(), not, sym, lo, hi)
	case 3: // [NOT] IN (list)
		c, _ := g.col(sc, anyCol)
		var els []string
		for range 1 + g.intn(5) {
			els = append(els, g.lit(c))
		}
		if g.chance(0.1) {
			els = append(els, "NULL")
		}
		not := ""
		if g.chance(0.25) {
			not = "not "
		}
		return fmt.Sprintf("%s %sin (%s)", c.sql(), not, strings.Join(els, ", "))
	case 4: // op ANY / ALL (array)
		c, _ := g.col(sc, anyCol)
		op, q := "=", "any"
		switch g.pickW(6, 2, 2) {
		case 1:
			op, q = "<>", "all"
		case 2:
			op, q = g.cmpOp(), []string{"any", "all", "some"}[g.intn(3)]
		}
		return fmt.Sprintf("%s %s %s(%s)", c.sql(), op, q, g.arrayLit(c))
	case 5: // IS [NOT] NULL
		c, _ := g.col(sc, anyCol)
		if g.chance(0.5) {
			return c.sql() + " is null"
		}
		return c.sql() + " is not null"
	case 6: // a boolean column
		c, ok := g.col(sc, ofType(func(t typ) bool { return t == tBool }))
		if !ok {
			return g.pred(sc, depth)
		}
		return c.sql() + []string{"", " is true", " is not false", " is unknown", " is not true", " = false"}[g.intn(6)]
	case 7:
		return "not (" + g.pred(sc, depth+1) + ")"
	case 8:
		op := " or "
		if g.chance(0.35) {
			op = " and "
		}
		return "(" + g.pred(sc, depth+1) + op + g.pred(sc, depth+1) + ")"
	case 9:
		return g.existsPred(sc, depth)
	case 10:
		return g.inSubPred(sc, depth)
	case 11:
		return g.quantSubPred(sc, depth)
	case 12:
		return g.scalarSubPred(sc, depth)
	case 13: // LIKE
		c, ok := g.col(sc, ofType(func(t typ) bool { return t == tText }))
		if !ok {
			return g.pred(sc, depth)
		}
		op := []string{"like", "not like", "ilike"}[g.pickW(6, 2, 1)]
		pat := []string{"a%", "%b", "_", "%", "a_%", "", "%a%", "x\\%%", "O'%", "__"}[g.intn(10)]
		return fmt.Sprintf("%s %s %s", c.sql(), op, quote(pat))
	case 14: // coalesce
		c, _ := g.col(sc, anyCol)
		return fmt.Sprintf("coalesce(%s, %s) %s %s", c.sql(), g.lit(c), g.cmpOp(), g.lit(c))
	case 15: // arithmetic on integers
		c, ok := g.col(sc, ofType(typ.integral))
		if !ok {
			return g.pred(sc, depth)
		}
		switch g.intn(3) {
		case 0:
			return fmt.Sprintf("%s + %d %s %s", c.sql(), g.intn(5)+1, g.cmpOp(), g.lit(c))
		case 1:
			return fmt.Sprintf("%s %% %d = %d", c.sql(), g.intn(3)+2, g.intn(3)-1)
		default:
			return fmt.Sprintf("abs(%s) %s %s", c.sql(), g.cmpOp(), g.lit(c))
		}
	case 16: // row comparison
		c, _ := g.col(sc, anyCol)
		d, _ := g.col(sc, anyCol)
		op := g.cmpOp()
		if c.c.t == tBool || d.c.t == tBool {
			op = "="
		}
		return fmt.Sprintf("(%s, %s) %s (%s, %s)", c.sql(), d.sql(), op, g.lit(c), g.lit(d))
	case 17: // IS [NOT] DISTINCT FROM
		c, _ := g.col(sc, anyCol)
		not := ""
		if g.chance(0.5) {
			not = "not "
		}
		var rhs string
		if g.chance(0.4) {
			d, _ := g.col(sc, func(o *rcol) bool { return o.t.family() == c.c.t.family() })
			rhs = d.sql()
		} else {
			rhs = g.lit(c)
		}
		return fmt.Sprintf("%s is %sdistinct from %s", c.sql(), not, rhs)
	default: // an expression compared with a literal
		e := g.valueExpr(sc, depth+1)
		if e.t == tBool {
			return e.sql
		}
		return fmt.Sprintf("%s %s %s", e.sql, g.cmpOp(), g.typLit(e.t))
	}
}

// subScope is the scope of a subquery over one table (sometimes two,
// joined on an equality), nested in sc.
func (g *gen) subScope(sc *scope) (string, *scope) {
	r := g.tableRel(g.subqueryTable())
	inner := &scope{rels: []*rel{r}, outer: sc}
	from := r.ref()
	if g.chance(0.15) {
		// a join, if a small one: it runs for every row around it
		r2 := g.tableRel(g.subqueryTable())
		if eq, _, ok := g.joinEquality([]*rel{r}, r2, float64(max(r.rows, 1)), false); ok && r.rows*r2.rows <= maxRows {
			from += " join " + r2.ref() + " on " + eq
			inner.rels = append(inner.rels, r2)
		}
	}
	return from, inner
}

// maxSubqueryRows bounds the tables a subquery reads: a correlated one
// runs once per row around it.
const maxSubqueryRows = 250

// maxCorrelatedWork bounds the rows a correlated subquery reads over all
// the rows of the query around it, so that no query takes long (lockd
// runs it once per row, without turning it into a join).
const maxCorrelatedWork = 150_000

// subqueryTable is a table of at most maxSubqueryRows rows, if there is
// one.
func (g *gen) subqueryTable() *table {
	var small []*table
	for _, t := range g.s.tables {
		if len(t.rows) <= maxSubqueryRows {
			small = append(small, t)
		}
	}
	if len(small) == 0 {
		return g.randomTable()
	}
	return small[g.intn(len(small))]
}

// corr correlates a subquery with the query around it: a column of the
// subquery compared with one of sc (or of the query around that).
func (g *gen) corr(inner, outer *scope) (string, bool) {
	o := outer
	if o.outer != nil && g.chance(0.2) {
		o = o.outer
	}
	oc, _ := g.col(o, anyCol)
	ic, ok := g.col(inner, func(c *rcol) bool { return c.t.family() == oc.c.t.family() })
	if !ok {
		return "", false
	}
	op := "="
	if g.chance(0.2) {
		op = g.cmpOp()
	}
	return fmt.Sprintf("%s %s %s", ic.sql(), op, oc.sql()), true
}

// subWhere is the WHERE of a subquery: usually a correlation, and
// sometimes conditions of its own.
func (g *gen) subWhere(inner, outer *scope, depth int, correlate float64) string {
	innerRows := 1.0
	for _, r := range inner.rels {
		innerRows *= float64(max(r.rows, 1))
	}
	if outer.rows*innerRows > maxCorrelatedWork {
		correlate = 0 // it would run for each of many rows
	}
	var conds []string
	if g.chance(correlate) {
		if c, ok := g.corr(inner, outer); ok {
			conds = append(conds, c)
		}
	}
	for range g.pickW(3, 3, 1) {
		conds = append(conds, g.pred(inner, depth+1))
	}
	if len(conds) == 0 {
		return ""
	}
	return " where " + strings.Join(conds, " and ")
}

func (g *gen) existsPred(sc *scope, depth int) string {
	from, inner := g.subScope(sc)
	sel := []string{"1", "*", "NULL"}[g.pickW(6, 2, 1)]
	not := ""
	if g.chance(0.35) {
		not = "not "
	}
	return fmt.Sprintf("%sexists (select %s from %s%s)", not, sel, from, g.subWhere(inner, sc, depth, 0.75))
}

func (g *gen) inSubPred(sc *scope, depth int) string {
	c, _ := g.col(sc, anyCol)
	from, inner := g.subScope(sc)
	ic, ok := g.col(inner, func(o *rcol) bool { return o.t.family() == c.c.t.family() })
	if !ok {
		return g.pred(sc, depth)
	}
	not := ""
	if g.chance(0.3) {
		not = "not "
	}
	where := g.subWhere(inner, sc, depth, 0.3)
	switch g.pickW(8, 1, 1) {
	case 1: // a grouped subquery
		gc, _ := g.col(inner, anyCol)
		return fmt.Sprintf("%s %sin (select max(%s) from %s%s group by %s)", c.sql(), not, ic.sql(), from, where, gc.sql())
	case 2: // a row of two columns
		d, _ := g.col(sc, anyCol)
		id, ok := g.col(inner, func(o *rcol) bool { return o.t.family() == d.c.t.family() })
		if ok {
			return fmt.Sprintf("(%s, %s) %sin (select %s, %s from %s%s)", c.sql(), d.sql(), not, ic.sql(), id.sql(), from, where)
		}
	}
	return fmt.Sprintf("%s %sin (select %s from %s%s)", c.sql(), not, ic.sql(), from, where)
}

// quantSubPred is op ANY / ALL (subquery).
func (g *gen) quantSubPred(sc *scope, depth int) string {
	c, ok := g.col(sc, ofType(typ.ordered))
	if !ok {
		return g.pred(sc, depth)
	}
	from, inner := g.subScope(sc)
	ic, ok := g.col(inner, func(o *rcol) bool { return o.t.family() == c.c.t.family() })
	if !ok {
		return g.pred(sc, depth)
	}
	q := []string{"any", "all", "some"}[g.intn(3)]
	return fmt.Sprintf("%s %s %s (select %s from %s%s)", c.sql(), g.cmpOp(), q, ic.sql(), from, g.subWhere(inner, sc, depth, 0.3))
}

// scalarSub is a subquery that returns one row: an aggregate without
// GROUP BY. Its type is returned with it.
func (g *gen) scalarSub(sc *scope, depth int, want func(typ) bool) (string, typ, bool) {
	from, inner := g.subScope(sc)
	if want(tBig) && g.chance(0.3) {
		return fmt.Sprintf("(select count(*) from %s%s)", from, g.subWhere(inner, sc, depth, 0.6)), tBig, true
	}
	ic, ok := g.col(inner, func(c *rcol) bool { return c.t.ordered() && want(c.t) })
	if !ok {
		return "", 0, false
	}
	where := g.subWhere(inner, sc, depth, 0.6)
	fn := []string{"min", "max"}[g.intn(2)]
	t := ic.c.t
	if ic.c.t.numeric() && g.chance(0.3) {
		fn = "sum"
		if t == tInt {
			t = tBig
		} else {
			t = tNum
		}
	}
	return fmt.Sprintf("(select %s(%s) from %s%s)", fn, ic.sql(), from, where), t, true
}

func (g *gen) scalarSubPred(sc *scope, depth int) string {
	c, ok := g.col(sc, ofType(typ.ordered))
	if !ok {
		return g.pred(sc, depth)
	}
	s, _, ok := g.scalarSub(sc, depth, func(t typ) bool { return t.family() == c.c.t.family() })
	if !ok {
		return g.pred(sc, depth)
	}
	if g.chance(0.5) {
		return fmt.Sprintf("%s %s %s", s, g.cmpOp(), c.sql())
	}
	return fmt.Sprintf("%s %s %s", c.sql(), g.cmpOp(), s)
}

// valueExpr is an expression over sc for a select list (or a GROUP BY
// key): functions and operators on a column, CASE, COALESCE, a scalar
// subquery.
func (g *gen) valueExpr(sc *scope, depth int) item {
	c, _ := g.col(sc, anyCol)
	x := c.sql()
	it := func(sql string, t typ) item { return item{sql: sql, t: t, exact: true} }
	switch g.pickW(10, 2, 2, 2, 1, 2) {
	case 1:
		return it(fmt.Sprintf("coalesce(%s, %s)", x, g.value(c.c).lit(c.c.t, true)), c.c.t)
	case 2:
		return it(fmt.Sprintf("case when %s then %s else %s end", g.pred(sc, depth+1), quote("yes"), quote("no")), tText)
	case 3:
		return it(fmt.Sprintf("%s is null", x), tBool)
	case 4:
		if depth < 2 {
			if s, t, ok := g.scalarSub(sc, depth, func(typ) bool { return true }); ok {
				return it(s, t)
			}
		}
	case 5:
		if c.c.t != tBool {
			return it(fmt.Sprintf("nullif(%s, %s)", x, g.value(c.c).lit(c.c.t, true)), c.c.t)
		}
	}
	switch c.c.t {
	case tInt, tBig:
		switch g.intn(7) {
		case 0:
			return it(fmt.Sprintf("%s + %d", x, g.intn(9)+1), c.c.t)
		case 1:
			return it(fmt.Sprintf("%s - %d", x, g.intn(9)+1), c.c.t)
		case 2:
			return it(fmt.Sprintf("%s * %d", x, g.intn(3)+2), c.c.t)
		case 3:
			return it(fmt.Sprintf("%s / %d", x, g.intn(3)+2), c.c.t)
		case 4:
			return it(fmt.Sprintf("%s %% %d", x, g.intn(3)+2), c.c.t)
		case 5:
			return it(fmt.Sprintf("abs(%s)", x), c.c.t)
		default:
			return it(x+"::text", tText)
		}
	case tNum:
		switch g.intn(6) {
		case 0:
			return it(x+" * 2", tNum)
		case 1:
			return it(x+" + 1.25", tNum)
		case 2:
			return it("round("+x+", 1)", tNum)
		case 3:
			return it("trunc("+x+")", tNum)
		case 4: // the quotient's scale follows the operands' values
			return item{sql: x + " / 4", t: tNum}
		default:
			return it(x+"::text", tText)
		}
	case tText:
		switch g.intn(6) {
		case 0:
			return it("upper("+x+")", tText)
		case 1:
			return it("lower("+x+")", tText)
		case 2:
			return it("length("+x+")", tInt)
		case 3:
			return it(x+" || 'x'", tText)
		case 4:
			return it("substr("+x+", 1, 2)", tText)
		default:
			return it("coalesce("+x+", 'none')", tText)
		}
	case tBool:
		switch g.intn(3) {
		case 0:
			return it("not "+x, tBool)
		case 1:
			return it(x+"::text", tText)
		default:
			return it("coalesce("+x+", false)", tBool)
		}
	case tDate:
		switch g.intn(4) {
		case 0:
			return it(x+" + 7", tDate)
		case 1:
			return it(x+" - date '2024-01-01'", tInt)
		case 2:
			return it("extract(month from "+x+")", tNum)
		default:
			return it(x+"::timestamp", tTS)
		}
	default: // tTS
		switch g.intn(4) {
		case 0:
			return it(x+" + interval '1 hour'", tTS)
		case 1:
			if g.intn(2) == 0 {
				return it("date_trunc('day', "+x+")", tTS)
			}
			return it(x+" - interval '1 day'", tTS)
		case 2:
			return it(x+"::date", tDate)
		default:
			return it(x+"::text", tText)
		}
	}
}
