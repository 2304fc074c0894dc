package difftest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// gen generates the queries of one round over its schema. One gen makes
// one query (aliases and parameters are numbered per query).
type gen struct {
	r      *rand.Rand
	s      *schema
	ex     Exclusions
	nAlias int
	params []*param
	paramP float64 // probability that a literal is written as a parameter
}

// maxRows bounds the estimated rows of a FROM clause's joins, so that no
// query takes long on either server.
const maxRows = 3000

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) intn(n int) int        { return g.r.IntN(n) }

// pickW returns an index drawn with the given weights.
func (g *gen) pickW(w ...int) int {
	sum := 0
	for _, x := range w {
		sum += x
	}
	n := g.intn(sum)
	for i, x := range w {
		if n < x {
			return i
		}
		n -= x
	}
	return len(w) - 1
}

func (g *gen) alias() string {
	g.nAlias++
	return fmt.Sprintf("a%d", g.nAlias)
}

// scope is the relations a clause may name: those of its own SELECT, and
// through outer those of the SELECTs it is nested in.
type scope struct {
	rels  []*rel
	outer *scope
	rows  float64 // estimated rows of its FROM (0: not known)
}

func (sc *scope) cols(ok func(*rcol) bool) []cref {
	var out []cref
	for _, r := range sc.rels {
		for _, c := range r.cols {
			if ok == nil || ok(c) {
				out = append(out, cref{r, c})
			}
		}
	}
	return out
}

func (g *gen) col(sc *scope, ok func(*rcol) bool) (cref, bool) {
	cs := sc.cols(ok)
	if len(cs) == 0 {
		return cref{}, false
	}
	return cs[g.intn(len(cs))], true
}

func ofType(ok func(typ) bool) func(*rcol) bool { return func(c *rcol) bool { return ok(c.t) } }

func anyCol(*rcol) bool { return true }

func (g *gen) tableRel(t *table) *rel {
	r := &rel{alias: g.alias(), from: t.name, rows: len(t.rows), tab: t}
	for _, c := range t.cols {
		r.cols = append(r.cols, &rcol{name: c.name, t: c.t, dom: c.dom, ndv: c.ndv, unique: c.unique, vals: c.vals, src: c})
	}
	return r
}

func (g *gen) randomTable() *table { return g.s.tables[g.intn(len(g.s.tables))] }

// randomRel is a table, or sometimes a derived table over one.
func (g *gen) randomRel(depth int) *rel {
	if depth == 0 && g.chance(0.12) {
		return g.derivedRel()
	}
	return g.tableRel(g.randomTable())
}

// derivedRel is a subquery in FROM over one table: some of its columns,
// filtered, sometimes DISTINCT, grouped with a count, or cut by a LIMIT
// that an ORDER BY of every column makes deterministic.
func (g *gen) derivedRel() *rel {
	base := g.tableRel(g.randomTable())
	sc := &scope{rels: []*rel{base}}
	q := &selectQ{from: []fromItem{{base: base}}}
	out := &rel{alias: g.alias(), rows: base.rows}
	perm := g.r.Perm(len(base.cols))
	for i, j := range perm[:1+g.intn(min(3, len(perm)))] {
		c := *base.cols[j]
		c.name = fmt.Sprintf("c%d", i+1)
		q.items = append(q.items, item{sql: cref{base, base.cols[j]}.sql(), alias: c.name, t: c.t, exact: true})
		out.cols = append(out.cols, &c)
	}
	for range g.intn(3) {
		q.where = append(q.where, g.pred(sc, 1))
	}
	switch g.pickW(6, 2, 2, 1) {
	case 1:
		q.distinct = true
		for _, c := range out.cols {
			c.unique = false
		}
	case 2:
		for _, it := range q.items {
			q.groupBy = append(q.groupBy, it.sql)
		}
		name := fmt.Sprintf("c%d", len(q.items)+1)
		q.items = append(q.items, item{sql: "count(*)", alias: name, t: tBig, exact: true})
		out.cols = append(out.cols, &rcol{name: name, t: tBig, dom: domain{t: tBig, lo: 1, hi: 5}, ndv: 5})
	case 3:
		for i := range q.items {
			q.order = append(q.order, orderKey{pos: i, desc: g.chance(0.5)})
		}
		n := 1 + g.intn(10)
		q.limit = strconv.Itoa(n)
		out.rows = min(out.rows, n)
	}
	out.from = "(" + q.sql() + ")"
	return out
}

