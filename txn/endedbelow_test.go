package txn

import "testing"

// IsRunning answers for xids older than the last OldestXmin without
// ProcArrayLock; a transaction running when the horizon was computed, its
// subtransactions and one that starts after it are still reported
// running, and an xid that ended before it is not.
func TestIsRunningBelowHorizon(t *testing.T) {
	e := newEnv(t, Config{})
	done := e.begin(t, ReadCommitted)
	ended := mustAssign(t, done)
	e.commit(t, done)

	old := e.begin(t, ReadCommitted)
	oldXid := mustAssign(t, old)
	old.BeginSub()
	sub := mustAssign(t, old)
	for i := 0; i < 3; i++ {
		tx := e.begin(t, ReadCommitted)
		mustAssign(t, tx)
		e.commit(t, tx)
	}
	if h := e.m.OldestXmin(); h != oldXid {
		t.Fatalf("OldestXmin %d, want the running xid %d", h, oldXid)
	}
	young := e.begin(t, ReadCommitted)
	youngXid := mustAssign(t, young)
	for _, x := range []Xid{oldXid, sub, youngXid} {
		if !e.m.IsRunning(x) {
			t.Errorf("xid %d runs, IsRunning says not", x)
		}
	}
	if e.m.IsRunning(ended) {
		t.Errorf("xid %d ended before the horizon, IsRunning says it runs", ended)
	}
	e.commit(t, old)
	e.commit(t, young)
	if h := e.m.OldestXmin(); !Precedes(youngXid, h) {
		t.Fatalf("OldestXmin %d after every commit, want past %d", h, youngXid)
	}
	for _, x := range []Xid{ended, oldXid, sub, youngXid} {
		if e.m.IsRunning(x) {
			t.Errorf("xid %d ended, IsRunning says it runs", x)
		}
	}
}
