package plan

import (
	"math"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Selectivity: the fraction of a table's rows a condition keeps
// (clausesel.c, selfuncs.c). Without statistics these are PostgreSQL's
// defaults: 0.005 for = (or one row for a column a unique index covers
// alone), a third for one side of a range, 0.005 for a range bounded on
// both sides, IN lists and ORs combined as independent events.

// relInfo is what selectivity estimation knows of one table in a query.
type relInfo struct {
	t      *catalog.TableDef
	size   relSize
	colOf  colFunc
	unique map[int]bool // columns a unique index covers alone
}

func newRelInfo(b *expr.Backend, t *catalog.TableDef, colOf colFunc) *relInfo {
	ri := &relInfo{t: t, size: tableSize(b, t), colOf: colOf, unique: map[int]bool{}}
	for _, ix := range b.Cat().TableIndexes(t) {
		if ix.Unique && len(ix.Cols) == 1 {
			ri.unique[ix.Cols[0]] = true
		}
	}
	return ri
}

// ndistinct estimates how many distinct values column c has
// (get_variable_numdistinct without statistics).
func (ri *relInfo) ndistinct(c int) float64 {
	switch {
	case ri.unique[c]:
		return math.Max(ri.size.tuples, 1)
	case ri.t.Cols[c].TypeOID == types.OIDBool:
		return 2
	case ri.size.tuples < defaultNumDistinct:
		return math.Max(ri.size.tuples, 1)
	}
	return defaultNumDistinct
}

// eqSel is the selectivity of column c = a value.
func (ri *relInfo) eqSel(c int) float64 {
	if ri.unique[c] {
		return 1 / math.Max(ri.size.tuples, 1)
	}
	return defaultEqSel
}

// restrictSel is the selectivity of the conjuncts quals, each reading
// only this table (and values fixed for the scan: constants, parameters,
// outer rows).
func (ri *relInfo) restrictSel(quals []expr.Expr, valOK func(expr.Expr) bool) float64 {
	s := 1.0
	// one-sided comparisons per column, combined into ranges
	type bounds struct{ lo, hi bool }
	ranges := map[int]*bounds{}
	var rest []expr.Expr
	for _, q := range quals {
		if b, ok := q.(*expr.BinopExpr); ok {
			if c, op, ok := ri.colCompare(b, valOK); ok && (op != "=" && op != "<>") {
				r := ranges[c]
				if r == nil {
					r = &bounds{}
					ranges[c] = r
				}
				if op == "<" || op == "<=" {
					r.hi = true
				} else {
					r.lo = true
				}
				continue
			}
		}
		rest = append(rest, q)
	}
	for _, r := range ranges {
		if r.lo && r.hi {
			s *= defaultRangeIneqSel
		} else {
			s *= defaultIneqSel
		}
	}
	for _, q := range rest {
		s *= ri.clauseSel(q, valOK)
	}
	return s
}

// colCompare recognises `col op value` (either way round) and returns the
// column and the operator as seen from the column's side.
func (ri *relInfo) colCompare(b *expr.BinopExpr, valOK func(expr.Expr) bool) (int, string, bool) {
	op, ok := flipped[b.Op]
	if !ok && b.Op != "<>" {
		return 0, "", false
	}
	if b.Op == "<>" {
		op = "<>"
	}
	if c, _, ok := ri.colOf(b.L); ok && valOK(b.R) {
		return c, b.Op, true
	}
	if c, _, ok := ri.colOf(b.R); ok && valOK(b.L) {
		return c, op, true
	}
	return 0, "", false
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
		c, op, ok := ri.colCompare(x, valOK)
		switch {
		case !ok:
		case op == "=":
			return ri.eqSel(c)
		case op == "<>":
			return 1 - ri.eqSel(c)
		default:
			return defaultIneqSel
		}
	case *expr.InExpr:
		if c, _, ok := ri.colOf(x.Arg); ok {
			s := 0.0
			for range x.List {
				s2 := ri.eqSel(c)
				s = s + s2 - s*s2
			}
			if x.Not {
				return 1 - s
			}
			return s
		}
	case *expr.AnyExpr:
		if c, _, ok := ri.colOf(x.Arg); ok && x.Op == "=" && !x.All {
			// an array whose length is not known when planning counts
			// as ten elements (estimate_array_length)
			s := 0.0
			for range 10 {
				s2 := ri.eqSel(c)
				s = s + s2 - s*s2
			}
			return s
		}
	case *expr.NullTestExpr:
		if c, _, ok := ri.colOf(x.Arg); ok {
			null := defaultUnkSel
			if ri.t.Cols[c].NotNull {
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

// joinSel is eqjoinsel without statistics for the equality of two
// columns: one over the larger of their numbers of distinct values.
func joinSel(l *relInfo, lc int, r *relInfo, rc int) float64 {
	return 1 / math.Max(l.ndistinct(lc), r.ndistinct(rc))
}
