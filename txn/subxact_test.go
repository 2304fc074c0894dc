package txn

import (
	"context"
	"testing"
	"time"

	"lockd/locks"
)

func holdsXidLock(e *testEnv, tx *Txn, xid Xid) bool {
	n, _ := e.lm.Holds(tx.Proc(), locks.TransactionTag(uint32(xid)), locks.ExclusiveLock)
	return n > 0
}

// TestSubxactAssignsParentsFirst: a subtransaction gets its xid at its
// first write, after the top level and every enclosing level got theirs,
// and each holds ExclusiveLock on its xid.
func TestSubxactAssignsParentsFirst(t *testing.T) {
	e := newEnv(t, Config{})
	tx := e.begin(t, ReadCommitted)
	tx.BeginSub()
	tx.BeginSub()
	if tx.NestLevel() != 3 || tx.CurrentXid() != InvalidXid {
		t.Fatalf("nest level %d, current xid %d", tx.NestLevel(), tx.CurrentXid())
	}
	next := e.m.NextXid()
	cur := mustAssign(t, tx)
	if tx.Xid() != next || cur != next+2 || tx.CurrentXid() != cur {
		t.Fatalf("top %d current %d, want %d and %d", tx.Xid(), cur, next, next+2)
	}
	if again := mustAssign(t, tx); again != cur {
		t.Fatalf("second AssignXid = %d", again)
	}
	for _, x := range []Xid{next, next + 1, next + 2} {
		if !holdsXidLock(e, tx, x) {
			t.Errorf("no ExclusiveLock on xid %d", x)
		}
		if !tx.IsCurrent(x) || !e.m.IsRunning(x) {
			t.Errorf("xid %d: IsCurrent %v IsRunning %v", x, tx.IsCurrent(x), e.m.IsRunning(x))
		}
		if top := e.m.TopmostXid(x); top != next {
			t.Errorf("TopmostXid(%d) = %d, want %d", x, top, next)
		}
	}
	if st := e.m.Stats(); st.XidsAssigned != 1 || st.SubXidsAssigned != 2 {
		t.Fatalf("stats %+v", st)
	}
	e.commit(t, tx)
	for _, x := range []Xid{next, next + 1, next + 2} {
		if e.m.Status(x) != Committed || e.m.IsRunning(x) {
			t.Errorf("after commit: xid %d status %v running %v", x, e.m.Status(x), e.m.IsRunning(x))
		}
	}
}

// TestSubxactOwnVisibility: the transaction sees what its open and
// released subtransactions wrote, not what a rolled-back one wrote, and a
// rolled-back delete is undone.
func TestSubxactOwnVisibility(t *testing.T) {
	e := newEnv(t, Config{})
	base := e.write(t)
	baseXid := base.Xid()
	e.commit(t, base)

	tx := e.begin(t, ReadCommitted)
	top := mustAssign(t, tx)
	tx.BeginSub()
	released := mustAssign(t, tx)
	tx.CommandCounterIncrement()
	tx.CommitSub()
	tx.BeginSub()
	aborted := mustAssign(t, tx)
	tx.BeginSub()
	abortedChild := mustAssign(t, tx) // released into aborted, rolled back with it
	tx.CommandCounterIncrement()
	tx.CommitSub()
	tx.AbortSub()
	tx.StatementSnapshot()

	tests := []struct {
		name string
		h    TupleHeader
		want bool
	}{
		{"insert by top", TupleHeader{Xmin: top}, true},
		{"insert by released subxact", TupleHeader{Xmin: released}, true},
		{"insert by rolled-back subxact", TupleHeader{Xmin: aborted}, false},
		{"insert by child of rolled-back subxact", TupleHeader{Xmin: abortedChild}, false},
		{"delete by released subxact", TupleHeader{Xmin: baseXid, Xmax: released}, false},
		{"delete by rolled-back subxact", TupleHeader{Xmin: baseXid, Xmax: aborted}, true},
		{"own insert, delete rolled back", TupleHeader{Xmin: released, Xmax: aborted}, true},
		{"own insert, released delete", TupleHeader{Xmin: top, Xmax: released}, false},
	}
	for _, tt := range tests {
		h := tt.h
		if got := tx.Visible(&h); got != tt.want {
			t.Errorf("%s: Visible = %v, want %v", tt.name, got, tt.want)
		}
	}
	for x, want := range map[Xid]XidStatus{released: InProgress, aborted: Aborted, abortedChild: Aborted} {
		if got := e.m.Status(x); got != want {
			t.Errorf("Status(%d) = %v, want %v", x, got, want)
		}
	}
	if tx.IsCurrent(aborted) || tx.IsCurrent(abortedChild) || !tx.IsCurrent(released) {
		t.Error("IsCurrent wrong after rollback")
	}
	if holdsXidLock(e, tx, aborted) || holdsXidLock(e, tx, abortedChild) || !holdsXidLock(e, tx, released) || !holdsXidLock(e, tx, top) {
		t.Error("transaction locks after rollback: the rolled-back xids' must go, the others stay")
	}
	if e.m.IsRunning(aborted) || !e.m.IsRunning(released) {
		t.Errorf("IsRunning: aborted %v, released %v", e.m.IsRunning(aborted), e.m.IsRunning(released))
	}
	var h = TupleHeader{Xmin: baseXid, Xmax: aborted}
	if res, _ := tx.SatisfiesUpdate(&h); res != TMOk {
		t.Errorf("SatisfiesUpdate of a row deleted by a rolled-back subxact = %v", res)
	}
	h = TupleHeader{Xmin: released}
	if vis, w := tx.SatisfiesDirty(&h); !vis || w != 0 {
		t.Errorf("SatisfiesDirty of own released insert = %v, %d", vis, w)
	}
}

