package locks

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkFastPathLock is one backend taking and releasing an
// AccessShareLock on a relation through its fast-path slots.
func BenchmarkFastPathLock(b *testing.B) {
	bp := newBenchProcs(b, 1, -1)
	p, m := bp.ps[0], bp.m
	ctx := context.Background()
	rel := RelationTag(1, 16384)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Lock(ctx, p, rel, AccessShareLock, LockOptions{}); err != nil {
			b.Fatal(err)
		}
		m.Unlock(p, rel, AccessShareLock, false)
	}
	if p.Stats().FastPath.Acquisitions == 0 {
		b.Fatal("fast path not used")
	}
}

// BenchmarkFastPathLockParallel: every backend locks the same relation;
// with the fast path nothing is shared, so this should scale with cores.
func BenchmarkFastPathLockParallel(b *testing.B) {
	for _, slots := range []int{-1, 0} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			bp := newBenchProcs(b, 64, slots)
			ctx := context.Background()
			rel := RelationTag(1, 16384)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				p := bp.get()
				for pb.Next() {
					_ = bp.m.Lock(ctx, p, rel, AccessShareLock, LockOptions{})
					bp.m.Unlock(p, rel, AccessShareLock, false)
				}
			})
		})
	}
}

// BenchmarkSharedTableLock takes and releases locks that always go to the
// shared table (fast path off), each backend on its own relations, with 1
// and 16 partitions, serially and under parallel load.
func BenchmarkSharedTableLock(b *testing.B) {
	for _, parts := range []int{1, 16} {
		for _, par := range []bool{false, true} {
			name := fmt.Sprintf("partitions=%d/serial", parts)
			if par {
				name = fmt.Sprintf("partitions=%d/parallel", parts)
			}
			b.Run(name, func(b *testing.B) {
				m := newTestManager(b, Config{MaxConnections: 64, Partitions: parts})
				m.SetFastPathSlots(0)
				var procs []*Proc
				for i := 0; i < 64; i++ {
					p, _ := m.NewProc(int32(i + 1))
					procs = append(procs, p)
				}
				defer func() {
					for _, p := range procs {
						p.Close()
					}
				}()
				ctx := context.Background()
				var nextProc atomic.Int32
				body := func(p *Proc, loop func() bool) {
					base := uint32(p.Number()) * 1000
					i := uint32(0)
					for loop() {
						rel := RelationTag(1, base+i%8)
						i++
						_ = m.Lock(ctx, p, rel, AccessShareLock, LockOptions{})
						m.Unlock(p, rel, AccessShareLock, false)
					}
				}
				b.ReportAllocs()
				if !par {
					body(procs[0], b.Loop)
					return
				}
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					n := nextProc.Add(1)
					body(procs[int(n)%len(procs)], pb.Next)
				})
			})
		}
	}
}

// BenchmarkPartitionedQuery is the 2024 "many partitions" shape: a backend
// locks 100 relations AccessShare (a query over a partitioned table), then
// releases everything at commit. With 16 slots 84 of the locks go to the
// shared table; with 1024 all fit in the fast path. The parallel variant
// runs 8 backends so that the partition LWLocks are contended.
func BenchmarkPartitionedQuery(b *testing.B) {
	for _, par := range []bool{false, true} {
		for _, slots := range []int{16, 64, 1024} {
			name := fmt.Sprintf("serial/slots=%d", slots)
			if par {
				name = fmt.Sprintf("parallel/slots=%d", slots)
			}
			b.Run(name, func(b *testing.B) {
				bp := newBenchProcs(b, 16, slots)
				ctx := context.Background()
				var rels [100]LockTag
				for i := range rels {
					rels[i] = RelationTag(1, uint32(20000+i))
				}
				query := func(p *Proc) {
					for _, r := range rels {
						if err := bp.m.Lock(ctx, p, r, AccessShareLock, LockOptions{}); err != nil {
							b.Fatal(err)
						}
					}
					bp.m.ReleaseTransactionLocks(p)
				}
				b.ReportAllocs()
				if par {
					b.SetParallelism(4)
					b.RunParallel(func(pb *testing.PB) {
						p := bp.get()
						for pb.Next() {
							query(p)
						}
					})
				} else {
					p := bp.ps[0]
					for b.Loop() {
						query(p)
					}
				}
				b.StopTimer()
				st := bp.m.Stats().FastPath
				b.ReportMetric(float64(st.Acquisitions)/float64(st.Acquisitions+st.FallbacksFull), "fp-hit-ratio")
			})
		}
	}
}
