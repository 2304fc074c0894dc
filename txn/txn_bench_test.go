package txn

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkStatementSnapshot: GetSnapshotData with n other transactions
// running, in a 128-entry ProcArray. Must report 0 allocs/op.
func BenchmarkStatementSnapshot(b *testing.B) {
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprintf("running=%d", n), func(b *testing.B) {
			e := newEnv(b, Config{})
			for range n {
				e.write(b)
			}
			tx := e.begin(b, ReadCommitted)
			tx.StatementSnapshot()
			b.ReportAllocs()
			for b.Loop() {
				tx.StatementSnapshot()
			}
		})
	}
}

// BenchmarkCommit: write transactions (snapshot, xid, commit, release the
// transaction lock) from 8×GOMAXPROCS sessions, with procarray_group_update
// on and off. The ProcArrayLock contention comes from the snapshots.
func BenchmarkCommit(b *testing.B) {
	for _, group := range []bool{false, true} {
		b.Run(fmt.Sprintf("group=%v", group), func(b *testing.B) {
			e := newEnv(b, Config{})
			e.m.SetGroupUpdate(group)
			var pid atomic.Int32
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				p, err := e.lm.NewProc(pid.Add(1))
				if err != nil {
					b.Error(err)
					return
				}
				defer p.Close()
				var tx Txn
				for pb.Next() {
					e.m.Begin(&tx, p, ReadCommitted)
					tx.StatementSnapshot()
					if _, err := tx.AssignXid(); err != nil {
						b.Error(err)
						return
					}
					_ = tx.Commit()
					e.lm.ReleaseTransactionLocks(p)
				}
			})
			s := e.m.Stats()
			b.ReportMetric(float64(s.GroupFollowers)/float64(b.N), "followers/op")
		})
	}
}

// BenchmarkVisible: the per-row check, with hint bits set (no shared
// access) and without (a commit log lookup under XactSLRU shared).
func BenchmarkVisible(b *testing.B) {
	e := newEnv(b, Config{})
	w := e.write(b)
	e.commit(b, w)
	tx := e.begin(b, ReadCommitted)
	tx.StatementSnapshot()
	b.Run("hinted", func(b *testing.B) {
		h := TupleHeader{Xmin: w.Xid(), Flags: XminCommitted | XmaxInvalid}
		b.ReportAllocs()
		for b.Loop() {
			if !tx.Visible(&h) {
				b.Fatal("invisible")
			}
		}
	})
	b.Run("clog", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := TupleHeader{Xmin: w.Xid()}
			if !tx.Visible(&h) {
				b.Fatal("invisible")
			}
		}
	})
}
