package plan

import (
	"math"

	"lockd/sql/expr"
)

// Costs of semi and anti joins in PostgreSQL's model (costsize.c): a
// semi or anti join stops scanning for an outer row at its first match,
// so its inner side costs a fraction of a full scan for the outer rows
// that have one (2 / (matches + 1), with PostgreSQL's fuzz factor), and
// for those without, the probe of an empty hash bucket or index range —
// or a whole scan of a kept inner side (final_cost_nestloop,
// final_cost_hashjoin). The unique-ified inner side is a HashAggregate
// (cost_agg) over the subquery's rows. Costs here leave out the outer
// side's own; the join adds it.

// semiMethod is how a semi or anti join is done.
type semiMethod uint8

const (
	semiHash      semiMethod = iota // Hash Semi/Anti Join
	semiPlainLoop                   // Nested Loop over the inner side read again per outer row
	semiParam                       // Nested Loop over an index scan keyed by the outer row
	semiMaterial                    // Nested Loop over the inner rows kept (Materialize)
	semiUnique                      // Hash Join over the inner rows made unique (HashAggregate)
)

// semiInput is what costing a semi join needs of its inner side.
type semiInput struct {
	plain   pathCost // reading it once
	param   pathCost // reading it per outer row through an index (paramOK)
	paramOK bool
	indexed bool // the index enforces every join condition (has_indexed_join_quals)
	paramQ  float64
	lkeys   []expr.Expr
	rkeys   []expr.Expr
	other   []expr.Expr
	anti    bool
	groups  float64 // the inner rows made unique on rkeys
	uniqOK  bool
	// tree: the inner side is a join, which lockd's executor runs again
	// in full for each outer row (PostgreSQL keeps its hash table), so
	// it is never rescanned
	tree bool
}

// semiChoice is the cheapest way to do a semi join and what it costs
// beyond its outer side.
type semiChoice struct {
	method semiMethod
	cost   pathCost
}

// bestSemi weighs the ways to do a semi or anti join of outerRows outer
// rows with inner side in, in the order PostgreSQL's
// add_paths_to_joinrel tries them, keeping the better of each two as
// its add_path does (fuzzyBetter).
func (fb *fromBuilder) bestSemi(in semiInput, outerRows float64) semiChoice {
	c := fb.costs()
	jsel, nsel := fb.semiSel(in.lkeys, in.rkeys, in.other, in.plain.rows)
	sf := newSemiFactors(jsel, nsel, in.plain.rows)
	outer := pathCost{rows: outerRows}
	qp := c.qualCost(in.other)
	eqCost := float64(len(in.lkeys)) * c.cpuOperator
	var best semiChoice
	found := false
	consider := func(m semiMethod, pc pathCost) {
		if !found || fuzzyBetter(pc, best.cost) {
			best, found = semiChoice{method: m, cost: pc}, true
		}
	}
	// nested loops: over the inner side read again for each outer row,
	// over an index scan keyed by it, over the rows kept (Materialize),
	// every condition but the index's a Join Filter
	if !in.tree {
		consider(semiPlainLoop, c.semiNestLoopCost(outer, in.plain, in.plain, sf, in.anti, false, qp+eqCost))
	}
	if in.paramOK {
		consider(semiParam, c.semiNestLoopCost(outer, in.param, in.param, sf, in.anti, in.indexed, in.paramQ))
	}
	consider(semiMaterial, c.semiNestLoopCost(outer, c.materialCost(in.plain), pathCost{total: c.cpuOperator * in.plain.rows, rows: in.plain.rows}, sf, in.anti, false, qp+eqCost))
	if len(in.lkeys) > 0 {
		consider(semiHash, c.semiHashCost(outer, in.plain, len(in.lkeys), fb.bucketSize(in.rkeys, in.plain.rows), sf, in.anti, qp))
	}
	if in.uniqOK && !in.anti && len(in.other) == 0 && len(in.lkeys) > 0 {
		u := fb.uniqueCost(in.plain, len(in.rkeys), in.groups)
		// the unique rows match each outer row at most once: costed as
		// a semi join (inner_unique), over well-spread buckets
		consider(semiUnique, c.semiHashCost(outer, u, len(in.lkeys), 1/nbuckets(in.groups), sf, false, 0))
	}
	return best
}