// genQuery makes query number num: usually a SELECT, sometimes a set
// operation; with prepared set, with parameters in place of literals.
func (g *gen) genQuery(num int, prepared bool) *query {
	q := &query{num: num}
	if prepared {
		g.paramP = 0.5
	}
	if g.chance(0.12) {
		q.set = g.genSetQ()
	} else {
		var sc *scope
		q.sel, sc = g.genSelect()
		if prepared && len(g.params) == 0 {
			if c, ok := g.col(sc, anyCol); ok {
				g.paramP = 1
				q.sel.where = append(q.sel.where, fmt.Sprintf("%s %s %s", c.sql(), g.cmpOp(), g.lit(c)))
			}
		}
	}
	q.params = g.params
	return q
}

// relCount is how many relations a FROM clause joins: one to four.
func (g *gen) relCount() int { return 1 + g.pickW(25, 35, 25, 15) }

// genSelect makes a SELECT with its FROM, WHERE, select list, grouping,
// ordering and limits.
func (g *gen) genSelect() (*selectQ, *scope) {
	q, sc := g.genFrom(g.relCount())
	for range g.pickW(4, 4, 2, 1) {
		q.where = append(q.where, g.pred(sc, 0))
	}
	single := false
	switch g.pickW(60, 28, 12) {
	case 0:
		g.plainItems(q, sc)
	case 1:
		g.groupedItems(q, sc)
	default:
		g.aggItems(q, sc)
		single = true
	}
	g.orderLimit(q, single)
	return q, sc
}

// genFrom makes the FROM clause of n relations: join chains separated by
// commas, each relation joined to an earlier one by an equality (in ON,
// or in WHERE for a comma), so the result stays small.
func (g *gen) genFrom(n int) (*selectQ, *scope) {
	first := g.randomRel(0)
	q := &selectQ{from: []fromItem{{base: first}}}
	sc := &scope{rels: []*rel{first}}
	chain := []*rel{first} // the relations of the last FROM item
	est := float64(max(first.rows, 1))
	for range n - 1 {
		mark := len(g.params)
		nr := g.randomRel(0)
		comma := g.chance(0.2)
		kind := []string{"join", "left join", "right join", "full join", "cross join"}[g.pickW(45, 25, 12, 10, 8)]
		if comma {
			kind = ","
		}
		if kind == "cross join" || (comma && g.chance(0.2)) {
			if est*float64(max(nr.rows, 1)) <= maxRows {
				if comma {
					q.from = append(q.from, fromItem{base: nr})
					chain = []*rel{nr}
				} else {
					q.from[len(q.from)-1].joins = append(q.from[len(q.from)-1].joins, joinStep{kind: kind, rel: nr})
					chain = append(chain, nr)
				}
				sc.rels = append(sc.rels, nr)
				est *= float64(max(nr.rows, 1))
				continue
			}
			kind = "join"
		}
		partners := chain
		if comma {
			partners = sc.rels
		}
		eq, newEst, ok := g.joinEquality(partners, nr, est, kind == "full join" && g.ex.FullJoinNonEquiOn)
		if !ok {
			g.params = g.params[:mark] // nr's, if a derived table had any
			break
		}
		est = newEst
		sc.rels = append(sc.rels, nr)
		if comma {
			q.from = append(q.from, fromItem{base: nr})
			q.where = append(q.where, eq)
			chain = []*rel{nr}
			continue
		}
		chain = append(chain, nr)
		on := []string{eq}
		joinScope := &scope{rels: slices.Clone(chain)}
		if kind != "full join" || !g.ex.FullJoinNonEquiOn {
			if g.chance(0.1) {
				if eq2, _, ok := g.joinEquality(chain[:len(chain)-1], nr, est, false); ok {
					on = append(on, eq2)
				}
			}
			if g.chance(0.2) {
				on = append(on, g.pred(joinScope, 1))
			}
		}
		q.from[len(q.from)-1].joins = append(q.from[len(q.from)-1].joins, joinStep{kind: kind, rel: nr, on: on})
	}
	sc.rows = est
	return q, sc
}

