package stats

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"lockd/sql/types"
)

func show(typ types.Type, ds []types.Datum) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, string(types.AppendText(nil, typ, d, nil)))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func showFloats(fs []float64) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, string(types.AppendText(nil, types.TypeFloat4, types.FloatDatum(f), nil)))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// The expected values are PostgreSQL 15.18's pg_stats for the same rows
// (a table analysed whole: every row is in the sample).
func TestComputeColumnMatchesPostgreSQL(t *testing.T) {
	for _, c := range []struct {
		lo                        int
		mcv, freq                 string
		corrK, corrV              string
		histFirst, histLast, hist string
	}{
		{0, "{v0,v1,v2,v3,v4,v5,v6}", "{0.15,0.15,0.14,0.14,0.14,0.14,0.14}", "1", "0.16747674", "0", "99", ""},
		{100, "{v2,v3,v0,v1,v4,v5,v6}", "{0.15,0.15,0.14,0.14,0.14,0.14,0.14}", "1", "0.11707171", "100", "199", ""},
	} {
		var ks, vs []types.Datum
		for k := c.lo; k < c.lo+100; k++ {
			ks = append(ks, types.IntDatum(int64(k)))
			vs = append(vs, types.TextDatum(fmt.Sprintf("v%d", k%7)))
		}
		k := ComputeColumn(ks, types.TypeInt4, 100, 100)
		if k.NullFrac != 0 || k.AvgWidth != 4 || k.NDistinct != -1 || k.MCV != nil || !k.HasCorrelation ||
			types.Itoa(int64(k.Correlation)) != c.corrK || len(k.Histogram) != 100 ||
			k.Histogram[0].I != int64(c.lo) || k.Histogram[99].I != int64(c.lo+99) {
			t.Errorf("k from %d: %+v", c.lo, k)
		}
		v := ComputeColumn(vs, types.TypeText, 100, 100)
		got := fmt.Sprintf("%v %v %v %s %s %s", v.NullFrac, v.AvgWidth, v.NDistinct, show(types.TypeText, v.MCV), showFloats(v.MCVFreq),
			showFloats([]float64{v.Correlation}))
		want := fmt.Sprintf("0 3 7 %s %s {%s}", c.mcv, c.freq, c.corrV)
		if got != want || v.Histogram != nil {
			t.Errorf("v from %d: got %s, want %s (histogram %v)", c.lo, got, want, v.Histogram)
		}
	}
}

func TestComputeColumnNulls(t *testing.T) {
	vals := []types.Datum{types.NullDatum, types.NullDatum}
	c := ComputeColumn(vals, types.TypeText, 100, 2)
	if c.NullFrac != 1 || c.AvgWidth != 0 || c.NDistinct != 0 || c.HasCorrelation {
		t.Errorf("all NULL text: %+v", c)
	}
	c = ComputeColumn(vals, types.TypeInt8, 100, 2)
	if c.NullFrac != 1 || c.AvgWidth != 8 {
		t.Errorf("all NULL int8: %+v", c)
	}
	// a quarter NULL, the rest unique: n_distinct -(1 - null_frac)
	vals = nil
	for i := range 400 {
		if i%4 == 0 {
			vals = append(vals, types.NullDatum)
		} else {
			vals = append(vals, types.IntDatum(int64(i)))
		}
	}
	c = ComputeColumn(vals, types.TypeInt4, 100, 400)
	if c.NullFrac != 0.25 || c.NDistinct != -0.75 || len(c.Histogram) != 101 {
		t.Errorf("quarter NULL: null_frac %v n_distinct %v histogram %d", c.NullFrac, c.NDistinct, len(c.Histogram))
	}
}

func TestDuj1(t *testing.T) {
	// n=30000 sampled of N=1e6, d=20000 distinct of which f1=15000 once
	got := Duj1(30000, 15000, 20000, 1e6)
	want := 38835.0 // floor(30000·20000/(15000 + 15000·0.03) + 0.5)
	if got != want {
		t.Errorf("Duj1 = %v, want %v", got, want)
	}
	if got := Duj1(100, 0, 5, 1e6); got != 5 { // clamped to at least d
		t.Errorf("Duj1 with no singletons = %v, want 5", got)
	}
	if got := Duj1(100, 100, 100, 50); got != 50 { // clamped to at most N
		t.Errorf("Duj1 over N = %v, want 50", got)
	}
}

