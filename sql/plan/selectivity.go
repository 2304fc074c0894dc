package plan

import (
	"math"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/stats"
	"lockd/sql/types"
)

// Selectivity: the fraction of a table's rows a condition keeps
// (clausesel.c, selfuncs.c). With ANALYZE's statistics see statsel.go.
// Without them these are PostgreSQL's defaults: one over the number of
// distinct values for = (200 unless the table is smaller; one row for a
// column a unique index covers alone), a third for one side of a range,
// 0.005 for a range bounded on both sides, IN lists and ORs combined as
// independent events.

// relInfo is what selectivity estimation knows of one table in a query.
type relInfo struct {
	t      *catalog.TableDef
	size   relSize
	colOf  colFunc
	unique map[int]bool // columns a unique index covers alone
	cat    *catalog.CatalogState
	stats  []*stats.ColumnStats // by column position, read on first use
	b      *expr.Backend
	ends   map[int]endpoint // actual column ends read from indexes (endpoint.go)
}

func newRelInfo(b *expr.Backend, t *catalog.TableDef, colOf colFunc) *relInfo {
	ri := &relInfo{t: t, size: tableSize(b, t), colOf: colOf, unique: map[int]bool{}, cat: b.Cat(), b: b}
	for _, ix := range b.Cat().TableIndexes(t) {
		if ix.Unique && len(ix.Cols) == 1 {
			ri.unique[ix.Cols[0]] = true
		}
	}
	return ri
}

// ndistinct estimates how many distinct values column c has
// (get_variable_numdistinct): a column a unique index covers alone has
// as many as non-NULL rows; else ANALYZE's n_distinct (a negative one
// scales with the rows); else a boolean has 2, and any other column 200
// or the table's rows if fewer.
func (ri *relInfo) ndistinct(c int) float64 {
	tuples := ri.size.tuples
	cs := ri.colStats(c)
	nd := 0.0
	switch {
	case ri.unique[c]:
		nf := 0.0
		if cs != nil {
			nf = cs.NullFrac
		}
		nd = -(1 - nf)
	case cs != nil && cs.NDistinct != 0:
		nd = cs.NDistinct
	case ri.t.Cols[c].TypeOID == types.OIDBool:
		nd = 2
	}
	switch {
	case nd > 0:
		return clampRows(math.Min(nd, math.Max(tuples, 1)))
	case nd < 0:
		return clampRows(-nd * tuples)
	case tuples < defaultNumDistinct:
		return clampRows(tuples)
	}
	return defaultNumDistinct
}

// eqSel is the selectivity of column c = v, v nil (or not a constant)
// for a value not known when planning.
func (ri *relInfo) eqSel(c int, v expr.Expr) float64 {
	if ri.unique[c] && ri.size.tuples >= 1 {
		if k, ok := v.(*expr.ConstExpr); ok && k.D.Null {
			return 0
		}
		return 1 / ri.size.tuples
	}
	cs := ri.colStats(c)
	if cs == nil {
		return 1 / ri.ndistinct(c)
	}
	if d, ok := ri.statConst(c, v); ok {
		return ri.eqConstStatSel(c, cs, d)
	}
	sel := (1 - cs.NullFrac) / ri.ndistinct(c)
	if len(cs.MCVFreq) > 0 && sel > cs.MCVFreq[0] {
		sel = cs.MCVFreq[0] // no more common than the most common value
	}
	return clampProb(sel)
}

// restrictSel is the selectivity of the conjuncts quals, each reading
// only this table (and values fixed for the scan: constants, parameters,
// outer rows).
func (ri *relInfo) restrictSel(quals []expr.Expr, valOK func(expr.Expr) bool) float64 {
	s := 1.0
	// one-sided comparisons per column, combined into ranges
	type bounds struct {
		lo, hi       float64
		hasLo, hasHi bool
	}
	ranges := map[int]*bounds{}
	var order []int
	var rest []expr.Expr
	for _, q := range quals {
		if b, ok := q.(*expr.BinopExpr); ok {
			if c, op, v, ok := ri.colCompare(b, valOK); ok && (op != "=" && op != "<>") {
				r := ranges[c]
				if r == nil {
					r = &bounds{}
					ranges[c] = r
					order = append(order, c)
				}
				sel := ri.ineqSel(c, op, v)
				// of two bounds on one side the tighter counts
				if op == "<" || op == "<=" {
					if !r.hasHi || sel < r.hi {
						r.hi, r.hasHi = sel, true
					}
				} else if !r.hasLo || sel < r.lo {
					r.lo, r.hasLo = sel, true
				}
				continue
			}
		}
		rest = append(rest, q)
	}
	for _, c := range order {
		switch r := ranges[c]; {
		case r.hasLo && r.hasHi:
			s *= ri.rangeSel(c, r.lo, r.hi)
		case r.hasLo:
			s *= r.lo
		default:
			s *= r.hi
		}
	}
	for _, q := range rest {
		s *= ri.clauseSel(q, valOK)
	}
	return s
}

