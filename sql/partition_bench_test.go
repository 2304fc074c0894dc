package sql

import (
	"context"
	"fmt"
	"testing"

	"lockd/sql/types"
)

// BenchmarkPartitionedUpdate runs pgbench's account UPDATE and SELECT by
// primary key, prepared, on a plain table and on one partitioned in 10
// and 100 (each execution prunes to one partition, locks it and its key,
// and looks the row up there). The partitioned runs allocate what the
// plain one does:
//
//	go test ./sql -run XXX -bench PartitionedUpdate -benchmem
func BenchmarkPartitionedUpdate(b *testing.B) {
	for _, parts := range []int{0, 10, 100} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) {
			_, s := testEngine(b, -1)
			if parts == 0 {
				mustRun(b, s, "create table acc (aid int not null, abalance int)")
			} else {
				mustRun(b, s, "create table acc (aid int not null, abalance int) partition by range (aid)")
				for p := 0; p < parts; p++ {
					mustRun(b, s, fmt.Sprintf("create table acc_%d partition of acc for values from (%d) to (%d)", p, p*100, (p+1)*100))
				}
			}
			n := max(parts, 1) * 100
			mustRun(b, s, fmt.Sprintf("insert into acc select g, 0 from generate_series(0, %d) g", n-1), "alter table acc add primary key (aid)")
			up, err := s.Prepare("update acc set abalance = abalance + $1 where aid = $2", nil)
			if err != nil {
				b.Fatal(err)
			}
			sel, err := s.Prepare("select abalance from acc where aid = $1", nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx, discard := context.Background(), func([]types.Datum) error { return nil }
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				aid := types.IntDatum(int64(i * 7919 % n))
				if _, err := s.Execute(ctx, up, []types.Datum{types.IntDatum(1), aid}, discard); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Execute(ctx, sel, []types.Datum{aid}, discard); err != nil {
					b.Fatal(err)
				}
				s.Sync()
			}
		})
	}
}
