package txn

import (
	"flag"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockd/locks"
	"lockd/wal"
)

var groupStressCommits = flag.Int("groupstress.commits", 300, "commits per session in TestGroupClearUnderCommitRecords")

// dumpGoroutines returns the stacks of every goroutine, for a test that
// stopped making progress.
func dumpGoroutines() string {
	buf := make([]byte, 1<<22)
	return string(buf[:runtime.Stack(buf, true)])
}

// waitOrDump waits for wg, failing t with every goroutine's stack if that
// takes longer than limit: a hang then shows who waits for whom instead of
// running into the test binary's timeout.
func waitOrDump(t *testing.T, wg *sync.WaitGroup, limit time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s did not finish within %v; goroutines:\n%s", what, limit, dumpGoroutines())
	}
}

// TestGroupClearUnderCommitRecords is the stress test for group xid
// clearing now that a commit first writes (and, half the time, flushes) a
// commit record: 16 sessions commit, abort and roll back savepoints with
// procarray_group_update on, while snapshot takers read the ProcArray, a
// "blocker" now and then holds ProcArrayLock exclusively so that groups
// form behind it, and checkpoints wait for commits between their record
// and their commit-log update. Every session must finish; a watchdog that
// sees no commit for 10 seconds fails the test with a goroutine dump (see
// docs/txn.md on the TestGroupClear hang).
func TestGroupClearUnderCommitRecords(t *testing.T) {
	lm, err := locks.NewManager(locks.Config{MaxConnections: 40})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wal.Open(wal.Config{DataDir: t.TempDir(), SegmentSize: 1 << 20, Buffers: 16, InsertLocks: 8, MaxProcs: 64,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.StartupXLOG([256]wal.RedoFunc{}); err != nil {
		t.Fatal(err)
	}
	w.SetFsync(false) // the flush path and its locks run; no disk to wait for
	w.StartWriter(nil)
	e := newEnv(t, Config{Locks: lm, WAL: w, MaxProcs: 64})
	e.m.SetGroupUpdate(true)
	w.SetActiveBackendsFunc(e.m.MinimumActiveBackends)

	const sessions = 16
	var commits atomic.Uint64
	stop := make(chan struct{})
	var stopOnce sync.Once
	var bg sync.WaitGroup
	defer stopOnce.Do(func() { close(stop) })
	// Snapshot takers, each a session running one statement after another:
	// a snapshot, then the statement's work. (Two goroutines that take
	// snapshots back to back with nothing in between starve any exclusive
	// waiter — see TestSharedBargingStarvesExclusive.)
	for range 2 {
		tx := e.begin(t, ReadCommitted)
		bg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Microsecond):
				}
				tx.StatementSnapshot()
			}
		})
	}
	// The blocker: groups form behind it.
	blocker := e.proc(t)
	bg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			e.m.procArrayLock.Acquire(blocker, locks.LWExclusive)
			time.Sleep(200 * time.Microsecond)
			e.m.procArrayLock.Release(blocker)
		}
	})
	// Checkpoints: they wait for the commits between record and log.
	ckptProc := e.proc(t)
	bg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if c, ok := w.BeginCheckpoint(ckptProc, wal.CkptForce|wal.CkptImmediate); ok {
				w.EndCheckpoint(ckptProc, c, wal.CheckpointInfo{NextXid: uint32(e.m.NextXid())})
			}
		}
	})
	// The watchdog.
	stuck := make(chan string, 1)
	bg.Go(func() {
		last, since := commits.Load(), time.Now()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if n := commits.Load(); n != last {
				last, since = n, time.Now()
			} else if time.Since(since) > 10*time.Second {
				stuck <- dumpGoroutines()
				return
			}
		}
	})

	var wg sync.WaitGroup
	start := time.Now()
	for i := range sessions {
		tx := &Txn{}
		p := e.proc(t)
		wg.Go(func() {
			// The commits given, and more while no group has formed
			// yet (a loaded machine can run them all between two of
			// the blocker's holds), for at most 10 s.
			for k := 0; k < *groupStressCommits || e.m.Stats().GroupFollowers == 0 && time.Since(start) < 10*time.Second; k++ {
				e.m.Begin(tx, p, ReadCommitted)
				opts := DefaultCommitOptions
				if k%2 == 1 {
					opts.Sync = SyncCommitOff
				}
				if k%5 == 0 {
					opts.Delay, opts.Siblings = 20*time.Microsecond, 2
				}
				tx.SetCommitOptions(opts)
				tx.StatementSnapshot()
				if _, err := tx.AssignXid(); err != nil {
					t.Error(err)
					return
				}
				if k%3 == 0 {
					tx.BeginSub()
					tx.AssignXid()
					if k%2 == 0 {
						tx.AbortSub()
					} else {
						tx.CommitSub()
					}
				}
				if (i+k)%11 == 0 {
					tx.Abort()
				} else if err := tx.Commit(); err != nil {
					t.Error(err)
				}
				e.lm.ReleaseTransactionLocks(p)
				commits.Add(1)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case dump := <-stuck:
		t.Fatalf("no commit for 10 s; goroutines:\n%s", dump)
	}
	stopOnce.Do(func() { close(stop) })
	waitOrDump(t, &bg, 30*time.Second, "the background goroutines")
	s := e.m.Stats()
	if s.GroupLeaders == 0 || s.GroupFollowers == 0 {
		t.Fatalf("no groups formed: %+v", s)
	}
	if e.m.groupFirst.Load() != invalidProcNumber {
		t.Fatal("group list not empty")
	}
	w.Abandon()
	t.Log(fmt.Sprintf("%d commits and aborts; group leaders %d, followers %d; clears direct %d", commits.Load(),
		s.GroupLeaders, s.GroupFollowers, s.ClearDirect))
}

// TestSharedBargingStarvesExclusive shows why TestGroupClear-style tests
// could hang with snapshot takers in a tight loop: an LWLock grants shared
// mode to a newcomer whenever no exclusive holder exists, even with an
// exclusive waiter queued (PostgreSQL's LWLockAttemptLock since 9.5), so
// shared holders that overlap without a gap keep ProcArrayLock from the
// group clear's leader for as long as they go on — and every follower
// waits on the leader. Here two sessions hand shared holds to each other
// for 300 ms while a leader waits; it gets the lock only once they stop.
func TestSharedBargingStarvesExclusive(t *testing.T) {
	e := newEnv(t, Config{})
	a, b, leader := e.proc(t), e.proc(t), e.proc(t)
	l := &e.m.procArrayLock
	l.Acquire(a, locks.LWShared)
	got := make(chan time.Time, 1)
	go func() {
		l.Acquire(leader, locks.LWExclusive)
		at := time.Now()
		l.Release(leader)
		got <- at
	}()
	eventually(t, "the leader to queue", func() bool { return leader.WaitEventCode() == locks.LWLockWaitEvent(locks.TrancheProcArray) })
	start := time.Now()
	holder, other := a, b
	for time.Since(start) < 300*time.Millisecond {
		l.Acquire(other, locks.LWShared) // barges past the queued leader
		l.Release(holder)
		holder, other = other, holder
	}
	select {
	case <-got:
		t.Fatal("the exclusive waiter got the lock while shared holds overlapped")
	default:
	}
	stopped := time.Now()
	l.Release(holder)
	select {
	case at := <-got:
		t.Logf("exclusive waiter starved %v, granted %v after the shared holds stopped", stopped.Sub(start).Round(time.Millisecond), at.Sub(stopped))
	case <-time.After(10 * time.Second):
		t.Fatalf("the exclusive waiter was not granted after the shared holds ended; goroutines:\n%s", dumpGoroutines())
	}
}
