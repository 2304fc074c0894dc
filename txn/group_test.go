package txn

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockd/locks"
)

// TestGroupClear holds ProcArrayLock so that every committer's conditional
// acquisition fails, lines up n committers, and checks that with group
// update on one leader clears all n xids and wakes the others, and with it
// off each queues for the lock.
func TestGroupClear(t *testing.T) {
	const n = 5
	for _, group := range []bool{true, false} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			e := newEnv(t, Config{})
			e.m.SetGroupUpdate(group)
			blocker := e.proc(t)
			txs := make([]*Txn, n)
			for i := range txs {
				txs[i] = e.write(t)
			}
			e.m.procArrayLock.Acquire(blocker, locks.LWExclusive)
			var wg sync.WaitGroup
			for _, tx := range txs {
				wg.Go(func() {
					_ = tx.Commit()
					e.lm.ReleaseTransactionLocks(tx.Proc())
				})
			}
			lwWait := locks.LWLockWaitEvent(locks.TrancheProcArray)
			eventually(t, "committers to line up", func() bool {
				var followers, lockWaiters int
				for _, tx := range txs {
					switch tx.Proc().WaitEventCode() {
					case locks.WaitEventProcArrayGroupUpdate:
						followers++
					case lwWait:
						lockWaiters++
					}
				}
				if group {
					return followers == n-1 && lockWaiters == 1
				}
				return lockWaiters == n
			})
			e.m.procArrayLock.Release(blocker)
			waitOrDump(t, &wg, 20*time.Second, "the committers")
			for _, tx := range txs {
				if e.m.IsRunning(tx.Xid()) || e.m.Status(tx.Xid()) != Committed {
					t.Errorf("xid %d: running %v status %v", tx.Xid(), e.m.IsRunning(tx.Xid()), e.m.Status(tx.Xid()))
				}
				if ev := tx.Proc().WaitEventCode(); ev != 0 {
					t.Errorf("wait event %v left set", ev)
				}
			}
			s := e.m.Stats()
			if group {
				if s.GroupLeaders != 1 || s.GroupFollowers != n-1 || s.GroupSizes[groupSizeBucket(n)] != 1 {
					t.Fatalf("stats %+v", s)
				}
			} else if s.ClearLocked != n || s.GroupLeaders != 0 {
				t.Fatalf("stats %+v", s)
			}
			if e.m.groupFirst.Load() != invalidProcNumber {
				t.Fatal("group list not empty")
			}
		})
	}
}

// TestConcurrentCommits runs many committing sessions against sessions that
// take snapshots. Once Commit has returned, no later snapshot may see the
// xid as running, and the commit log must say how it ended.
func TestConcurrentCommits(t *testing.T) {
	const writers, iters, readers = 16, 200, 2
	for _, group := range []bool{true, false} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			e := newEnv(t, Config{})
			e.m.SetGroupUpdate(group)
			var ended [writers]atomic.Uint32 // last xid each writer ended
			var stop atomic.Bool
			wtx := make([]*Txn, writers)
			for i := range wtx {
				wtx[i] = &Txn{}
				e.m.Begin(wtx[i], e.proc(t), ReadCommitted)
				_ = wtx[i].Commit()
			}
			rtx := make([]*Txn, readers)
			for i := range rtx {
				rtx[i] = e.begin(t, ReadCommitted)
			}
			errs := make(chan error, writers+readers)
			var wg, rg sync.WaitGroup
			for i, tx := range wtx {
				wg.Go(func() {
					for k := range iters {
						e.m.Begin(tx, tx.Proc(), ReadCommitted)
						tx.StatementSnapshot()
						xid, err := tx.AssignXid()
						if err != nil {
							errs <- err
							return
						}
						if k%7 == 3 {
							tx.Abort()
						} else {
							_ = tx.Commit()
						}
						e.lm.ReleaseTransactionLocks(tx.Proc())
						ended[i].Store(uint32(xid))
					}
				})
			}
			for _, tx := range rtx {
				rg.Go(func() {
					var seen [writers]Xid
					for !stop.Load() {
						// A gap between snapshots, as a session has one per
						// statement: two readers whose shared holds of
						// ProcArrayLock overlap without one starve every
						// exclusive waiter (TestSharedBargingStarvesExclusive),
						// here the group clear's leader and its followers.
						runtime.Gosched()
						for i := range ended {
							seen[i] = Xid(ended[i].Load())
						}
						s := tx.StatementSnapshot()
						for _, xid := range seen {
							if xid == InvalidXid {
								continue
							}
							if s.XidInProgress(xid) {
								errs <- fmt.Errorf("xid %d ended before snapshot %+v but is in progress", xid, s)
								return
							}
							if st := e.m.Status(xid); st == InProgress {
								errs <- fmt.Errorf("xid %d ended but clog says %v", xid, st)
								return
							}
							h := TupleHeader{Xmin: xid}
							if tx.Visible(&h) != (e.m.Status(xid) == Committed) {
								errs <- fmt.Errorf("visibility of ended xid %d wrong", xid)
								return
							}
						}
					}
				})
			}
			waitOrDump(t, &wg, 60*time.Second, "the writers")
			stop.Store(true)
			waitOrDump(t, &rg, 20*time.Second, "the readers")
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			var committed, aborted int
			for x := FirstNormalXid; x < e.m.NextXid(); x++ {
				if e.m.IsRunning(x) {
					t.Fatalf("xid %d still running", x)
				}
				switch e.m.Status(x) {
				case Committed:
					committed++
				case Aborted:
					aborted++
				default:
					t.Fatalf("xid %d in progress", x)
				}
			}
			s := e.m.Stats()
			if committed+aborted != writers*iters || uint64(aborted) != s.Aborts {
				t.Fatalf("%d committed, %d aborted; stats %+v", committed, aborted, s)
			}
			if got := s.ClearDirect + s.ClearLocked + s.GroupLeaders + s.GroupFollowers; got != writers*iters {
				t.Fatalf("%d ProcArray clears, want %d: %+v", got, writers*iters, s)
			}
			if group && s.ClearLocked != 0 || !group && s.GroupLeaders != 0 {
				t.Fatalf("wrong clearing mode: %+v", s)
			}
			if e.m.groupFirst.Load() != invalidProcNumber {
				t.Fatal("group list not empty")
			}
			if got, next := e.m.OldestXmin(), e.m.NextXid(); !PrecedesOrEquals(got, next) {
				t.Fatalf("OldestXmin %d beyond next xid %d", got, next)
			}
			t.Logf("clears: direct %d locked %d leaders %d followers %d sizes %v",
				s.ClearDirect, s.ClearLocked, s.GroupLeaders, s.GroupFollowers, s.GroupSizes)
		})
	}
}
