package catalog

import (
	"lockd/sql/types"
)

// colRange is what ANDed conditions allow for one key column.
type ColRange struct {
	lo, hi         types.Datum
	hasLo, hasHi   bool
	loIncl, hiIncl bool
	IsNull         bool
	Empty          bool
	eq             bool // lo == hi, both inclusive
}

func (r *ColRange) point() bool { return r.eq }

// narrow applies op v to r.
func (r *ColRange) Narrow(cmp func(a, b types.Datum) (int, error), op string, v types.Datum) {
	lower := func(incl bool) {
		if !r.hasLo {
			r.lo, r.hasLo, r.loIncl = v, true, incl
			return
		}
		if c, _ := cmp(v, r.lo); c > 0 || c == 0 && !incl {
			r.lo, r.loIncl = v, incl
		}
	}
	upper := func(incl bool) {
		if !r.hasHi {
			r.hi, r.hasHi, r.hiIncl = v, true, incl
			return
		}
		if c, _ := cmp(v, r.hi); c < 0 || c == 0 && !incl {
			r.hi, r.hiIncl = v, incl
		}
	}
	switch op {
	case "=":
		lower(true)
		upper(true)
	case ">":
		lower(false)
	case ">=":
		lower(true)
	case "<":
		upper(false)
	case "<=":
		upper(true)
	}
	if r.hasLo && r.hasHi {
		c, _ := cmp(r.lo, r.hi)
		r.Empty = r.Empty || c > 0 || c == 0 && !(r.loIncl && r.hiIncl)
		r.eq = c == 0 && r.loIncl && r.hiIncl
	}
}

// matchRanges is the set of partitions that can hold a row whose key
// columns lie in ranges (only the columns marked used are constrained),
// in buf if it is large enough; nil when it cannot prune.
func (d *PartDesc) MatchRanges(ranges []ColRange, used []bool, buf []bool) []bool {
	keep := buf[:0]
	if cap(keep) < len(d.Parts) {
		keep = make([]bool, len(d.Parts))
	} else {
		keep = keep[:len(d.Parts)]
		clear(keep)
	}
	for i := range ranges {
		if used[i] && ranges[i].Empty || used[i] && ranges[i].IsNull && (ranges[i].hasLo || ranges[i].hasHi) {
			return keep // nothing can match
		}
	}
	switch d.Strategy {
	case PartHash:
		var kb [4]types.Datum
		key := kb[:0]
		for i := range ranges {
			switch {
			case !used[i]:
				return nil
			case ranges[i].IsNull:
				key = append(key, types.NullDatum)
			case ranges[i].point():
				key = append(key, ranges[i].lo)
			default:
				return nil
			}
		}
		if p := d.Route(key); p >= 0 {
			keep[p] = true
		}
		return keep
	case PartList:
		r := ranges[0]
		if !used[0] {
			return nil
		}
		if r.IsNull {
			if d.NullPart >= 0 {
				keep[d.NullPart] = true
			} else if d.Def >= 0 {
				keep[d.Def] = true
			}
			return keep
		}
		if r.point() {
			if p := d.ListLookup(r.lo); p >= 0 {
				keep[p] = true
			} else if d.Def >= 0 {
				keep[d.Def] = true
			}
			return keep
		}
		for _, v := range d.vals {
			if r.contains(d.Cmps[0], v.d) {
				keep[v.part] = true
			}
		}
		if d.Def >= 0 {
			keep[d.Def] = true
		}
		return keep
	}
	// range
	all := true
	for i := range ranges {
		all = all && used[i] && ranges[i].point() && !ranges[i].IsNull
	}
	if all && len(d.Key) > 1 {
		var kb [4]types.Datum
		key := kb[:0]
		for i := range ranges {
			key = append(key, ranges[i].lo)
		}
		if p := d.Route(key); p >= 0 {
			keep[p] = true
		}
		return keep
	}
	if !used[0] {
		return nil
	}
	r := ranges[0]
	if r.IsNull {
		if d.Def >= 0 {
			keep[d.Def] = true
		}
		return keep
	}
	if r.point() && len(d.Key) == 1 {
		if p := d.Route([]types.Datum{r.lo}); p >= 0 { // binary search: pgbench's aid = $1
			keep[p] = true
		}
		return keep
	}
	if len(d.Key) > 1 {
		// first column only: a partition may hold first-column values
		// from its lower to its upper bound's first column, inclusive
		for i := range d.Lo {
			keep[i] = d.spanMeets(r, d.Lo[i][0], d.Hi[i][0], true)
		}
		if d.Def >= 0 {
			keep[d.Def] = true
		}
		return keep
	}
	gap := false
	for i := range d.Lo {
		keep[i] = d.spanMeets(r, d.Lo[i][0], d.Hi[i][0], false)
		// the gap below this partition, down to the previous one
		if i == 0 {
			if d.Lo[0][0].kind != RangeMin && d.spanMeets(r, rbound{kind: RangeMin}, d.Lo[0][0], false) {
				gap = true
			}
		} else if d.CmpBounds(d.Hi[i-1], true, d.Lo[i], true) < 0 && d.spanMeets(r, d.Hi[i-1][0], d.Lo[i][0], false) {
			gap = true
		}
	}
	if n := len(d.Lo); n == 0 {
		gap = true
	} else if last := d.Hi[n-1][0]; last.kind != RangeMax && d.spanMeets(r, last, rbound{kind: RangeMax}, false) {
		gap = true
	}
	if gap && d.Def >= 0 {
		keep[d.Def] = true
	}
	return keep
}

// spanMeets reports whether values in [lo, hi) (or [lo, hi] with
// hiIncl) can satisfy r, treating the domain as dense as PostgreSQL's
// pruning does.
func (d *PartDesc) spanMeets(r ColRange, lo, hi rbound, hiIncl bool) bool {
	cmp := d.Cmps[0]
	if r.hasLo && hi.kind != RangeMax {
		if hi.kind == RangeMin {
			return false
		}
		c, _ := cmp(hi.d, r.lo)
		if c < 0 || c == 0 && !(hiIncl && r.loIncl) {
			return false
		}
	}
	if r.hasHi && lo.kind != RangeMin {
		if lo.kind == RangeMax {
			return false
		}
		c, _ := cmp(lo.d, r.hi)
		if c > 0 || c == 0 && !r.hiIncl {
			return false
		}
	}
	return true
}

// contains reports whether v lies in r.
func (r *ColRange) contains(cmp func(a, b types.Datum) (int, error), v types.Datum) bool {
	if r.hasLo {
		if c, _ := cmp(v, r.lo); c < 0 || c == 0 && !r.loIncl {
			return false
		}
	}
	if r.hasHi {
		if c, _ := cmp(v, r.hi); c > 0 || c == 0 && !r.hiIncl {
			return false
		}
	}
	return true
}