// colCompare recognises `col op value` (either way round) and returns the
// column, the operator as seen from the column's side and the value.
func (ri *relInfo) colCompare(b *expr.BinopExpr, valOK func(expr.Expr) bool) (int, string, expr.Expr, bool) {
	op, ok := flipped[b.Op]
	if !ok && b.Op != "<>" {
		return 0, "", nil, false
	}
	if b.Op == "<>" {
		op = "<>"
	}
	if c, _, ok := ri.colOf(b.L); ok && valOK(b.R) {
		return c, b.Op, b.R, true
	}
	if c, _, ok := ri.colOf(b.R); ok && valOK(b.L) {
		return c, op, b.L, true
	}
	return 0, "", nil, false
}

// clauseSel is the selectivity of one condition.
func (ri *relInfo) clauseSel(e expr.Expr, valOK func(expr.Expr) bool) float64 {
	switch x := e.(type) {
	case *expr.BoolExpr:
		switch x.Op {
		case expr.BoolAnd:
			return ri.restrictSel(x.Args, valOK)
		case expr.BoolOr:
			s := 0.0
			for _, a := range x.Args {
				s2 := ri.clauseSel(a, valOK)
				s = s + s2 - s*s2
			}
			return s
		default: // NOT
			if len(x.Args) == 1 {
				return 1 - ri.clauseSel(x.Args[0], valOK)
			}
		}
	case *expr.BinopExpr:
		c, op, v, ok := ri.colCompare(x, valOK)
		switch {
		case !ok:
		case op == "=":
			return ri.eqSel(c, v)
		case op == "<>":
			nf, _ := ri.nullFrac(c)
			return clampProb(1 - ri.eqSel(c, v) - nf)
		default:
			return ri.ineqSel(c, op, v)
		}
	case *expr.InExpr:
		if c, _, ok := ri.colOf(x.Arg); ok {
			// scalararraysel: the values of an IN list are distinct,
			// so their selectivities add up (and for NOT IN, the
			// inequalities' shortfalls); independent events if that
			// goes out of bounds
			nf, _ := ri.nullFrac(c)
			indep, disjoint := 0.0, 0.0
			if x.Not {
				indep, disjoint = 1, 1
			}
			for _, v := range x.List {
				eq := ri.eqSel(c, v)
				if x.Not {
					ne := clampProb(1 - eq - nf)
					indep *= ne
					disjoint += ne - 1
				} else {
					indep = indep + eq - indep*eq
					disjoint += eq
				}
			}
			if disjoint >= 0 && disjoint <= 1 {
				return disjoint
			}
			return indep
		}
	case *expr.AnyExpr:
		if c, _, ok := ri.colOf(x.Arg); ok && x.Op == "=" && !x.All {
			if a, ok := x.Arr.(*expr.ConstExpr); ok && !a.D.Null {
				// a constant array: its values' shares, as an IN
				// list's (scalararraysel)
				in := &expr.InExpr{Arg: x.Arg}
				for _, d := range a.D.A {
					in.List = append(in.List, &expr.ConstExpr{D: d, T: x.Arg.Type()})
				}
				return ri.clauseSel(in, valOK)
			}
			// an array whose length is not known when planning counts
			// as ten elements (estimate_array_length)
			s := 0.0
			for range 10 {
				s2 := ri.eqSel(c, nil)
				s = s + s2 - s*s2
			}
			return s
		}
	case *expr.NullTestExpr:
		if c, _, ok := ri.colOf(x.Arg); ok {
			null := defaultUnkSel
			if nf, ok := ri.nullFrac(c); ok {
				null = nf
			} else if ri.t.Cols[c].NotNull {
				null = 0
			}
			if x.IsNull {
				return null
			}
			return 1 - null
		}
	case *expr.ColExpr:
		return 0.5 // a boolean column
	}
	return defaultIneqSel
}
