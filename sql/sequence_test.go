package sql

import (
	"context"
	"strings"
	"testing"

	"lockd/sql/catalog"
	"lockd/sql/types"
)

// TestSerialSequenceNames: the names serial and identity columns give
// their sequences (makeObjectName, constraint.go).
func TestSerialSequenceNames(t *testing.T) {
	long := strings.Repeat("abcdefghij", 5) // 50 bytes
	cases := []struct{ name1, name2, label, want string }{
		{"t", "id", "seq", "t_id_seq"},
		{long, "x", "seq", long + "_x_seq"},
		// the longer part loses bytes until the name fits in 63
		{long, "klmnopqrstklmnopqrst", "seq", long[:38] + "_klmnopqrstklmnopqrst_seq"},
		{long, "klmnopqrstklmnopqrst", "seq1", long[:37] + "_klmnopqrstklmnopqrst_seq1"},
		// never half a UTF-8 character
		{strings.Repeat("é", 40), "c", "seq", strings.Repeat("é", 28) + "_c_seq"},
	}
	for _, c := range cases {
		got := catalog.MakeObjectName(c.name1, c.name2, c.label)
		if got != c.want || len(got) > catalog.NameDataLen-1 {
			t.Errorf("makeObjectName(%q, %q, %q) = %q (%d bytes), want %q", c.name1, c.name2, c.label, got, len(got), c.want)
		}
	}
}

// TestSequenceStateReload opens a second engine on the data directory of
// a checkpointed one: the sequences continue where they were.
func TestSequenceStateReload(t *testing.T) {
	eng, s := testEngine(t, -1)
	mustRun(t, s, "create sequence a", "create sequence b increment -2", "create table t (id serial)")
	mustRun(t, s, "select nextval('a')", "select nextval('a')", "select nextval('b')", "insert into t default values")
	if err := eng.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	eng2, err := NewEngine(EngineConfig{Settings: eng.settings, Locks: eng.locks, Txns: eng.txns, Store: eng.store, DataDir: eng.dataDir})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want catalog.SeqState
	}{{"a", catalog.SeqState{LastValue: 2, LogCnt: 31, IsCalled: true}}, {"b", catalog.SeqState{LastValue: -1, LogCnt: 32, IsCalled: true}}, {"t_id_seq", catalog.SeqState{LastValue: 1, LogCnt: 32, IsCalled: true}}} {
		q := eng2.cat.State().Sequence(c.name)
		if q == nil {
			t.Fatalf("%s: not in the reloaded catalog", c.name)
		}
		if got := eng2.seqs.Get(q.RelFile).St; got != c.want {
			t.Errorf("%s after reload: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// BenchmarkNextval runs prepared nextval calls, without and with a
// session cache (select 1 is the baseline of a prepared statement in an
// implicit transaction), and a prepared INSERT into a serial column:
//
//	go test ./sql -run XXX -bench Nextval -benchmem
func BenchmarkNextval(b *testing.B) {
	for _, c := range []struct{ name, setup, stmt string }{
		{"select-1", "create sequence s", "select 1"},
		{"cache=1", "create sequence s", "select nextval('s')"},
		{"cache=100", "create sequence s cache 100", "select nextval('s')"},
		{"serial-insert", "create table t (id serial, v int)", "insert into t (v) values (1)"},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, s := testEngine(b, -1)
			mustRun(b, s, c.setup)
			st, err := s.Prepare(c.stmt, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx, discard := context.Background(), func([]types.Datum) error { return nil }
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Execute(ctx, st, nil, discard); err != nil {
					b.Fatal(err)
				}
				s.Sync()
			}
		})
	}
}
