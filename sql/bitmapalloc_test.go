package sql

import (
	"testing"
)

// A bitmap heap scan allocates per scan, never per row or per page: the
// allocations of one query stay the same whether its bitmap names 300
// rows or 30,000 (on 3,000 pages). Its bitmap and iterator are reused by
// the session's next bitmap scan.
func TestBitmapScanAllocations(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s, "create table bm (a int primary key, b int, filler char(84))",
		"insert into bm select g, (g * 7919) % 1000, '' from generate_series(1, 100000) g",
		"create index bm_b on bm (b)",
		"analyze bm",
		"set enable_seqscan = off", "set enable_indexscan = off")
	allocs := func(q, want string) float64 {
		if got := queryString(t, s, q); got != want {
			t.Fatalf("%s: %s, want %s", q, got, want)
		}
		return testing.AllocsPerRun(5, func() { queryString(t, s, q) })
	}
	few := allocs("select sum(a) from bm where b = 3 or b = 4", "9975300")
	many := allocs("select sum(a) from bm where b < 150 or b > 849", "1500015000")
	t.Logf("%.0f allocations for 200 rows, %.0f for 30,000", few, many)
	if many > few+20 {
		t.Errorf("%.0f allocations for 30,000 rows, %.0f for 200: allocation per row or page", many, few)
	}
}
