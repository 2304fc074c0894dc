package plan

import (
	"fmt"
	"math"
	"testing"

	"lockd/sql/types"
)

// The numbers these tests expect are PostgreSQL 15's EXPLAIN of the same
// inputs: pgbench -i -s 10 (pgbench_accounts 1,000,000 rows on 16,394
// pages, its primary key 2,745 pages of height 2, pgbench_branches 10
// rows, pgbench_tellers 100), vacuumed and analyzed, default cost
// settings.

// defaultCosts are PostgreSQL's default cost settings.
func defaultCosts() *costs {
	return &costs{
		seqPage: 1, randomPage: 4, cpuTuple: 0.01, cpuIndexTuple: 0.005, cpuOperator: 0.0025,
		cacheSize: 524288, workMem: 4 << 20,
		seqscan: true, indexscan: true, indexonly: true, bitmapscan: true, nestloop: true, hashjoin: true, pruning: true,
	}
}

// explained prints a cost as EXPLAIN does.
func explained(pc pathCost) string {
	return fmt.Sprintf("%.2f..%.2f", pc.startup, pc.total)
}

var (
	accountsSize = relSize{pages: 16394, tuples: 1e6, allVisible: 1}
	accountsPkey = relSize{pages: 2745, tuples: 1e6, height: 2, hasHeight: true}
)

func TestHashJoinPathCost(t *testing.T) {
	c := defaultCosts()
	for _, tc := range []struct {
		name            string
		outer, inner    pathCost
		bucket          float64
		unique          bool
		keySel, sel, qp float64
		want            string
	}{
		{
			// select count(*) from pgbench_accounts a join
			// pgbench_branches b on a.bid = b.bid: branches is unique
			// on bid, and eqjoinsel gives the semi-join factors the
			// inner-join selectivity (a tenth of the outer rows match)
			name:   "inner unique",
			outer:  pathCost{total: 26394, rows: 1e6},
			inner:  pathCost{total: 1.10, rows: 10},
			bucket: 0.1, unique: true, keySel: 0.1, sel: 0.1,
			want: "1.23..30132.72",
		},
		{
			// select * from pgbench_accounts a join pgbench_tellers t
			// on a.bid = t.bid where a.aid < 1000, with PostgreSQL's
			// estimate of 970 accounts
			name:   "inner not unique",
			outer:  pathCost{startup: 0.42, total: 48.40, rows: 970},
			inner:  pathCost{total: 2.00, rows: 100},
			bucket: 0.1, keySel: 0.1, sel: 0.1,
			want: "3.67..163.20",
		},
	} {
		got := explained(c.hashJoinPathCost(tc.outer, tc.inner, 1, tc.bucket, tc.unique, tc.keySel, tc.sel, tc.qp))
		if got != tc.want {
			t.Errorf("%s: cost=%s, PostgreSQL's is %s", tc.name, got, tc.want)
		}
	}
}

func TestIndexScanCost(t *testing.T) {
	c := defaultCosts()
	// select * from pgbench_accounts order by aid desc limit 1: the
	// whole primary key read backward, the heap in its order
	full := c.indexScanCost(accountsSize, accountsPkey, 1, 0, nil, 1e6, 1, 1, 1, false, false)
	if got, want := explained(full), "0.42..42377.43"; got != want {
		t.Errorf("Index Scan Backward: cost=%s, PostgreSQL's is %s", got, want)
	}
	if got, want := explained(limited(full, 1)), "0.42..0.47"; got != want {
		t.Errorf("Limit over it: cost=%s, PostgreSQL's is %s", got, want)
	}
	// select max(aid): an index-only scan with Index Cond (aid IS NOT
	// NULL), one qual per entry, no heap page read
	ios := c.indexScanCost(accountsSize, accountsPkey, 1, 1, nil, 1e6, 1, 1, 1, false, true)
	if got, want := explained(ios), "0.42..28480.42"; got != want {
		t.Errorf("Index Only Scan: cost=%s, PostgreSQL's is %s", got, want)
	}
	if got, want := explained(limited(ios, 1)), "0.42..0.45"; got != want {
		t.Errorf("Limit over it: cost=%s, PostgreSQL's is %s", got, want)
	}
}

// limited is a Limit of n rows over pc, as EXPLAIN costs it.
func limited(pc pathCost, n float64) pathCost {
	return pathCost{startup: pc.startup, total: pc.startup + (pc.total-pc.startup)*n/pc.rows, rows: n}
}

func TestHistFraction(t *testing.T) {
	// pgbench_accounts.aid as PostgreSQL's ANALYZE sampled it: the
	// first bin ends at 10297, its lower bound replaced by the actual
	// smallest aid, 1; 1,000,000 distinct values
	h := []types.Datum{{I: 1}, {I: 10297}}
	for len(h) < 101 {
		h = append(h, types.Datum{I: h[len(h)-1].I + 9900})
	}
	cmp := comparatorOf(types.TypeInt4)
	eq := func() float64 { return 1e-6 }
	frac := func(v int64, strict bool) float64 {
		return histFraction(h, types.Datum{I: v}, types.TypeInt4, cmp, strict, eq)
	}
	// where aid between 100 and 110: x <= 110 and x >= 100 (1 - x < 100)
	le := frac(110, false)
	ge := 1 - frac(100, true)
	if got := math.Round((le + ge - 1) * 1e6); got != 11 {
		t.Errorf("aid between 100 and 110: rows=%.0f, PostgreSQL's is 11", got)
	}
	// where aid < 1000
	if got := math.Round(frac(1000, true) * 1e6); got != 970 {
		t.Errorf("aid < 1000: rows=%.0f, PostgreSQL's is 970", got)
	}
}

func TestTypeWidth(t *testing.T) {
	for _, tc := range []struct {
		t    types.Type
		want int
	}{
		{types.TypeInt4, 4},
		{types.TypeInt8, 8},
		// char(84), pgbench's filler, which ANALYZE finds NULL in
		// pgbench_tellers: get_typavgwidth's full maximum size in
		// UTF-8 (84 × 4 + 4); pgbench_tellers is then width=352
		{types.Type{OID: types.OIDBpchar, Mod: 84 + 4}, 340},
		// varchar(10): 44 bytes at most, damped half-way from 32
		{types.Type{OID: types.OIDVarchar, Mod: 10 + 4}, 38},
		// varchar(1000): the damping stops at 1000 bytes
		{types.Type{OID: types.OIDVarchar, Mod: 1000 + 4}, 516},
		{types.TypeText, 32},
	} {
		if got := typeWidth(tc.t); got != tc.want {
			t.Errorf("typeWidth(%v mod %d) = %d, want %d", tc.t.OID, tc.t.Mod, got, tc.want)
		}
	}
}

func TestBoundedSortCost(t *testing.T) {
	c := defaultCosts()
	in := pathCost{total: 26394, rows: 1e6} // Seq Scan on pgbench_accounts
	for _, tc := range []struct {
		name  string
		limit float64
		want  string
	}{
		// order by abalance limit 10: a heap of 20 rows
		{"top-N heap sort", 10, "48003.64..50503.64"},
		// order by abalance: 128 MB through 4 MB of work_mem, 31 runs
		// merged 15 at a time, two passes
		{"external merge sort", 0, "235426.84..237926.84"},
	} {
		sc := c.boundedSortCost(in.rows, 97, tc.limit, float64(c.workMem))
		got := explained(pathCost{startup: in.total + sc.startup, total: in.total + sc.total})
		if got != tc.want {
			t.Errorf("%s: Sort cost=%s, PostgreSQL's is %s", tc.name, got, tc.want)
		}
	}
}