// joinEquality picks a column of nr and one of partners of the same
// family whose equality keeps the estimated rows under maxRows.
func (g *gen) joinEquality(partners []*rel, nr *rel, est float64, eqOnly bool) (string, float64, bool) {
	type pair struct{ a, b cref }
	var pairs []pair
	for _, p := range partners {
		for _, a := range p.cols {
			for _, b := range nr.cols {
				if a.t.family() == b.t.family() {
					pairs = append(pairs, pair{cref{p, a}, cref{nr, b}})
				}
			}
		}
	}
	g.r.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	if g.chance(0.9) {
		// mostly columns that share values, so that the join finds rows
		slices.SortStableFunc(pairs, func(x, y pair) int {
			ox, oy := overlap(x.a.c, x.b.c), overlap(y.a.c, y.b.c)
			switch {
			case ox && !oy:
				return -1
			case oy && !ox:
				return 1
			}
			return 0
		})
	}
	op := "="
	if !eqOnly && g.chance(0.05) {
		op = g.cmpOp()
	}
	for _, p := range pairs {
		e := est * float64(max(nr.rows, 1)) / float64(max(p.a.c.ndv, p.b.c.ndv, 1))
		if op != "=" {
			e = est * float64(max(nr.rows, 1)) / 3 // PostgreSQL's guess for an inequality
		}
		if e <= maxRows {
			if g.chance(0.5) {
				return fmt.Sprintf("%s %s %s", p.a.sql(), op, p.b.sql()), max(e, est), true
			}
			return fmt.Sprintf("%s %s %s", p.b.sql(), op, p.a.sql()), max(e, est), true
		}
	}
	return "", 0, false
}

// plainItems makes the select list of an ungrouped SELECT.
func (g *gen) plainItems(q *selectQ, sc *scope) {
	if g.chance(0.07) {
		q.star = true
		for _, f := range q.from {
			for _, r := range append([]*rel{f.base}, joinedRels(f)...) {
				for _, c := range r.cols {
					q.items = append(q.items, item{sql: cref{r, c}.sql(), t: c.t, exact: true})
				}
			}
		}
		return
	}
	for range 1 + g.intn(5) {
		var it item
		if g.chance(0.7) {
			c, _ := g.col(sc, anyCol)
			it = item{sql: c.sql(), t: c.c.t, exact: true}
		} else {
			it = g.valueExpr(sc, 0)
		}
		q.items = append(q.items, it)
	}
	g.aliases(q)
	if g.chance(0.15) && allExact(q.items) {
		q.distinct = true
	}
}

func joinedRels(f fromItem) []*rel {
	var out []*rel
	for _, j := range f.joins {
		out = append(out, j.rel)
	}
	return out
}

func allExact(items []item) bool {
	for _, it := range items {
		if !it.exact {
			return false
		}
	}
	return true
}

func (g *gen) aliases(q *selectQ) {
	for i := range q.items {
		if g.chance(0.2) {
			q.items[i].alias = fmt.Sprintf("x%d", i+1)
		}
	}
}

// groupedItems makes a GROUP BY of one or two keys, a select list of keys
// and aggregates, and sometimes a HAVING.
func (g *gen) groupedItems(q *selectQ, sc *scope) {
	var keys []item
	for range 1 + g.intn(2) {
		var k item
		mark := len(g.params)
		if g.chance(0.8) {
			c, _ := g.col(sc, anyCol)
			k = item{sql: c.sql(), t: c.c.t, exact: true}
		} else {
			k = g.valueExpr(sc, 1)
		}
		if !k.exact || slices.ContainsFunc(keys, func(o item) bool { return o.sql == k.sql }) {
			g.params = g.params[:mark] // dropped with k
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		c, _ := g.col(sc, anyCol)
		keys = append(keys, item{sql: c.sql(), t: c.c.t, exact: true})
	}
	for _, k := range keys {
		q.groupBy = append(q.groupBy, k.sql)
		if g.chance(0.85) {
			q.items = append(q.items, k)
		}
	}
	g.r.Shuffle(len(q.items), func(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] })
	for range 1 + g.intn(3) {
		q.items = append(q.items, g.aggregate(sc))
	}
	// GROUP BY 1 names the first output column where it is a key
	for i, k := range q.groupBy {
		if p := slices.IndexFunc(q.items, func(it item) bool { return it.sql == k }); p >= 0 && g.chance(0.15) {
			q.groupBy[i] = strconv.Itoa(p + 1)
		}
	}
	g.aliases(q)
	for range g.pickW(5, 4, 1) {
		q.having = append(q.having, g.havingPred(sc, keys))
	}
}

