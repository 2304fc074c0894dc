package plan

import (
	"math"
	"sort"
	"strconv"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/stats"
	"lockd/sql/types"
)

// Selectivity from ANALYZE's statistics (selfuncs.c), where a column has
// them: an equality with a constant is the constant's frequency among the
// most common values, or the rest of the rows spread evenly over the other
// distinct values (var_eq_const); an equality with a value unknown when
// planning is the non-NULL rows over the distinct values (var_eq_non_const);
// a one-sided range adds the most common values it keeps to the fraction
// of the histogram below or above the constant, interpolated inside its
// bin for numeric and date/time types (scalarineqsel); IS NULL is the
// null fraction. A column without statistics falls back to the defaults
// of selectivity.go. The statistics of a constant of another type family
// than its column's are not used (PostgreSQL would look up the
// cross-type operator's statistics; lockd takes the default).

// colStats returns column c's statistics, nil if it has none.
func (ri *relInfo) colStats(c int) *stats.ColumnStats {
	if ri.cat == nil || c < 0 || c >= len(ri.t.Cols) {
		return nil
	}
	if ri.stats == nil {
		ri.stats = make([]*stats.ColumnStats, len(ri.t.Cols))
		for i := range ri.t.Cols {
			ri.stats[i] = ri.cat.ColumnStats(ri.t, i)
		}
	}
	return ri.stats[c]
}

// nullFrac is the fraction of column c's rows that are NULL.
func (ri *relInfo) nullFrac(c int) (float64, bool) {
	if cs := ri.colStats(c); cs != nil {
		return cs.NullFrac, true
	}
	return 0, false
}

// statConst returns the constant v is, if its value can be compared with
// column c's statistics.
func (ri *relInfo) statConst(c int, v expr.Expr) (types.Datum, bool) {
	k, ok := v.(*expr.ConstExpr)
	if !ok {
		return types.Datum{}, false
	}
	ct, vt := ri.t.Cols[c].Type(), k.T
	if ct.OID != vt.OID {
		cc, vc := types.CategoryOf(ct), types.CategoryOf(vt)
		if cc != vc || (cc != types.CatInt && cc != types.CatFloat && cc != types.CatString) {
			return types.Datum{}, false
		}
	}
	return k.D, true
}

// eqConstStatSel is var_eq_const with statistics.
func (ri *relInfo) eqConstStatSel(c int, cs *stats.ColumnStats, v types.Datum) float64 {
	if v.Null {
		return 0 // = NULL is never true
	}
	cmp := comparatorOf(ri.t.Cols[c].Type())
	sumMCV := 0.0
	for i, m := range cs.MCV {
		if cmp(m, v) == 0 {
			return cs.MCVFreq[i]
		}
		sumMCV += cs.MCVFreq[i]
	}
	sel := clampProb(1 - sumMCV - cs.NullFrac)
	if other := ri.ndistinct(c) - float64(len(cs.MCV)); other > 1 {
		sel /= other
	}
	// a value not among the most common is no more common than the
	// least common of them
	if n := len(cs.MCVFreq); n > 0 && sel > cs.MCVFreq[n-1] {
		sel = cs.MCVFreq[n-1]
	}
	return sel
}

// ineqSel is the selectivity of `column c op v` for op one of < <= > >=
// (scalarineqsel); the default without statistics or a constant.
func (ri *relInfo) ineqSel(c int, op string, v expr.Expr) float64 {
	cs := ri.colStats(c)
	if cs == nil || v == nil {
		return defaultIneqSel
	}
	d, ok := ri.statConst(c, v)
	if !ok {
		return defaultIneqSel
	}
	if d.Null {
		return 0
	}
	t := ri.t.Cols[c].Type()
	cmp := comparatorOf(t)
	keeps := func(x types.Datum) bool {
		r := cmp(x, d)
		switch op {
		case "<":
			return r < 0
		case "<=":
			return r <= 0
		case ">":
			return r > 0
		}
		return r >= 0
	}
	mcvSel, sumMCV := 0.0, 0.0
	for i, m := range cs.MCV {
		if keeps(m) {
			mcvSel += cs.MCVFreq[i]
		}
		sumMCV += cs.MCVFreq[i]
	}
	sel := 1 - cs.NullFrac - sumMCV
	if h := cs.Histogram; len(h) >= 2 {
		// in the first or last bin, its outer bound is the column's
		// actual end, read from an index (endpoint.go)
		haveEnd := false
		if n := len(h); n > 2 {
			var end types.Datum
			switch {
			case cmp(d, h[1]) <= 0:
				if end, haveEnd = ri.actualEnd(c, false); haveEnd {
					h = append([]types.Datum{end}, h[1:]...)
				}
			case cmp(d, h[n-2]) > 0:
				if end, haveEnd = ri.actualEnd(c, true); haveEnd {
					h = append(append([]types.Datum(nil), h[:n-1]...), end)
				}
			}
		}
		frac := histFraction(h, d, t, cmp, op == "<" || op == ">=", func() float64 {
			// x = d, taken as a value that is not among the most
			// common: the others' share of the histogram's population
			if other := ri.ndistinct(c) - float64(len(cs.MCV)); other > 1 {
				return 1 / other
			}
			return 0
		})
		if op == ">" || op == ">=" {
			frac = 1 - frac
		}
		// bounds are approximate and may be stale: no estimate closer to
		// 0 or 1 than a hundredth of a bin, unless an end is the actual one
		if !haveEnd {
			cutoff := 0.01 / float64(len(h)-1)
			frac = math.Min(math.Max(frac, cutoff), 1-cutoff)
		}
		sel *= frac
	} else {
		sel *= 0.5
	}
	return clampProb(sel + mcvSel)
}

