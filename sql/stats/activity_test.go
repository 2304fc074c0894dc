package stats

import (
	"math"
	"reflect"
	"testing"
	"time"

	"lockd/sql/types"
)

func activity(t *testing.T, s *Store, oid uint32) TableActivity {
	t.Helper()
	a := s.Activity()[oid]
	if a == nil {
		t.Fatalf("no activity for %d", oid)
	}
	return *a
}

// TestXactCounts follows AtEOXact_PgStat: attempted work counts in
// n_tup_*, committed work in the live/dead/changed counts, aborted
// inserts and updates leave dead rows, savepoints roll back their share,
// and a committed TRUNCATE restarts live, dead and inserts since VACUUM.
func TestXactCounts(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBackend()
	var x Xact
	const oid = 16384

	x.Inserted(oid, 10)
	x.End(b, true)
	if a := activity(t, s, oid); a.Inserted != 10 || a.Live != 10 || a.ModSinceAnalyze != 10 || a.InsSinceVacuum != 10 {
		t.Fatalf("after a committed insert: %+v", a)
	}

	x.Updated(oid, 2)
	x.Deleted(oid, 1)
	x.Inserted(oid, 5)
	x.End(b, false)
	if a := activity(t, s, oid); a.Inserted != 15 || a.Updated != 2 || a.Deleted != 1 || a.Live != 10 || a.Dead != 7 || a.ModSinceAnalyze != 10 || a.InsSinceVacuum != 15 {
		t.Fatalf("after an abort: %+v", a)
	}

	x.Updated(oid, 1)
	mark := x.Mark()
	x.Inserted(oid, 3)
	x.Deleted(oid, 2)
	x.RollbackTo(mark)
	x.Inserted(oid, 1)
	x.End(b, true)
	// committed: 1 update, 1 insert; rolled back: 3 inserts, 2 deletes
	if a := activity(t, s, oid); a.Inserted != 19 || a.Updated != 3 || a.Deleted != 3 || a.Live != 11 || a.Dead != 7+1+3 || a.ModSinceAnalyze != 12 {
		t.Fatalf("after a savepoint: %+v", a)
	}

	// ANALYZE in a transaction that inserted 2 rows it counted: those
	// are counted again at commit, so ANALYZE subtracts them
	x.Inserted(oid, 2)
	live, dead := x.Pending(oid)
	s.ReportAnalyze(oid, 13-live, 0-dead, true, false, time.Now())
	x.End(b, true)
	if a := activity(t, s, oid); a.Live != 13 || a.Dead != 0 || a.ModSinceAnalyze != 2 || a.AnalyzeCount != 1 || a.LastAnalyze.IsZero() {
		t.Fatalf("after ANALYZE: %+v", a)
	}

	// TRUNCATE, then an insert, in one transaction; then one rolled back
	x.Inserted(oid, 4)
	x.Truncated(oid)
	x.Inserted(oid, 1)
	x.End(b, true)
	if a := activity(t, s, oid); a.Live != 1 || a.Dead != 0 || a.InsSinceVacuum != 1 {
		t.Fatalf("after a committed TRUNCATE: %+v", a)
	}
	x.Inserted(oid, 4)
	x.Truncated(oid)
	x.Inserted(oid, 1)
	x.End(b, false)
	if a := activity(t, s, oid); a.Live != 1 || a.Dead != 4 {
		t.Fatalf("after a rolled-back TRUNCATE (its earlier inserts are dead): %+v", a)
	}

	// a backend's counts survive it, and the file
	b.Close()
	s.ReportVacuum(oid, 1, 0, false, time.Now())
	before := activity(t, s, oid)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	after := activity(t, s2, oid)
	if !after.LastVacuum.Equal(before.LastVacuum) || !after.LastAnalyze.Equal(before.LastAnalyze) {
		t.Fatalf("times after reopening: %+v, want %+v", after, before)
	}
	after.LastVacuum, after.LastAnalyze, before.LastVacuum, before.LastAnalyze = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if after != before {
		t.Fatalf("after reopening: %+v, want %+v", after, before)
	}
}

// TestStoreFile: statistics come back from the file as they were, values
// of every kind included (NaN and infinities for floats).
func TestStoreFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := &TableStats{RelTuples: 1e6, RelPages: 5000, Cols: []*ColumnStats{
		{TypeOID: types.OIDInt8, NullFrac: 0.25, AvgWidth: 8, NDistinct: -0.5, MCV: []types.Datum{types.IntDatum(-7)}, MCVFreq: []float64{0.5},
			Histogram: []types.Datum{types.IntDatum(1), types.IntDatum(1 << 60)}, Correlation: -0.25, HasCorrelation: true},
		nil,
		{TypeOID: types.OIDFloat8, AvgWidth: 8, NDistinct: 3, MCV: []types.Datum{types.FloatDatum(math.NaN()), types.FloatDatum(math.Inf(-1)), types.FloatDatum(0.1)},
			MCVFreq: []float64{0.5, 0.25, 0.25}},
		{TypeOID: types.OIDText, AvgWidth: 5, NDistinct: 2, Histogram: []types.Datum{types.TextDatum("a\"b"), types.TextDatum("é")}},
	}}
	s.Publish(16400, ts)
	s.SetSize(16401, 1e6, 2745)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	got := s2.Table(16400)
	if !reflect.DeepEqual(got.Cols[0], ts.Cols[0]) || got.Cols[1] != nil || !reflect.DeepEqual(got.Cols[3], ts.Cols[3]) || got.RelTuples != 1e6 || got.RelPages != 5000 {
		t.Fatalf("got %+v", got)
	}
	f := got.Cols[2]
	if !math.IsNaN(f.MCV[0].F) || !math.IsInf(f.MCV[1].F, -1) || f.MCV[2].F != 0.1 {
		t.Fatalf("floats: %+v", f.MCV)
	}
	if ix := s2.Table(16401); ix == nil || ix.RelTuples != 1e6 || ix.RelPages != 2745 {
		t.Fatalf("index: %+v", ix)
	}
	s2.Prune(func(oid uint32) bool { return oid == 16401 })
	if s2.Table(16400) != nil || s2.Table(16401) == nil {
		t.Fatal("Prune kept the wrong relations")
	}
}