// fuzzyBetter reports whether a path costing a replaces one costing b
// among the paths of one relation, as PostgreSQL's add_path decides
// (compare_path_costs_fuzzily): total costs within 1% of each other
// are a tie that the startup costs decide, and a near-exact tie keeps
// the path found first.
func fuzzyBetter(a, b pathCost) bool {
	const fuzz = 1.01
	switch {
	case a.total > b.total*fuzz:
		return false
	case b.total > a.total*fuzz:
		return true
	case a.startup > b.startup*fuzz:
		return false
	case b.startup > a.startup*fuzz:
		return true
	}
	const exact = 1.0000000001
	switch {
	case b.total > a.total*exact:
		return true
	case a.total > b.total*exact:
		return false
	}
	return b.startup > a.startup*exact
}

// materialCost is cost_material: the input kept in memory as it is read.
func (c *costs) materialCost(in pathCost) pathCost {
	return pathCost{startup: in.startup, total: in.total + 2*c.cpuOperator*in.rows, rows: in.rows}
}

// uniqueCost is a HashAggregate making rows of input unique on nkeys
// keys into groups rows (cost_agg, AGG_HASHED, without aggregates).
func (c *costs) uniqueCost(in pathCost, nkeys int, groups float64) pathCost {
	startup := in.total + c.cpuOperator*float64(nkeys)*in.rows
	return pathCost{startup: startup, total: startup + c.cpuTuple*groups, rows: groups}
}

// uniqueCost is c.uniqueCost under enable_hashagg: disabled, PostgreSQL
// makes the rows unique by sorting them, which lockd does not do.
func (fb *fromBuilder) uniqueCost(in pathCost, nkeys int, groups float64) pathCost {
	u := fb.costs().uniqueCost(in, nkeys, groups)
	if !fb.a.S.Settings.Get("enable_hashagg").Bool {
		u.startup += disableCost
		u.total += disableCost
	}
	return u
}

// nbuckets is the number of buckets a hash table for rows rows gets
// (ExecChooseHashTableSize: one row a bucket, at least 1024, a power of
// two).
func nbuckets(rows float64) float64 {
	n := math.Max(math.Ceil(rows), 1024)
	return math.Pow(2, math.Ceil(math.Log2(n)))
}

// bucketSize is the fraction of the inner rows in the bucket an outer
// row probes (estimate_hash_bucket_stats), the smallest over the keys:
// one over the buckets or the distinct values, whichever are fewer,
// raised for a skewed most common value.
func (fb *fromBuilder) bucketSize(keys []expr.Expr, innerRows float64) float64 {
	nb := nbuckets(innerRows)
	best := 1.0
	for _, k := range keys {
		side := fb.keySide(k)
		mcvFreq := 0.0
		if len(side.freq) > 0 {
			mcvFreq = side.freq[0]
		}
		var est float64
		if side.isDefault {
			est = math.Max(0.1, mcvFreq)
		} else {
			avg := (1 - side.nullFrac) / side.nd
			nd := side.nd
			if side.tuples > 0 && side.relRows > 0 {
				nd = clampRows(nd * side.relRows / side.tuples)
			}
			if nd > nb {
				est = 1 / nb
			} else {
				est = 1 / nd
			}
			if avg > 0 && mcvFreq > avg {
				est *= mcvFreq / avg
			}
			est = math.Min(math.Max(est, 1e-6), 1)
		}
		best = math.Min(best, est)
	}
	return best
}