// histFraction is the fraction of the histogram's population below d
// (ineq_histogram_selectivity): the bins wholly below it, and the part
// of its own bin below it by linear interpolation where the type has a
// scalar value (else half). That is the share of x <= d; strict asks
// for x < d (or, flipped by the caller, x >= d), which is eqSel less.
// The first bin is narrower than the others by the share of its lower
// bound's value (the histogram's first entry is the smallest value
// sampled, the others the largest of their bins), so inside it the
// fraction is rescaled to make x <= h[0] the share of x = h[0].
func histFraction(h []types.Datum, d types.Datum, t types.Type, cmp func(a, b types.Datum) int, strict bool, eqSel func() float64) float64 {
	// the bin whose upper bound is the first at or above d (strict) or
	// above it
	i := sort.Search(len(h), func(i int) bool {
		if strict {
			return cmp(h[i], d) >= 0
		}
		return cmp(h[i], d) > 0
	})
	switch {
	case i == 0:
		return 0
	case i == len(h):
		return 1
	}
	eq := 0.0
	if i == 1 || strict {
		eq = eqSel()
	}
	bin := 0.5
	lo, lok := scalarOf(h[i-1], t)
	hi, hok := scalarOf(h[i], t)
	x, xok := scalarOf(d, t)
	if lok && hok && xok {
		switch {
		case hi <= lo:
		case x <= lo:
			bin = 0
		case x >= hi:
			bin = 1
		default:
			bin = (x - lo) / (hi - lo)
		}
	}
	frac := (float64(i-1) + bin) / float64(len(h)-1)
	if i == 1 {
		frac += eq * (1 - bin)
	}
	if strict {
		frac -= eq
	}
	return frac
}

// scalarOf maps a value to a number that orders as it does
// (convert_to_scalar), for the types where that is plain.
func scalarOf(d types.Datum, t types.Type) (float64, bool) {
	switch types.CategoryOf(t) {
	case types.CatInt, types.CatDatetime:
		return float64(d.I), true
	case types.CatFloat:
		return d.F, true
	case types.CatNumeric:
		if f, err := strconv.ParseFloat(d.S, 64); err == nil && !math.IsInf(f, 0) {
			return f, true
		}
	}
	return 0, false
}

// rangeSel combines the two sides of a range on one column, lo and hi
// each a one-sided selectivity, as clauselist_selectivity does: both
// sides keep what is inside; an impossible result means the estimates
// are off, and a default one side means the default range.
func (ri *relInfo) rangeSel(c int, lo, hi float64) float64 {
	if lo == defaultIneqSel || hi == defaultIneqSel {
		return defaultRangeIneqSel
	}
	nf, _ := ri.nullFrac(c)
	s := hi + lo - 1 + nf
	if s <= 0 {
		if s < -0.01 {
			return defaultRangeIneqSel
		}
		return 1e-10
	}
	return s
}

// indexCorrelation is how closely index ix's order follows the heap's
// (btcostestimate): its first column's correlation, three quarters of it
// for an index of several columns; 0 without statistics.
func (ri *relInfo) indexCorrelation(ix *catalog.IndexDef) float64 {
	cs := ri.colStats(ix.Cols[0])
	if cs == nil || !cs.HasCorrelation {
		return 0
	}
	if len(ix.Cols) > 1 {
		return cs.Correlation * 0.75
	}
	return cs.Correlation
}

func clampProb(p float64) float64 { return math.Min(math.Max(p, 0), 1) }

// comparatorOf orders non-NULL values of type t.
func comparatorOf(t types.Type) func(a, b types.Datum) int {
	c := types.Comparator(t)
	return func(a, b types.Datum) int {
		r, _ := c(a, b)
		return r
	}
}
