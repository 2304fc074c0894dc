package txn

import (
	"context"
	"errors"
	"testing"
	"time"

	"lockd/locks"
)

func TestAssignXid(t *testing.T) {
	e := newEnv(t, Config{})
	tx := e.begin(t, ReadCommitted)
	if tx.Xid() != InvalidXid {
		t.Fatalf("Xid before first write = %d", tx.Xid())
	}
	next := e.m.NextXid()
	xid := mustAssign(t, tx)
	if xid != next || e.m.NextXid() != next+1 {
		t.Fatalf("assigned %d, next now %d; want %d, %d", xid, e.m.NextXid(), next, next+1)
	}
	if again := mustAssign(t, tx); again != xid {
		t.Fatalf("second AssignXid = %d, want %d", again, xid)
	}
	tag := locks.TransactionTag(uint32(xid))
	if n, _ := e.lm.Holds(tx.Proc(), tag, locks.ExclusiveLock); n != 1 {
		t.Fatalf("holds ExclusiveLock on %s %d times, want 1", tag.Describe(), n)
	}
	if !e.m.IsRunning(xid) || e.m.Status(xid) != InProgress {
		t.Fatalf("IsRunning %v Status %v", e.m.IsRunning(xid), e.m.Status(xid))
	}
	e.commit(t, tx)
	if e.m.IsRunning(xid) || e.m.Status(xid) != Committed {
		t.Fatalf("after commit: IsRunning %v Status %v", e.m.IsRunning(xid), e.m.Status(xid))
	}
	if tx.InProgress() {
		t.Fatal("InProgress after Commit")
	}
	tx.Abort() // no-op on an ended transaction
	if e.m.Status(xid) != Committed {
		t.Fatal("Abort after Commit changed the status")
	}
	s := e.m.Stats()
	if s.XidsAssigned != 1 || s.Commits != 1 || s.Aborts != 0 || s.ClearDirect != 1 {
		t.Fatalf("stats %+v", s)
	}
	for xid, want := range map[Xid]XidStatus{InvalidXid: Aborted, BootstrapXid: Committed, FrozenXid: Committed, e.m.NextXid() + 5: InProgress} {
		if got := e.m.Status(xid); got != want {
			t.Errorf("Status(%d) = %v, want %v", xid, got, want)
		}
	}
}

func TestBeginWhileActivePanics(t *testing.T) {
	e := newEnv(t, Config{})
	tx := e.begin(t, ReadCommitted)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	e.m.Begin(tx, tx.Proc(), ReadCommitted)
}

