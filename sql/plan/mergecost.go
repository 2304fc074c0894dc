package plan

import (
	"math"

	"lockd/sql/expr"
)

// Costs of sorting and of merge joins in PostgreSQL 15's model
// (costsize.c's cost_sort / cost_tuplesort, initial_cost_mergejoin and
// final_cost_mergejoin), in the units of cost.go.

// mergeSettings are the settings these costs read besides cost.go's.
type mergeSettings struct {
	workMem                  float64 // work_mem in bytes
	mergejoin, sort, hashagg bool    // enable_*
	material                 bool    // enable_material
	hashMemMultiplier        float64
}

func mergeSettingsOf(b *expr.Backend) mergeSettings {
	get := b.Settings.Get
	return mergeSettings{
		workMem:           float64(get("work_mem").Int) * 1024,
		mergejoin:         get("enable_mergejoin").Bool,
		sort:              get("enable_sort").Bool,
		hashagg:           get("enable_hashagg").Bool,
		material:          get("enable_material").Bool,
		hashMemMultiplier: get("hash_mem_multiplier").Real,
	}
}

// maxAlign rounds n up to PostgreSQL's MAXALIGN (8 bytes).
func maxAlign(n float64) float64 { return math.Ceil(n/8) * 8 }

// relationBytes is relation_byte_size: rows of width bytes as heap
// tuples (a 23-byte header, both aligned).
func relationBytes(rows, width float64) float64 {
	return rows * (maxAlign(width) + maxAlign(23))
}

// sortCost is what sorting rows rows of width bytes adds to reading them
// (cost_sort without a limit): comparisons, 2 × cpu_operator_cost each,
// n log2 n of them before the first row, and when the data exceeds
// work_mem the page accesses of an external merge sort; then
// cpu_operator_cost per row to return it.
func (c *costs) sortCost(rows, width, workMem float64) pathCost {
	return c.boundedSortCost(rows, width, 0, workMem)
}

// boundedSortCost is cost_sort of rows rows of width bytes of which only
// the first limit are wanted (0: all): a bounded heap sort keeping
// 2 × limit rows compares each row log2(2 × limit) times, where the
// limit's rows fit work_mem and are fewer than half the input (or the
// input does not fit).
func (c *costs) boundedSortCost(rows, width, limit, workMem float64) pathCost {
	n := math.Max(rows, 2)
	cmp := 2 * c.cpuOperator
	startup := cmp * n * math.Log2(n)
	bounded := limit > 0 && limit < rows
	inBytes := relationBytes(rows, width)
	outBytes := inBytes
	if bounded {
		outBytes = relationBytes(limit, width)
	}
	if bounded && (outBytes <= workMem || workMem <= 0) {
		if n > 2*limit || inBytes > workMem && workMem > 0 {
			startup = cmp * n * math.Log2(2*limit)
		}
		return pathCost{startup: startup, total: startup + c.cpuOperator*rows, rows: rows}
	}
	if bytes := inBytes; bytes > workMem && workMem > 0 {
		pages := math.Ceil(bytes / pageSize)
		runs := bytes / workMem
		// tuplesort_merge_order (PostgreSQL 15): as many input tapes as
		// work_mem holds, each with a 32-page merge buffer and, as each
		// output tape, a page of tape buffer; between 6 and 500
		order := math.Min(500, math.Max(6, math.Floor(workMem/(2*pageSize+32*pageSize))))
		logRuns := 1.0
		if runs > order {
			logRuns = math.Ceil(math.Log(runs) / math.Log(order))
		}
		startup += 2 * pages * logRuns * (c.seqPage*0.75 + c.randomPage*0.25)
	}
	return pathCost{startup: startup, total: startup + c.cpuOperator*rows, rows: rows}
}

// sortedInput is one side of a merge join: how it is read (cost, rows,
// width) and whether a Sort puts it in key order first.
type sortedInput struct {
	cost  pathCost
	width float64
	sort  bool
}

// scanFraction is mergejoinscansel's answer for one side: the fraction
// of its rows read before the first match and where the scan stops.
type scanFraction struct{ start, end float64 }

// mergeEstimate is a merge join's cost and whether it materialises its
// inner side.
type mergeEstimate struct {
	cost        pathCost
	materialize bool
}

