package txn

import "testing"

// A REPEATABLE READ transaction looking with the latest snapshot sees a
// transaction that committed after its own snapshot, and goes back to its
// own afterwards; OldestXmin keeps following its own snapshot.
func TestUseLatestSnapshot(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.write(t)
	r := e.begin(t, RepeatableRead)
	s := r.StatementSnapshot()
	if !s.XidInProgress(w.Xid()) {
		t.Fatal("the writer should be running in the RR snapshot")
	}
	e.commit(t, w)
	restore := r.UseLatestSnapshot()
	if r.snap.XidInProgress(w.Xid()) {
		t.Error("the latest snapshot still counts the committed writer as running")
	}
	if got := e.m.OldestXmin(); got != w.Xid() {
		t.Errorf("OldestXmin = %d while the latest snapshot is in use, want the RR snapshot's xmin %d", got, w.Xid())
	}
	restore()
	if !r.StatementSnapshot().XidInProgress(w.Xid()) {
		t.Error("after restore the RR snapshot no longer counts the writer as running")
	}
	e.commit(t, r)
}
