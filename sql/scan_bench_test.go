package sql

import (
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