// TestSubxactOthersSee: another session sees a subtransaction's writes as
// in progress while the top level runs — released or not — and as
// committed once it commits; a rolled-back subxid is aborted at once.
func TestSubxactOthersSee(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.begin(t, ReadCommitted)
	top := mustAssign(t, w)
	w.BeginSub()
	released := mustAssign(t, w)
	w.CommitSub()
	w.BeginSub()
	open := mustAssign(t, w)
	w.BeginSub()
	aborted := mustAssign(t, w)
	w.AbortSub()

	r := e.begin(t, ReadCommitted)
	s := r.StatementSnapshot()
	for _, x := range []Xid{top, released, open, aborted} {
		if !s.XidInProgress(x) {
			t.Errorf("XidInProgress(%d) = false while the top level runs", x)
		}
	}
	if len(s.Xip) != 1 || s.Xip[0] != top {
		t.Errorf("snapshot lists %v, want only the top-level xid %d", s.Xip, top)
	}
	for x, want := range map[Xid]bool{top: true, released: true, open: true, aborted: false} {
		if got := e.m.IsRunning(x); got != want {
			t.Errorf("IsRunning(%d) = %v, want %v", x, got, want)
		}
	}
	for _, x := range []Xid{released, open, aborted} {
		h := TupleHeader{Xmin: x}
		if r.Visible(&h) {
			t.Errorf("insert by %d visible before the top level commits", x)
		}
		h = TupleHeader{Xmin: x}
		vis, wait := r.SatisfiesDirty(&h)
		if x == aborted {
			if vis || wait != 0 {
				t.Errorf("SatisfiesDirty(rolled-back insert) = %v, %d", vis, wait)
			}
		} else if !vis || wait != x {
			t.Errorf("SatisfiesDirty(insert by %d) = %v, %d; want true, %d", x, vis, wait, x)
		}
		h = TupleHeader{Xmin: FrozenXid, Xmax: x}
		res, wx := r.SatisfiesUpdate(&h)
		if x == aborted {
			if res != TMOk {
				t.Errorf("SatisfiesUpdate(rolled-back delete) = %v", res)
			}
		} else if res != TMBeingModified || wx != x {
			t.Errorf("SatisfiesUpdate(delete by %d) = %v, %d", x, res, wx)
		}
	}

	old := *s
	e.commit(t, w)
	r.StatementSnapshot()
	for x, want := range map[Xid]bool{released: true, open: true, aborted: false} {
		h := TupleHeader{Xmin: x}
		if got := r.Visible(&h); got != want {
			t.Errorf("after commit: insert by %d visible %v, want %v", x, got, want)
		}
	}
	// A snapshot taken before the commit keeps seeing the tree running.
	if !old.XidInProgress(released) {
		t.Error("an old snapshot sees the released subxid as ended")
	}
}

func TestSubxactTopAbortAbortsTree(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.begin(t, ReadCommitted)
	top := mustAssign(t, w)
	w.BeginSub()
	sub := mustAssign(t, w)
	w.CommitSub()
	w.BeginSub()
	inner := mustAssign(t, w)
	e.abort(w)
	for _, x := range []Xid{top, sub, inner} {
		if e.m.Status(x) != Aborted || e.m.IsRunning(x) {
			t.Errorf("xid %d: status %v running %v", x, e.m.Status(x), e.m.IsRunning(x))
		}
	}
}