// aggItems makes a select list of aggregates without GROUP BY: one row.
func (g *gen) aggItems(q *selectQ, sc *scope) {
	for range 1 + g.intn(3) {
		q.items = append(q.items, g.aggregate(sc))
	}
	g.aliases(q)
	if g.chance(0.15) {
		q.having = append(q.having, g.havingPred(sc, nil))
	}
}

// aggregate is count, sum, avg, min, max, bool_and or bool_or, sometimes
// over DISTINCT values or with a FILTER.
func (g *gen) aggregate(sc *scope) item {
	var it item
	switch g.pickW(4, 3, 4, 3, 4, 1) {
	case 0:
		it = item{sql: "count(*)", t: tBig, exact: true}
	case 1:
		c, _ := g.col(sc, anyCol)
		d := ""
		if g.chance(0.4) {
			d = "distinct "
		}
		it = item{sql: "count(" + d + c.sql() + ")", t: tBig, exact: true}
	case 2:
		c, ok := g.col(sc, ofType(typ.numeric))
		if !ok {
			return item{sql: "count(*)", t: tBig, exact: true}
		}
		arg := c.sql()
		if g.chance(0.15) && c.c.t.integral() {
			arg += " + 1"
		}
		t := tBig
		if c.c.t != tInt {
			t = tNum
		}
		it = item{sql: "sum(" + arg + ")", t: t, exact: true}
	case 3:
		c, ok := g.col(sc, ofType(typ.numeric))
		if !ok {
			return item{sql: "count(*)", t: tBig, exact: true}
		}
		it = item{sql: "avg(" + c.sql() + ")", t: tNum, exact: false}
	case 4:
		c, ok := g.col(sc, ofType(typ.ordered))
		if !ok {
			return item{sql: "count(*)", t: tBig, exact: true}
		}
		fn := "min"
		if g.chance(0.5) {
			fn = "max"
		}
		arg := c.sql()
		if g.chance(0.1) {
			arg = fmt.Sprintf("coalesce(%s, %s)", arg, g.lit(c))
		}
		it = item{sql: fn + "(" + arg + ")", t: c.c.t, exact: true}
	default:
		c, ok := g.col(sc, ofType(func(t typ) bool { return t == tBool }))
		if !ok {
			return item{sql: "count(*)", t: tBig, exact: true}
		}
		fn := "bool_and"
		if g.chance(0.5) {
			fn = "bool_or"
		}
		it = item{sql: fn + "(" + c.sql() + ")", t: tBool, exact: true}
	}
	if g.chance(0.08) {
		it.sql += " filter (where " + g.pred(sc, 2) + ")"
	}
	it.agg = true
	return it
}

// havingPred compares an aggregate with a literal, or a group key.
func (g *gen) havingPred(sc *scope, keys []item) string {
	if len(keys) > 0 && g.chance(0.2) {
		k := keys[g.intn(len(keys))]
		return fmt.Sprintf("%s is not null", k.sql)
	}
	a := g.aggregate(sc)
	switch a.t {
	case tBig:
		if a.sql[:5] == "count" {
			return fmt.Sprintf("%s %s %s", a.sql, g.cmpOp(), g.countLit())
		}
	case tBool:
		return a.sql
	}
	if g.chance(0.1) {
		return fmt.Sprintf("%s is null", a.sql)
	}
	return fmt.Sprintf("%s %s %s", a.sql, g.cmpOp(), g.typLit(a.t))
}

// countLit is a small count, as a literal or a parameter.
func (g *gen) countLit() string {
	if g.paramP > 0 && g.chance(g.paramP) {
		return g.newParam(&param{t: tBig, count: true})
	}
	return strconv.Itoa(g.intn(6))
}

// orderLimit adds ORDER BY over output columns and LIMIT / OFFSET. A
// LIMIT comes only with an ORDER BY, or on a single row.
func (g *gen) orderLimit(q *selectQ, single bool) {
	if single {
		if g.chance(0.05) {
			q.limit = "1"
		}
		return
	}
	q.order, q.limit, q.offset = g.orderOf(q.items)
}

