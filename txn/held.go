package txn

import "slices"

// HeldSnapshot is a statement's snapshot and command id kept beyond the
// statement, for a portal that runs in pieces (a cursor fetched from, a
// protocol portal suspended at its row limit): PostgreSQL registers the
// portal's snapshot (RegisterSnapshot), so every fetch sees what the
// portal's query saw when it started, whatever later statements of the
// transaction see or write. While a snapshot is held, the backend's
// advertised xmin does not move past its xmin, so VACUUM keeps the rows
// it may still read.
//
// A HeldSnapshot belongs to its Txn and lasts until ReleaseHeld or the
// end of the transaction. Not safe for concurrent use.
type HeldSnapshot struct {
	snap Snapshot
	cid  CommandID
}

// HoldSnapshot keeps the current statement snapshot (taking one if the
// transaction has none yet) and command id. It allocates a copy of the
// snapshot's running xids.
func (t *Txn) HoldSnapshot() *HeldSnapshot {
	s := t.snapshot()
	h := &HeldSnapshot{snap: *s, cid: t.cid}
	h.snap.Xip = slices.Clone(s.Xip)
	t.held = append(t.held, h)
	t.pinXmin()
	return h
}

// SwapHeld makes h the transaction's snapshot and command id, keeping the
// ones it replaces in h: call it before running the portal's next piece
// and again after, to restore them.
func (t *Txn) SwapHeld(h *HeldSnapshot) {
	t.snap, h.snap = h.snap, t.snap
	t.cid, h.cid = h.cid, t.cid
}

// ReleaseHeld lets h go (UnregisterSnapshot).
func (t *Txn) ReleaseHeld(h *HeldSnapshot) {
	if i := slices.Index(t.held, h); i >= 0 {
		t.held = slices.Delete(t.held, i, i+1)
		t.pinXmin()
	}
}

// pinXmin recomputes the oldest xmin of the held snapshots.
func (t *Txn) pinXmin() {
	t.heldXmin = InvalidXid
	for _, h := range t.held {
		if t.heldXmin == InvalidXid || Precedes(h.snap.Xmin, t.heldXmin) {
			t.heldXmin = h.snap.Xmin
		}
	}
}

// advertisedXmin is the xmin the backend publishes for a new snapshot
// whose xmin is x: x, or the oldest held snapshot's if that is older.
func (t *Txn) advertisedXmin(x Xid) Xid {
	if t.heldXmin != InvalidXid && Precedes(t.heldXmin, x) {
		return t.heldXmin
	}
	return x
}
