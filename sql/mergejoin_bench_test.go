package sql

import (
	"strings"
	"testing"
)

// Merge joins (sql/exec/mergejoin.go) and GroupAggregate
// (sql/exec/groupagg.go) over 100,000-row tables: two tables merged, a
// full merge join, a small sorted table merged with the start of a large
// index, grouping in index order and over a Sort (hash joins and hash
// aggregation turned off so that these are the plans). One op
// is one query; allocations per op stay a small constant whatever the rows
// (none per row: the inner side is held in one slab that grows by
// doubling, groups allocate as they start):
//
//	go test ./sql -run XXX -bench 'MergeJoin|GroupAgg' -benchmem
func BenchmarkMergeJoin(b *testing.B) {
	_, s := testEngine(b, -1)
	mustRun(b, s, "create table acc (aid int primary key, bid int, abalance int)",
		"insert into acc select g, (g - 1) / 1000 + 1, g % 7 from generate_series(1, 100000) g",
		"create table acc2 (aid int primary key, bid int, abalance int)",
		"insert into acc2 select g, (g - 1) / 1000 + 1, g % 5 from generate_series(1, 100000) g",
		"create index acc_bid on acc (bid)",
		"create table br (bid int primary key, bbalance int)",
		"insert into br select g, 0 from generate_series(1, 100) g",
		"vacuum analyze acc", "vacuum analyze acc2", "vacuum analyze br")
	for _, q := range []struct{ name, set, sql, want, node string }{
		{"merge-inner", "enable_hashjoin", "select count(*) from acc a join acc2 b on a.aid = b.aid", "100000", "Merge Join"},
		{"merge-filter", "enable_hashjoin", "select count(*) from acc a join acc2 b on a.aid = b.aid and a.abalance <> b.abalance", "85711", "Merge Join"},
		{"merge-full", "enable_hashjoin", "select count(*) from acc a full join acc2 b on a.aid = b.aid", "100000", "Merge Full Join"},
		{"merge-small", "enable_hashjoin", "select count(*) from br join acc a on a.aid = br.bid", "100", "Merge Join"},
		{"group-index", "enable_hashagg", "select bid, count(*) from acc group by bid having count(*) > 1000", "", "GroupAggregate"},
		{"group-sort", "enable_hashagg", "select count(*) from (select abalance, count(*) from acc2 group by abalance) s", "5", "GroupAggregate"},
	} {
		b.Run(q.name, func(b *testing.B) {
			if q.set != "" {
				mustRun(b, s, "set "+q.set+" = off")
				defer mustRun(b, s, "reset "+q.set)
			}
			if plan := queryString(b, s, "explain (costs off) "+q.sql); !strings.Contains(plan, q.node) {
				b.Fatalf("%s: no %s in\n%s", q.sql, q.node, plan)
			}
			b.ReportAllocs()
			for b.Loop() {
				if got := queryString(b, s, q.sql); got != q.want {
					b.Fatalf("%s: %s, want %s", q.sql, got, q.want)
				}
			}
		})
	}
}