func TestMCVListSize(t *testing.T) {
	// the whole table sampled: the list is kept
	if n := mcvListSize([]int{5, 4, 3}, 10, 0, 100, 100); n != 3 {
		t.Errorf("whole table: %d", n)
	}
	// one value at 50% of 30000 sampled rows out of 1e6, the others at
	// about the average frequency: only the first is significant
	counts := []int{15000, 40, 38, 37}
	if n := mcvListSize(counts, 400, 0, 30000, 1e6); n != 1 {
		t.Errorf("one common value: kept %d", n)
	}
}

func TestNumericSize(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"0", 2}, {"1", 4}, {"9999", 4}, {"10000", 4}, {"12345", 6}, {"1.5", 6}, {"12345.678", 8},
		{"0.0001", 4}, {"-7", 4}, {"100000000", 4}, {"1" + strings.Repeat("0", 300), 6},
	} {
		if got := numericSize(c.s); got != c.want {
			t.Errorf("numericSize(%s) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestBlockSampler(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ N, n int }{{10, 30}, {1000, 30}, {0, 5}, {7, 7}} {
		bs := NewBlockSampler(c.N, c.n, r)
		prev, got := -1, 0
		for {
			b, ok := bs.Next()
			if !ok {
				break
			}
			if b <= prev || b >= c.N {
				t.Fatalf("N=%d n=%d: block %d after %d", c.N, c.n, b, prev)
			}
			prev = b
			got++
		}
		if got != min(c.N, c.n) || bs.Chosen() != got {
			t.Errorf("N=%d n=%d: %d blocks", c.N, c.n, got)
		}
	}
}

func TestReservoirUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	hits := make([]int, 100)
	for range 2000 {
		res := NewReservoir(10, r)
		kept := make([]int, 10)
		for i := range 100 {
			if k := res.Offer(); k >= 0 {
				kept[k] = i
			}
		}
		for _, i := range kept {
			hits[i]++
		}
	}
	// each item is kept with probability 1/10: 200 of 2000 times
	for i, h := range hits {
		if h < 120 || h > 290 {
			t.Errorf("item %d kept %d times of 2000, want about 200", i, h)
		}
	}
}

// The integer sort orders exactly as the general comparator does: by
// value, equal values by tuple number (what the MCV list, the histogram
// and the correlation are read from).
func TestSortedOrderIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, typ := range []types.Type{types.TypeInt2, types.TypeInt4, types.TypeInt8} {
		vals := make([]types.Datum, 5000)
		var kept []int32
		for i := range vals {
			if r.IntN(10) == 0 {
				vals[i] = types.NullDatum
				continue
			}
			vals[i] = types.IntDatum(r.Int64N(400) - 200)
			kept = append(kept, int32(i))
		}
		cmp := comparator(typ)
		fast, keys := sortedOrder(vals, kept, typ, cmp)
		general, none := sortedOrder(vals, kept, types.TypeText, cmp) // not an integer OID: the comparator's sort
		if none != nil || len(keys) != len(kept) {
			t.Fatalf("%s: keys %d for %d values; %d for text", typ.Name, len(keys), len(kept), len(none))
		}
		if fmt.Sprint(fast) != fmt.Sprint(general) {
			t.Fatalf("%s: integer sort differs from the comparator's", typ.Name)
		}
		for i := 1; i < len(fast); i++ {
			a, b := vals[kept[fast[i-1]]].I, vals[kept[fast[i]]].I
			if a > b || a == b && fast[i-1] > fast[i] {
				t.Fatalf("%s: out of order at %d: %d/%d then %d/%d", typ.Name, i, a, fast[i-1], b, fast[i])
			}
		}
	}
}