// TestWaitForSubxid: waiting for a released subtransaction's xid lasts
// until its top level ends (XactLockTableWait moves on to the topmost
// parent); waiting for an open one ends when it is rolled back.
func TestWaitForSubxid(t *testing.T) {
	for _, tc := range []string{"released, top commits", "released, top aborts", "rolled back"} {
		t.Run(tc, func(t *testing.T) {
			e := newEnv(t, Config{})
			w := e.begin(t, ReadCommitted)
			mustAssign(t, w)
			w.BeginSub()
			sub := mustAssign(t, w)
			if tc != "rolled back" {
				w.CommitSub()
			}
			waiter := e.begin(t, ReadCommitted)
			done := make(chan error, 1)
			go func() { done <- waiter.WaitFor(context.Background(), sub, 0) }()
			eventually(t, "waiter to block on the subxid", func() bool {
				_, n := waiter.Proc().WaitEvent()
				return n == "transactionid"
			})
			var waitedOn []uint32
			for _, st := range e.lm.Status() {
				if st.Tag.Type == locks.LockTagTransaction && !st.Granted {
					waitedOn = append(waitedOn, st.Tag.Field1)
				}
			}
			if len(waitedOn) != 1 || waitedOn[0] != uint32(sub) {
				t.Fatalf("waiting on transactionid %v, want [%d]", waitedOn, sub)
			}
			select {
			case err := <-done:
				t.Fatalf("WaitFor returned %v while the subxid runs", err)
			case <-time.After(10 * time.Millisecond):
			}
			switch tc {
			case "released, top commits":
				e.commit(t, w)
			case "released, top aborts":
				e.abort(w)
			case "rolled back":
				w.AbortSub()
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if tc == "rolled back" {
				if !e.m.IsRunning(w.Xid()) {
					t.Fatal("top level ended with the subtransaction")
				}
				e.commit(t, w)
			}
		})
	}
}

// TestWaitForOwnSubxid: waiting for one of the transaction's own xids
// returns at once.
func TestWaitForOwnSubxid(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.begin(t, ReadCommitted)
	mustAssign(t, w)
	w.BeginSub()
	sub := mustAssign(t, w)
	w.CommitSub()
	if err := w.WaitFor(context.Background(), sub, time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// TestSubtransTruncate: the subtransaction map is forgotten at checkpoint
// once nothing running can need it, and subxids then map to themselves.
func TestSubtransTruncate(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.begin(t, ReadCommitted)
	mustAssign(t, w)
	w.BeginSub()
	sub := mustAssign(t, w)
	if err := e.m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if e.m.subtrans.npages() != 1 || e.m.TopmostXid(sub) != w.Xid() {
		t.Fatal("map truncated under a running transaction")
	}
	e.commit(t, w)
	other := e.begin(t, ReadCommitted)
	e.commit(t, other)
	for range subtransXidsPerPage {
		e.m.Begin(other, other.Proc(), ReadCommitted)
		mustAssign(t, other)
		e.commit(t, other)
	}
	if err := e.m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if n := e.m.subtrans.npages(); n != 0 {
		t.Fatalf("%d pages left after checkpoint", n)
	}
	if e.m.TopmostXid(sub) != sub || e.m.IsRunning(sub) || e.m.Status(sub) != Committed {
		t.Fatal("forgotten subxid reads wrong")
	}
}

// TestSubxactRestart: a released subtransaction's xid is committed in the
// commit log after a clean restart; the map is not needed then.
func TestSubxactRestart(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, Config{DataDir: dir})
	w := e.begin(t, ReadCommitted)
	mustAssign(t, w)
	w.BeginSub()
	sub := mustAssign(t, w)
	w.CommitSub()
	w.BeginSub()
	rolled := mustAssign(t, w)
	w.AbortSub()
	e.commit(t, w)
	if err := e.m.Close(); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(Config{DataDir: dir, Locks: e.lm})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Status(sub) != Committed || m2.Status(rolled) != Aborted || m2.IsRunning(sub) {
		t.Fatalf("after restart: sub %v, rolled back %v", m2.Status(sub), m2.Status(rolled))
	}
}

func TestSubxactNoAlloc(t *testing.T) {
	e := newEnv(t, Config{})
	tx := e.begin(t, ReadCommitted)
	_ = tx.Commit()
	run := func() {
		e.m.Begin(tx, tx.Proc(), ReadCommitted)
		tx.BeginSub()
		tx.BeginSub()
		tx.AbortSub()
		tx.CommitSub()
		_ = tx.Commit()
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
