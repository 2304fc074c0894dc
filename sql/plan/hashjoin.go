package plan

// The cost of an inner or outer hash join, as PostgreSQL's
// initial_cost_hashjoin and final_cost_hashjoin reckon it (one batch):
//
//   - start-up: the outer side's start-up, the inner side read in full,
//     and for each inner row its hash keys computed and the row kept
//     (cpu_operator_cost per key and cpu_tuple_cost);
//   - run: the rest of the outer side, its hash keys computed per row,
//     the keys compared with the rows of the bucket each outer row probes
//     (half of them, as only rows whose hash codes match are compared),
//     and cpu_tuple_cost plus the join's other conditions per row joined.
//
// Who is in the bucket an outer row probes depends on whether the inner
// rows are unique on the keys (inner_unique: a unique index covers one
// of them). If not, the bucket holds inner_rows × the bucket fraction of
// estimate_hash_bucket_stats, and the rows joined are the keys' inner
// join selectivity times both sides' rows (approx_tuple_count). If they
// are, PostgreSQL costs the join as a semi join stopping at the first
// match (compute_semi_anti_join_factors): the outer rows with a match
// scan a fraction 2/(matches+1) of their bucket and yield one row each,
// the others an average bucket at a twentieth of the cost. The fraction
// of outer rows with a match is the join conditions' selectivity as
// eqjoinsel computes it for the join's own SpecialJoinInfo — for an
// inner or left join that is the inner-join selectivity, not the semi
// join's — and matches per matched row the inner rows times that
// selectivity over itself: the inner side's rows.

// hashInfo is what costing a hash join of JoinNode's sides needs of
// their statistics, for either side hashed ([0]: the right side, [1]:
// the left).
type hashInfo struct {
	// bucket is the fraction of the hashed side's rows in the bucket an
	// outer row probes (bucketSize)
	bucket [2]float64
	// unique: the hashed side's rows match each outer row at most once
	unique [2]bool
	// keySel is the inner-join selectivity of the hash keys; sel that of
	// every join condition
	keySel, sel float64
}

// hashInfoOf works out j's hashInfo, with the sides' estimated rows.
func (fb *fromBuilder) hashInfoOf(j *JoinNode) *hashInfo {
	if len(j.Lkeys) == 0 {
		return nil
	}
	lr, rr := fb.estRows(j.Left), fb.estRows(j.Right)
	hi := &hashInfo{keySel: 1}
	hi.bucket[0] = fb.bucketSize(j.Rkeys, rr)
	hi.bucket[1] = fb.bucketSize(j.Lkeys, lr)
	// only a table's rows are known unique (a join of it with another
	// repeats them)
	_, rleaf := j.Right.(*LeafNode)
	_, lleaf := j.Left.(*LeafNode)
	hi.unique[0] = rleaf && fb.uniqueKeys(j.Rkeys)
	hi.unique[1] = lleaf && fb.uniqueKeys(j.Lkeys)
	for i := range j.Lkeys {
		hi.keySel *= eqjoinselInner(fb.keySide(j.Lkeys[i]), fb.keySide(j.Rkeys[i]))
	}
	hi.sel = hi.keySel
	for _, c := range j.Cond {
		_, in := fb.otherJoinSel(c)
		hi.sel *= in
	}
	return hi
}

// hashJoinPathCost is cost_hashjoin of outer and inner on nkeys keys,
// the inner side's rows bucket to a probe's bucket and unique on the
// keys or not, keySel and sel the selectivities of hashInfo, qp the cost
// per joined row of the join's other conditions.
func (c *costs) hashJoinPathCost(outer, inner pathCost, nkeys int, bucket float64, unique bool, keySel, sel, qp float64) pathCost {
	if unique {
		sf := newSemiFactors(sel, sel, inner.rows)
		return c.semiHashCost(outer, inner, nkeys, bucket, sf, false, qp)
	}
	hashQual := c.cpuOperator * float64(nkeys)
	startup := outer.startup + inner.total + (hashQual+c.cpuTuple)*inner.rows
	run := outer.total - outer.startup + hashQual*outer.rows
	run += hashQual * outer.rows * clampRows(inner.rows*bucket) * 0.5
	run += (c.cpuTuple + qp) * clampRows(keySel*outer.rows*inner.rows)
	if !c.hashjoin {
		startup += disableCost
	}
	return pathCost{startup: startup, total: startup + run}
}

// hashJoinExplained is the cost EXPLAIN shows for hash join j of outer
// and inner, the inner side the left one when hashLeft.
func (c *costs) hashJoinExplained(j *JoinNode, outer, inner pathCost, hashLeft bool) (pathCost, bool) {
	hi := j.hash
	if hi == nil {
		return pathCost{}, false
	}
	side := 0
	if hashLeft {
		side = 1
	}
	qp := c.qualCost(j.Cond) + c.qualCost(j.Filters)
	return c.hashJoinPathCost(outer, inner, len(j.Lkeys), hi.bucket[side], hi.unique[side], hi.keySel, hi.sel, qp), true
}
