package sql

import "testing"

// Semi and anti joins (sql/exec/semijoin.go) over a 100,000-row table and
// a 100-row one: hashed (EXISTS, NOT EXISTS), made unique for an inner
// join (IN), an index nested loop from the small side, and a correlated
// subquery that stays one, whose result is kept while the outer value
// repeats. One op is one query; allocations per op stay a small constant
// whatever the rows (none per row):
//
//	go test ./sql -run XXX -bench SemiJoin -benchmem
func BenchmarkSemiJoin(b *testing.B) {
	_, s := testEngine(b, -1)
	mustRun(b, s, "create table acc (aid int primary key, bid int, abalance int)",
		"insert into acc select g, (g - 1) / 1000 + 1, g % 7 from generate_series(1, 100000) g",
		"create index acc_bid on acc (bid)",
		"create table tel (tid int primary key, bid int)",
		"insert into tel select g, (g - 1) % 50 + 1 from generate_series(1, 100) g",
		"analyze acc", "analyze tel")
	for _, q := range []struct{ name, sql, want string }{
		{"hash-semi", "select count(*) from acc where exists (select 1 from tel where tel.bid = acc.bid and tel.tid > 10)", "50000"},
		{"hash-anti", "select count(*) from acc where not exists (select 1 from tel where tel.bid = acc.bid)", "50000"},
		{"unique-in", "select count(*) from acc where bid in (select bid from tel)", "50000"},
		{"index-semi", "select count(*) from tel where exists (select 1 from acc where acc.bid = tel.bid)", "100"},
		{"index-join", "select count(*) from tel join acc on acc.aid = tel.bid", "100"},
		{"kept-subplan", "select count(*) from acc where abalance < (select count(*) from tel where tel.bid = acc.bid)", "14285"},
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
