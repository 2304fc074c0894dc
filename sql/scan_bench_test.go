package sql

import (
	"context"
	"strings"
	"testing"

	"lockd/sql/types"
)

// BenchmarkSeqScanCount is pgbench's accounts table at scale 1 (100,000
// rows of four columns, a blank-padded char(84) among them) read by
// select count(*): what the 100-partition fast-path experiment spends
// most of its time on. One op is one full scan:
//
//	go test ./sql -run XXX -bench SeqScanCount -benchmem
func BenchmarkSeqScanCount(b *testing.B) {
	_, s := testEngine(b, -1)
	mustRun(b, s, "create table acc (aid int not null, bid int, abalance int, filler char(84))",
		"insert into acc select g, (g - 1) / 100000 + 1, 0, '' from generate_series(1, 100000) g")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if got := queryString(b, s, "select count(*) from acc"); got != "100000" {
			b.Fatalf("count: %s", got)
		}
	}
}

func TestTrimBlanks(t *testing.T) {
	for in, want := range map[string]string{
		"": "", " ": "", "a": "a", "a ": "a", " a": " a",
		"abc" + strings.Repeat(" ", 84): "abc", strings.Repeat(" ", 84): "",
		"x       y       ": "x       y", "12345678        ": "12345678", "1234567 ": "1234567",
		"a\t ": "a\t",
	} {
		if got := string(types.TrimBlanks([]byte(in))); got != want {
			t.Errorf("trimBlanks(%q) = %q, want %q", in, got, want)
		}
	}
}

// The executor's other per-row paths over the same table: a filter and
// an aggregate, a hash join with a ten-row table, a GROUP BY, an index
// range. One op is one query; allocations per op stay a small constant
// whatever the rows (none per row):
//
//	go test ./sql -run XXX -bench 'Executor' -benchmem
func BenchmarkExecutor(b *testing.B) {
	_, s := testEngine(b, -1)
	mustRun(b, s, "create table acc (aid int primary key, bid int, abalance int, filler char(84))",
		"insert into acc select g, (g - 1) / 10000 + 1, g % 7, '' from generate_series(1, 100000) g",
		"create table br (bid int primary key, bbalance int)",
		"insert into br select g, 0 from generate_series(1, 10) g")
	for _, q := range []struct{ name, sql, want string }{
		{"filter-sum", "select sum(abalance) from acc where abalance > 2", "257142"},
		{"hash-join", "select count(*) from acc a join br b on a.bid = b.bid", "100000"},
		{"group-by", "select count(*) from (select bid, sum(abalance) from acc group by bid) g", "10"},
		{"index-range", "select count(*) from acc where aid between 1000 and 1999", "1000"},
		{"bitmap-or", "select count(*) from acc where aid < 5000 or aid > 95000", "9999"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := queryString(b, s, q.sql); got != q.want {
					b.Fatalf("%s: %s, want %s", q.sql, got, q.want)
				}
			}
		})
	}
}

// BenchmarkPreparedPointSelect is pgbench's select-only transaction as
// the extended protocol runs it (-M prepared): one statement prepared
// once, then per op Bind, Describe portal, Execute and Sync — the
// session's share of a select-only backend's work per transaction:
//
//	go test ./sql -run XXX -bench PreparedPointSelect -benchmem
func BenchmarkPreparedPointSelect(b *testing.B) {
	_, s := testEngine(b, -1)
	mustRun(b, s, "create table acc (aid int primary key, bid int, abalance int, filler char(84))",
		"insert into acc select g, (g - 1) / 10000 + 1, g % 7, '' from generate_series(1, 100000) g",
		"analyze acc")
	st, err := s.Prepare("SELECT abalance FROM acc WHERE aid = $1", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	key := []byte("12345")
	rows := 0
	emit := func([]types.Datum) error { rows++; return nil }
	b.ReportAllocs()
	for b.Loop() {
		params, err := s.BindParams(st, "P_1", [][]byte{key}, nil)
		if err == nil {
			err = s.Bind("", st, params, nil)
		}
		if err == nil {
			_, _, err = s.PortalColumns("")
		}
		if err == nil {
			_, _, err = s.ExecutePortal(ctx, "", 0, emit)
		}
		if err == nil {
			err = s.Sync()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if rows != b.N {
		b.Fatalf("%d rows from %d executions", rows, b.N)
	}
}