func TestReadOnlyCommitClearsXmin(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.write(t)
	r := e.begin(t, RepeatableRead)
	r.StatementSnapshot()
	e.commit(t, w)
	if got := e.m.OldestXmin(); got != w.Xid() {
		t.Fatalf("OldestXmin = %d, want the RR snapshot's xmin %d", got, w.Xid())
	}
	e.commit(t, r)
	if got, next := e.m.OldestXmin(), e.m.NextXid(); got != next {
		t.Fatalf("OldestXmin after read-only commit = %d, want next xid %d", got, next)
	}
	if s := e.m.Stats(); s.Commits != 2 || s.XidsAssigned != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestWaitFor(t *testing.T) {
	for _, end := range []string{"commit", "abort"} {
		t.Run(end, func(t *testing.T) {
			e := newEnv(t, Config{})
			holder := e.write(t)
			waiter := e.begin(t, ReadCommitted)
			done := make(chan error, 1)
			go func() { done <- waiter.WaitFor(context.Background(), holder.Xid(), 0) }()
			eventually(t, "waiter to block on the transaction lock", func() bool {
				typ, name := waiter.Proc().WaitEvent()
				return typ == "Lock" && name == "transactionid"
			})
			select {
			case err := <-done:
				t.Fatalf("WaitFor returned %v while the transaction runs", err)
			case <-time.After(10 * time.Millisecond):
			}
			if end == "commit" {
				e.commit(t, holder)
			} else {
				e.abort(holder)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if e.m.IsRunning(holder.Xid()) {
				t.Fatal("xid still running after WaitFor")
			}
			if n, _ := e.lm.Holds(waiter.Proc(), locks.TransactionTag(uint32(holder.Xid())), locks.ShareLock); n != 0 {
				t.Fatal("WaitFor kept its ShareLock")
			}
		})
	}
}

func TestWaitForOwnAndEnded(t *testing.T) {
	e := newEnv(t, Config{})
	tx := e.write(t)
	if err := tx.WaitFor(context.Background(), tx.Xid(), 0); err != nil {
		t.Fatal(err)
	}
	other := e.write(t)
	e.commit(t, other)
	if err := tx.WaitFor(context.Background(), other.Xid(), 0); err != nil {
		t.Fatal(err)
	}
}

func TestWaitForErrors(t *testing.T) {
	e := newEnv(t, Config{})
	holder := e.write(t)
	waiter := e.begin(t, ReadCommitted)

	err := waiter.WaitFor(context.Background(), holder.Xid(), 5*time.Millisecond)
	var lerr *locks.Error
	if !errors.As(err, &lerr) || lerr.SQLState() != "55P03" {
		t.Fatalf("lock timeout: got %v, want 55P03", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		eventually(t, "waiter to block", func() bool { _, n := waiter.Proc().WaitEvent(); return n == "transactionid" })
		cancel()
	}()
	if err := waiter.WaitFor(ctx, holder.Xid(), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v", err)
	}
}

func TestWaitForDeadlock(t *testing.T) {
	e := newEnv(t, Config{})
	e.lm.SetDeadlockTimeout(5 * time.Millisecond)
	a, b := e.write(t), e.write(t)
	errs := make(chan error, 2)
	go func() {
		err := a.WaitFor(context.Background(), b.Xid(), 0)
		if err != nil {
			e.abort(a)
		}
		errs <- err
	}()
	err := b.WaitFor(context.Background(), a.Xid(), 0)
	if err != nil {
		e.abort(b)
	}
	errs <- err
	var deadlocks int
	for range 2 {
		err := <-errs
		var lerr *locks.Error
		if errors.As(err, &lerr) && lerr.SQLState() == "40P01" {
			deadlocks++
		} else if err != nil {
			t.Errorf("unexpected error %v", err)
		}
	}
	if deadlocks != 1 {
		t.Fatalf("%d deadlock errors, want 1", deadlocks)
	}
}

func TestSnapshotNoAlloc(t *testing.T) {
	e := newEnv(t, Config{})
	for range 8 {
		e.write(t)
	}
	tx := e.begin(t, ReadCommitted)
	tx.StatementSnapshot()
	if n := testing.AllocsPerRun(100, func() { tx.StatementSnapshot() }); n != 0 {
		t.Fatalf("StatementSnapshot allocates %v times", n)
	}
	if n := len(tx.StatementSnapshot().Xip); n != 8 {
		t.Fatalf("xip has %d entries, want 8", n)
	}
	_ = tx.Commit()
	if n := testing.AllocsPerRun(100, func() {
		e.m.Begin(tx, tx.Proc(), ReadCommitted)
		tx.StatementSnapshot()
		_ = tx.Commit()
	}); n != 0 {
		t.Fatalf("read-only transaction allocates %v times", n)
	}
}

func TestSnapshotReuse(t *testing.T) {
	e := newEnv(t, Config{})
	e.m.SetSnapshotReuse(true)
	w := e.write(t)
	tx := e.begin(t, ReadCommitted)
	s1 := *tx.StatementSnapshot()
	e.write(t) // a new xid does not invalidate the snapshot: it is >= Xmax
	s2 := tx.StatementSnapshot()
	if st := e.m.Stats(); st.SnapshotsReused != 1 || s2.Xmax != s1.Xmax {
		t.Fatalf("second snapshot not reused: stats %+v, xmax %d vs %d", st, s2.Xmax, s1.Xmax)
	}
	e.commit(t, w)
	s3 := tx.StatementSnapshot()
	if st := e.m.Stats(); st.SnapshotsReused != 1 || s3.XidInProgress(w.Xid()) {
		t.Fatalf("snapshot after a commit reused or stale: stats %+v, snapshot %+v", st, s3)
	}
}
