package catalog

import (
	"math"
	"testing"

	"lockd/sql/types"
)

// TestBtreeSize holds the model to the relpages PostgreSQL 15 gave these
// indexes, built by CREATE INDEX (plans.sql's accounts: 100,000 rows, bid
// 10 values; sz: 200,000 rows, a = g, b = g::bigint, t = 'key' || g,
// d = g / 2, c = 'x'::char(10), f = g::float8, n = g::numeric).
func TestBtreeSize(t *testing.T) {
	tab := &TableDef{Cols: []ColumnDef{
		{Name: "a", TypeOID: types.OIDInt4, TypeMod: -1}, {Name: "b", TypeOID: types.OIDInt8, TypeMod: -1},
		{Name: "t", TypeOID: types.OIDText, TypeMod: -1}, {Name: "d", TypeOID: types.OIDInt4, TypeMod: -1},
		{Name: "c", TypeOID: types.OIDBpchar, TypeMod: 14}, {Name: "f", TypeOID: types.OIDFloat8, TypeMod: -1},
		{Name: "n", TypeOID: types.OIDNumeric, TypeMod: -1}}}
	for _, c := range []struct {
		name             string
		cols             []int
		unique           bool
		entries, distinc float64
		keyBytes         float64 // lockd's average key
		pages            float64 // PostgreSQL's relpages
		height           int
		tolerance        float64
	}{
		{"accounts_pkey", []int{0}, true, 100000, 100000, 9, 276, 1, 0},
		{"accounts_bid", []int{0}, false, 100000, 10, 9, 87, 1, 0},
		{"p_0_k_idx", []int{0}, false, 1000, 1000, 9, 5, 1, 0},
		{"pgbench_accounts_pkey", []int{0}, true, 1000000, 1000000, 9, 2745, 2, 0},
		{"sz_a", []int{0}, true, 200000, 200000, 9, 551, 2, 0},
		{"sz_b", []int{1}, false, 200000, 200000, 9, 551, 2, 0},
		{"sz_d", []int{3}, false, 200000, 100001, 9, 497, 2, 0},
		{"sz_da", []int{3, 0}, false, 200000, 200000, 18, 551, 2, 0},
		{"sz_c", []int{4}, false, 200000, 1, 4, 175, 2, 0},
		{"sz_f", []int{5}, false, 200000, 200000, 9, 551, 2, 0},
		{"sz_n", []int{6}, false, 200000, 200000, 9, 551, 2, 0},
		{"sz_t", []int{2}, false, 200000, 200000, 1 + 8.9 + 2, 761, 2, 0.02},
		{"sz_ab", []int{0, 1}, false, 200000, 200000, 18, 772, 2, 0.01},
		{"empty", []int{0}, true, 0, 0, 0, 1, 0, 0},
		{"one", []int{0}, true, 1, 1, 9, 2, 0, 0},
	} {
		ix := &IndexDef{Name: c.name, Cols: c.cols, Unique: c.unique}
		data, dedup := BtreeTupleData(tab, ix, c.keyBytes)
		pages, height := BtreeSize(c.entries, c.distinc, data, dedup)
		if math.Abs(pages-c.pages) > c.tolerance*c.pages || height != c.height {
			t.Errorf("%s: %v pages, height %d; PostgreSQL: %v, %d (tuple data %v, dedup %v)", c.name, pages, height, c.pages, c.height, data, dedup)
		}
	}
}