// semiHashCost is cost_hashjoin for a semi or anti join (or an inner
// join whose inner rows are unique) of outer and inner on nkeys keys,
// the inner rows spread over buckets of bucket of them, qp the cost of
// the other conditions per joined row.
func (c *costs) semiHashCost(outer, inner pathCost, nkeys int, bucket float64, sf semiFactors, anti bool, qp float64) pathCost {
	hashQual := c.cpuOperator * float64(nkeys)
	startup := outer.startup + inner.total + (hashQual+c.cpuTuple)*inner.rows
	run := outer.total - outer.startup + hashQual*outer.rows
	vb := nbuckets(inner.rows)
	matched := math.Round(outer.rows * sf.matchFrac)
	scanFrac := 2 / (sf.matchCount + 1)
	run += hashQual * matched * clampRows(inner.rows*bucket*scanFrac) * 0.5
	run += hashQual * (outer.rows - matched) * clampRows(inner.rows/vb) * 0.05
	tuples := matched
	if anti {
		tuples = outer.rows - matched
	}
	run += (c.cpuTuple + qp) * tuples
	if !c.hashjoin {
		startup += disableCost
	}
	return pathCost{startup: startup, total: startup + run}
}

// semiNestLoopCost is cost_nestloop for a semi or anti join: inner read
// once per outer row (its first run costing inner, the others rescan),
// stopping at the first match. indexed: the inner side is an index scan
// enforcing every join condition, so an outer row without a match costs
// one empty probe; qp is the cost of the conditions checked per inner
// row.
func (c *costs) semiNestLoopCost(outer, inner, rescan pathCost, sf semiFactors, anti, indexed bool, qp float64) pathCost {
	startup := outer.startup + inner.startup
	run := outer.total - outer.startup
	if outer.rows > 1 {
		run += (outer.rows - 1) * rescan.startup
	}
	innerRun := inner.total - inner.startup
	rescanRun := rescan.total - rescan.startup
	matched := math.Round(outer.rows * sf.matchFrac)
	unmatched := outer.rows - matched
	scanFrac := 2 / (sf.matchCount + 1)
	ntuples := matched * inner.rows * scanFrac
	if indexed {
		run += innerRun * scanFrac
		if matched > 1 {
			run += (matched - 1) * rescanRun * scanFrac
		}
		run += unmatched * rescanRun / math.Max(inner.rows, 1)
	} else {
		ntuples += unmatched * inner.rows
		run += innerRun
		if unmatched >= 1 {
			unmatched--
		} else {
			matched--
		}
		if matched > 0 {
			run += matched * rescanRun * scanFrac
		}
		if unmatched > 0 {
			run += unmatched * rescanRun
		}
	}
	run += (c.cpuTuple + qp) * ntuples
	if !c.nestloop {
		startup += disableCost
	}
	return pathCost{startup: startup, total: startup + run}
}

// innerHashCost is cost_hashjoin for an inner join whose inner rows are
// not known unique: each outer row compares half its bucket's rows.
func (c *costs) innerHashCost(outer, inner pathCost, nkeys int, bucket, joinRows float64) pathCost {
	hashQual := c.cpuOperator * float64(nkeys)
	startup := outer.startup + inner.total + (hashQual+c.cpuTuple)*inner.rows
	run := outer.total - outer.startup + hashQual*outer.rows
	run += hashQual * outer.rows * clampRows(inner.rows*bucket) * 0.5
	run += c.cpuTuple * joinRows
	if !c.hashjoin {
		startup += disableCost
	}
	return pathCost{startup: startup, total: startup + run}
}

// hashMemOK reports whether groups rows of the given keys fit a hash
// table in hash_mem (work_mem × hash_mem_multiplier), as create_unique_path
// requires of a HashAggregate (lockd has no sorted alternative).
func (fb *fromBuilder) hashMemOK(keys []expr.Expr, groups float64) bool {
	get := fb.a.S.Settings.Get
	width := 0
	for _, k := range keys {
		width += typeWidth(k.Type())
	}
	limit := float64(get("work_mem").Int) * 1024 * get("hash_mem_multiplier").Real
	return float64(width+64)*groups <= limit
}