// mergeJoinCost is initial_cost_mergejoin and final_cost_mergejoin for a
// join of outer and inner on nkeys equality keys giving joinRows rows,
// where the keys alone would give keyRows (approx_tuple_count), with
// quals further join conditions costing qualCost per row; os and is are
// the scan fractions, innerUnique that each outer row matches at most one
// inner row and no other condition is checked (the inner side needs no
// mark and restore).
func (c *costs) mergeJoinCost(ms mergeSettings, outer, inner sortedInput, os, is scanFraction, nkeys int, keyRows, joinRows, qualCost float64, innerUnique bool) mergeEstimate {
	outerRows, innerRows := math.Max(outer.cost.rows, 1), math.Max(inner.cost.rows, 1)
	outerSkip := math.Round(outerRows * os.start)
	innerSkip := math.Round(innerRows * is.start)
	outerScanned := clampRows(outerRows * os.end)
	innerScanned := clampRows(innerRows * is.end)
	if outerSkip > outerScanned {
		outerSkip = outerScanned
	}
	if innerSkip > innerScanned {
		innerSkip = innerScanned
	}
	// the fractions as the rounding left them
	ostart, oend := outerSkip/outerRows, outerScanned/outerRows
	istart, iend := innerSkip/innerRows, innerScanned/innerRows

	side := func(in sortedInput) pathCost {
		if !in.sort {
			return in.cost
		}
		s := c.sortCost(in.cost.rows, in.width, ms.workMem)
		pc := pathCost{startup: in.cost.total + s.startup, total: in.cost.total + s.total, rows: in.cost.rows}
		if !ms.sort {
			pc.startup += disableCost
			pc.total += disableCost
		}
		return pc
	}
	o, i := side(outer), side(inner)
	startup := o.startup + (o.total-o.startup)*ostart
	run := (o.total - o.startup) * (oend - ostart)
	startup += i.startup + (i.total-i.startup)*istart
	innerRun := (i.total - i.startup) * (iend - istart)

	if !ms.mergejoin {
		startup += disableCost
	}
	// rows of the inner side read again for outer rows of equal keys
	rescanned := 0.0
	if !innerUnique {
		rescanned = math.Max(keyRows-innerRows, 0)
	}
	ratio := 1 + rescanned/innerScanned
	bare := innerRun * ratio
	mat := innerRun + c.cpuOperator*innerScanned*ratio
	est := mergeEstimate{}
	switch {
	case innerUnique:
	case ms.material && mat < bare:
		est.materialize = true
	case ms.material && inner.sort && relationBytes(inner.cost.rows, inner.width) > ms.workMem:
		est.materialize = true
	}
	if est.materialize {
		run += mat
	} else {
		run += bare
	}
	mergeQual := c.cpuOperator * float64(nkeys)
	startup += mergeQual * (outerSkip + innerSkip*ratio)
	run += mergeQual * ((outerScanned - outerSkip) + (innerScanned-innerSkip)*ratio)
	run += (c.cpuTuple + qualCost) * keyRows
	est.cost = pathCost{startup: startup, total: startup + run, rows: joinRows}
	return est
}

// hashBatchIO is the I/O cost_hashjoin adds when the inner side's hash
// table does not fit in hash_mem (ExecChooseHashTableSize): each batch's
// rows written out and read back, innerPages once before the first row
// and, per row read, the inner pages again and the outer pages twice.
func (c *costs) hashBatchIO(ms mergeSettings, outerRows, outerWidth, innerRows, innerWidth float64) (startup, run float64) {
	// a hash join tuple: its bucket link and minimal tuple header, then
	// the data, each MAXALIGNed
	tupleBytes := 16 + 16 + maxAlign(innerWidth)
	limit := ms.workMem * ms.hashMemMultiplier
	if innerRows*tupleBytes+8*innerRows <= limit {
		return 0, 0
	}
	innerPages := math.Ceil(relationBytes(innerRows, innerWidth) / pageSize)
	outerPages := math.Ceil(relationBytes(outerRows, outerWidth) / pageSize)
	return c.seqPage * innerPages, c.seqPage * (innerPages + 2*outerPages)
}

// Rows is the rows the estimate expects (for the executor's buffers).
func (p pathCost) Rows() float64 { return p.rows }
