package txn

import "testing"

// A held snapshot (a portal's) keeps its view and command id while the
// READ COMMITTED transaction's later statements take newer ones, and
// keeps the backend's advertised xmin at its own until it is released.
func TestHeldSnapshot(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.write(t)
	r := e.begin(t, ReadCommitted)
	r.StatementSnapshot()
	h := r.HoldSnapshot()
	cid := r.CommandID()
	e.commit(t, w)
	r.CommandCounterIncrement()
	if r.StatementSnapshot().XidInProgress(w.Xid()) {
		t.Fatal("a new statement snapshot still counts the committed writer as running")
	}
	if got := e.m.OldestXmin(); got != w.Xid() {
		t.Errorf("OldestXmin = %d with a snapshot held, want its xmin %d", got, w.Xid())
	}
	r.SwapHeld(h)
	if !r.snap.XidInProgress(w.Xid()) || r.CommandID() != cid {
		t.Error("the held snapshot, swapped in, does not see what it saw when taken")
	}
	r.SwapHeld(h)
	if r.snap.XidInProgress(w.Xid()) || r.CommandID() != cid+1 {
		t.Error("swapping back did not restore the statement's snapshot and command id")
	}
	r.ReleaseHeld(h)
	r.StatementSnapshot()
	if got, next := e.m.OldestXmin(), e.m.NextXid(); got != next {
		t.Errorf("OldestXmin = %d after the held snapshot went, want next xid %d", got, next)
	}
	e.commit(t, r)
}
