package txn

import (
	"slices"

	"lockd/locks"
)

// UseLatestSnapshot makes the transaction look with a snapshot taken now
// (GetLatestSnapshot) until the returned function restores the one it
// had. PostgreSQL's referential-integrity queries that must see rows
// committed after a REPEATABLE READ transaction's snapshot (ri_restrict,
// the cascades: "detectNewRows") run that way. Under READ COMMITTED it is
// StatementSnapshot. The transaction's own snapshot stays the one its
// ProcArray slot advertises, so OldestXmin does not advance past what it
// may still read.
func (t *Txn) UseLatestSnapshot() (restore func()) {
	if t.iso != RepeatableRead || !t.haveSnap {
		t.StatementSnapshot()
		return func() {}
	}
	saved := t.snap
	saved.Xip = slices.Clone(t.snap.Xip)
	m, s := t.m, &t.snap
	m.procArrayLock.Acquire(t.p, locks.LWShared)
	m.fillSnapshot(s, t.p)
	m.procArrayLock.Release(t.p)
	t.slot.stats.snapshots.Add(1)
	return func() {
		xip := append(t.snap.Xip[:0], saved.Xip...)
		t.snap = saved
		t.snap.Xip = xip
	}
}