func (g *gen) orderOf(items []item) ([]orderKey, string, string) {
	if !g.chance(0.55) {
		return nil, "", ""
	}
	var cand []int
	for i, it := range items {
		if it.exact {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return nil, "", ""
	}
	g.r.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
	n := 1 + g.intn(min(3, len(cand)))
	if g.chance(0.4) {
		n = len(cand)
	}
	var keys []orderKey
	for _, p := range cand[:n] {
		k := orderKey{pos: p, desc: g.chance(0.4), form: g.pickW(5, 3, 2)}
		if g.chance(0.3) {
			k.nulls = "first"
			if g.chance(0.5) {
				k.nulls = "last"
			}
		}
		keys = append(keys, k)
	}
	var limit, offset string
	if g.chance(0.45) {
		limit = g.countLitN(15)
		if g.chance(0.15) {
			limit = "fetch first " + limit + " rows only"
		}
	}
	if g.chance(0.25) {
		offset = g.countLitN(8)
	}
	return keys, limit, offset
}

func (g *gen) countLitN(n int) string {
	if g.paramP > 0 && g.chance(g.paramP/2) {
		return g.newParam(&param{t: tBig, count: true})
	}
	return strconv.Itoa(g.intn(n))
}

// genSetQ makes UNION, INTERSECT or EXCEPT (ALL or not) of two or three
// SELECTs with matching column types.
func (g *gen) genSetQ() *setQ {
	first := g.armSelect(nil)
	var types []typ
	for _, it := range first.items {
		types = append(types, it.t)
	}
	s := &setQ{arms: []*selectQ{first}}
	for range 1 + g.pickW(5, 1) {
		s.arms = append(s.arms, g.armSelect(types))
		op := []string{"union", "intersect", "except"}[g.pickW(5, 2, 2)]
		if g.chance(0.4) {
			op += " all"
		}
		s.ops = append(s.ops, op)
	}
	s.order, s.limit, s.offset = g.orderOf(first.items)
	return s
}

// armSelect is one SELECT of a set operation, of one or two relations,
// whose columns print equal values alike. With types set, its columns
// take those types (or ones that print the same: integer and bigint,
// date and timestamp).
func (g *gen) armSelect(types []typ) *selectQ {
	q, sc := g.genFrom(1 + g.pickW(3, 1))
	for range g.intn(3) {
		q.where = append(q.where, g.pred(sc, 0))
	}
	if types == nil {
		if g.chance(0.2) {
			c, _ := g.col(sc, anyCol)
			q.items = []item{{sql: c.sql(), t: c.c.t, exact: true}, {sql: "count(*)", t: tBig, exact: true, agg: true}}
			q.groupBy = []string{c.sql()}
			return q
		}
		for range 1 + g.intn(3) {
			c, _ := g.col(sc, anyCol)
			it := item{sql: c.sql(), t: c.c.t, exact: true}
			if g.chance(0.2) {
				mark := len(g.params)
				if e := g.valueExpr(sc, 0); e.exact && e.t != tNum {
					it = e
				} else {
					g.params = g.params[:mark] // dropped with e
				}
			}
			q.items = append(q.items, it)
		}
		g.aliases(q)
		return q
	}
	for _, t := range types {
		c, ok := g.col(sc, func(c *rcol) bool {
			return c.t == t || (c.t.integral() && t.integral()) || (c.t.family() == 3 && t.family() == 3)
		})
		switch {
		case ok && g.chance(0.85):
			q.items = append(q.items, item{sql: c.sql(), t: c.c.t, exact: true})
		case g.chance(0.3):
			q.items = append(q.items, item{sql: "NULL", t: t, exact: true})
		default:
			q.items = append(q.items, item{sql: g.typLit(t), t: t, exact: true})
		}
	}
	return q
}

// overlap reports whether two columns hold a value in common (as far as
// the generator knows their values).
func overlap(a, b *rcol) bool {
	if a.src == nil || b.src == nil {
		return false
	}
	x, y := a.src.canonicalValues(), b.src.canonicalValues()
	if len(y) < len(x) {
		x, y = y, x
	}
	for v := range x {
		if y[v] {
			return true
		}
	}
	return false
}

// canonicalValues is the set of c's non-null values as canonical
// writes them (computed once).
func (c *column) canonicalValues() map[string]bool {
	if c.canon == nil {
		c.canon = map[string]bool{}
		for _, v := range c.vals {
			if !v.null {
				c.canon[canonical(c.t, v.text)] = true
			}
		}
	}
	return c.canon
}

// canonical is a value's text as equal values of its family share it.
func canonical(t typ, s string) string {
	switch t {
	case tInt, tBig, tNum:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	case tTS:
		return strings.TrimSuffix(s, " 00:00:00")
	}
	return s
}
