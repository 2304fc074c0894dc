package txn

import (
	"lockd/locks"
	"lockd/wal"
)

// Tuple header flag bits: the hint and xmax bits of PostgreSQL's
// t_infomask (TupleHeader.Flags) and t_infomask2 (TupleHeader.Flags2) that
// lockd uses, with PostgreSQL's values. See xmax.go for what the xmax
// bits say together.
const (
	XmaxKeyShrLock uint16 = 0x0010                        // HEAP_XMAX_KEYSHR_LOCK: FOR KEY SHARE
	XmaxExclLock   uint16 = 0x0040                        // HEAP_XMAX_EXCL_LOCK: FOR NO KEY UPDATE or FOR UPDATE
	XmaxShrLock           = XmaxKeyShrLock | XmaxExclLock // HEAP_XMAX_SHR_LOCK: FOR SHARE
	XmaxLockMask          = XmaxShrLock                   // HEAP_LOCK_MASK
	XmaxLockOnly   uint16 = 0x0080                        // HEAP_XMAX_LOCK_ONLY: xmax only row-locked the tuple
	XminCommitted  uint16 = 0x0100                        // HEAP_XMIN_COMMITTED (hint)
	XminInvalid    uint16 = 0x0200                        // HEAP_XMIN_INVALID: inserter aborted (hint)
	XminFrozen            = XminCommitted | XminInvalid
	XmaxCommitted  uint16 = 0x0400 // HEAP_XMAX_COMMITTED (hint; never for a multixact)
	XmaxInvalid    uint16 = 0x0800 // HEAP_XMAX_INVALID: no deleter, or it aborted (hint)
	XmaxIsMulti    uint16 = 0x1000 // HEAP_XMAX_IS_MULTI: xmax is a MultiXactID
	// Updated says the tuple was replaced by a newer version its ctid
	// points to (as opposed to deleted). Unlike PostgreSQL's HEAP_UPDATED
	// (which marks the new version) it marks the old one; PostgreSQL tells
	// the two cases apart by comparing t_ctid with t_self.
	Updated uint16 = 0x2000

	// XmaxBits are the Flags bits that describe xmax (HEAP_XMAX_BITS).
	XmaxBits = XmaxCommitted | XmaxInvalid | XmaxIsMulti | XmaxLockMask | XmaxLockOnly
)

// Flags2 bits (t_infomask2).
const (
	// KeysUpdated (HEAP_KEYS_UPDATED): xmax deleted the tuple, updated a
	// key column, or locks it FOR UPDATE.
	KeysUpdated uint16 = 0x2000
	// HotUpdated (HEAP_HOT_UPDATED): the update that set xmax made a
	// heap-only tuple on the same page; the chain goes on at ctid.
	HotUpdated uint16 = 0x4000
	// HeapOnly (HEAP_ONLY_TUPLE): no index entry names this version; it
	// is found from the chain's root on its page.
	HeapOnly uint16 = 0x8000
)

// TupleHeader is the visibility part of a heap tuple header. Visibility
// functions may set hint bits in Flags; the caller writes them back to the
// page under the buffer content lock (losing them is harmless).
type TupleHeader struct {
	Xmin, Xmax Xid // Xmax is a MultiXactID when Flags has XmaxIsMulti
	Cmin, Cmax CommandID
	Flags      uint16 // t_infomask bits above
	Flags2     uint16 // t_infomask2 bits above
}

func (h *TupleHeader) xminCommitted() bool {
	return h.Flags&XminCommitted != 0 || !h.Xmin.IsNormal() && h.Xmin != InvalidXid
}
func (h *TupleHeader) xminInvalid() bool {
	return h.Flags&XminFrozen == XminInvalid || h.Xmin == InvalidXid
}
func (h *TupleHeader) xminFrozen() bool {
	return h.Flags&XminFrozen == XminFrozen || h.Xmin == FrozenXid || h.Xmin == BootstrapXid
}
func (h *TupleHeader) xmaxInvalid() bool  { return h.Flags&XmaxInvalid != 0 || h.Xmax == InvalidXid }
func (h *TupleHeader) xmaxLockOnly() bool { return h.Flags&XmaxLockOnly != 0 }

// UpdateResult is the outcome of SatisfiesUpdate (PostgreSQL's TM_Result).
type UpdateResult uint8

// Update results.
const (
	TMOk            UpdateResult = iota // may be updated, deleted or locked now
	TMInvisible                         // not visible to the command at all
	TMSelfModified                      // already changed by this command or a later one of this transaction
	TMBeingModified                     // an in-progress transaction changed or locked it: wait for the returned xid
	TMUpdated                           // a committed transaction replaced it (follow the ctid chain)
	TMDeleted                           // a committed transaction deleted it
	TMWouldBlock                        // the row lock could not be had without waiting (SKIP LOCKED, NOWAIT)
)

var updateResultNames = [...]string{"TM_Ok", "TM_Invisible", "TM_SelfModified", "TM_BeingModified", "TM_Updated", "TM_Deleted", "TM_WouldBlock"}

func (r UpdateResult) String() string {
	if int(r) < len(updateResultNames) {
		return updateResultNames[r]
	}
	return "TM_?"
}

// VacuumResult is the outcome of SatisfiesVacuum (HTSV_Result).
type VacuumResult uint8

// Vacuum results.
const (
	HeapTupleDead             VacuumResult = iota // dead to everyone: removable
	HeapTupleLive                                 // live, or deleted by an aborted transaction
	HeapTupleRecentlyDead                         // deleted, but some snapshot may still see it
	HeapTupleInsertInProgress                     // inserting transaction still running
	HeapTupleDeleteInProgress                     // deleting transaction still running
)

var vacuumResultNames = [...]string{"HEAPTUPLE_DEAD", "HEAPTUPLE_LIVE", "HEAPTUPLE_RECENTLY_DEAD",
	"HEAPTUPLE_INSERT_IN_PROGRESS", "HEAPTUPLE_DELETE_IN_PROGRESS"}

func (r VacuumResult) String() string {
	if int(r) < len(vacuumResultNames) {
		return vacuumResultNames[r]
	}
	return "HEAPTUPLE_?"
}

// xminResolved sets the xmin hint bit from the commit log once the inserter
// is known not to be running and reports whether it committed. An xid that
// is neither running nor resolved in the log (never assigned) reads as
// aborted without a hint.
func (m *Manager) xminResolved(p *locks.Proc, h *TupleHeader) bool {
	st, lsn := m.clog.statusLSN(p, h.Xmin)
	switch st {
	case Committed:
		if !m.asyncUnflushed(lsn) {
			h.Flags |= XminCommitted
		}
		return true
	case Aborted:
		h.Flags |= XminInvalid
	}
	return false
}

// xmaxResolved is xminResolved for a plain (non-multi) xmax; lockOnly
// committed lockers leave nothing of interest and are hinted invalid.
func (m *Manager) xmaxResolved(p *locks.Proc, h *TupleHeader) bool {
	st, lsn := m.clog.statusLSN(p, h.Xmax)
	switch st {
	case Committed:
		if h.xmaxLockOnly() {
			h.Flags |= XmaxInvalid
			return false
		}
		if !m.asyncUnflushed(lsn) {
			h.Flags |= XmaxCommitted
		}
		return true
	case Aborted:
		h.Flags |= XmaxInvalid
	}
	return false
}

// asyncUnflushed reports whether an asynchronous commit record at lsn is
// not durable yet, so its "committed" hint must wait (SetHintBits'
// XLogNeedsFlush check).
func (m *Manager) asyncUnflushed(lsn wal.LSN) bool {
	return lsn != 0 && m.wal != nil && m.wal.NeedsFlush(lsn)
}

// Visible reports whether the tuple is visible to the current statement
// (HeapTupleSatisfiesMVCC): its inserter committed before the statement's
// snapshot (or is this transaction, at an earlier command) and its deleter,
// if any, did not. For a multixact xmax the updating member decides;
// lockers do not matter. It takes a snapshot if the statement has none
// yet. It may set hint bits in h.
func (t *Txn) Visible(h *TupleHeader) bool {
	s := t.snapshot()
	p := t.p
	if !h.xminCommitted() {
		switch {
		case h.xminInvalid():
			return false
		case t.isCurrent(h.Xmin):
			if h.Cmin >= t.cid {
				return false // inserted after scan started
			}
			if h.xmaxInvalid() || h.xmaxLockOnly() {
				return true
			}
			if h.XmaxIsMulti() {
				u, _ := t.m.multiUpdater(p, MultiXactID(h.Xmax))
				if !t.isCurrent(u.Xid) {
					return true // the updating subtransaction aborted
				}
				return h.Cmax >= t.cid
			}
			if !t.isCurrent(h.Xmax) {
				// Nobody else can delete our uncommitted insert: the
				// deleting subtransaction must have aborted.
				h.Flags |= XmaxInvalid
				return true
			}
			return h.Cmax >= t.cid // deleted after scan started
		case s.XidInProgress(h.Xmin):
			return false
		case !t.m.xminResolved(p, h):
			return false // aborted or crashed
		}
	} else if !h.xminFrozen() && s.XidInProgress(h.Xmin) {
		return false // committed, but not for this snapshot
	}

	// The inserter committed, for this snapshot.
	if h.xmaxInvalid() || h.xmaxLockOnly() {
		return true
	}
	if h.XmaxIsMulti() {
		u, ok := t.m.multiUpdater(p, MultiXactID(h.Xmax))
		switch {
		case !ok:
			return true // updater lost in a crash: aborted
		case t.isCurrent(u.Xid):
			return h.Cmax >= t.cid
		case s.XidInProgress(u.Xid):
			return true
		}
		return t.m.clog.status(p, u.Xid) != Committed
	}
	if h.Flags&XmaxCommitted == 0 {
		switch {
		case t.isCurrent(h.Xmax):
			return h.Cmax >= t.cid
		case s.XidInProgress(h.Xmax):
			return true
		case !t.m.xmaxResolved(p, h):
			return true // deleter aborted or crashed
		}
	} else if s.XidInProgress(h.Xmax) {
		return true
	}
	return false
}

// SatisfiesUpdate reports whether the transaction may update, delete or
// lock the tuple now (HeapTupleSatisfiesUpdate), judged by the ProcArray
// and commit log rather than the snapshot, with the current command id.
// On TMBeingModified the returned xid is the raw xmax — a MultiXactID if
// h.XmaxIsMulti() — whose lockers or updater run (this transaction's own
// row locks included, as in PostgreSQL: the caller decides whether they
// conflict); on TMUpdated, TMDeleted and TMSelfModified it is the xid that
// updated or deleted the tuple.
//
// A READ COMMITTED caller that gets TMUpdated follows the chain to the
// newest version and re-checks it; a REPEATABLE READ caller raises 40001
// "could not serialize access due to concurrent update" (also for
// TMDeleted: "concurrent delete").
func (t *Txn) SatisfiesUpdate(h *TupleHeader) (UpdateResult, Xid) {
	m, p := t.m, t.p
	if !h.xminCommitted() {
		switch {
		case h.xminInvalid():
			return TMInvisible, InvalidXid
		case t.isCurrent(h.Xmin):
			if h.Cmin >= t.cid {
				return TMInvisible, InvalidXid // inserted after scan started
			}
			if h.xmaxInvalid() {
				return TMOk, InvalidXid
			}
			if h.xmaxLockOnly() {
				// Others may lock our own new version: it inherits the
				// key-share lockers of the version we updated.
				if h.XmaxIsMulti() {
					if m.multiRunning(p, t, MultiXactID(h.Xmax)) {
						return TMBeingModified, h.Xmax
					}
					return TMOk, InvalidXid
				}
				if t.isCurrent(h.Xmax) || m.isRunning(p, h.Xmax) {
					return TMBeingModified, h.Xmax
				}
				return TMOk, InvalidXid
			}
			if h.XmaxIsMulti() {
				u, _ := m.multiUpdater(p, MultiXactID(h.Xmax))
				if !t.isCurrent(u.Xid) { // the updating subtransaction aborted
					if m.multiRunning(p, t, MultiXactID(h.Xmax)) {
						return TMBeingModified, h.Xmax
					}
					return TMOk, InvalidXid
				}
				if h.Cmax >= t.cid {
					return TMSelfModified, u.Xid
				}
				return TMInvisible, InvalidXid
			}
			if !t.isCurrent(h.Xmax) {
				h.Flags |= XmaxInvalid // the deleting subtransaction aborted
				return TMOk, InvalidXid
			}
			if h.Cmax >= t.cid {
				return TMSelfModified, h.Xmax // updated after scan started
			}
			return TMInvisible, InvalidXid // updated before scan started
		case m.isRunning(p, h.Xmin):
			return TMInvisible, InvalidXid
		case !m.xminResolved(p, h):
			return TMInvisible, InvalidXid
		}
	}

	// The inserter committed.
	if h.xmaxInvalid() {
		return TMOk, InvalidXid
	}
	if h.Flags&XmaxCommitted != 0 {
		if h.xmaxLockOnly() {
			return TMOk, InvalidXid
		}
		return replaced(h), h.Xmax
	}
	if h.XmaxIsMulti() {
		multi := MultiXactID(h.Xmax)
		if h.xmaxLockOnly() {
			if m.multiRunning(p, t, multi) {
				return TMBeingModified, h.Xmax
			}
			h.Flags |= XmaxInvalid
			return TMOk, InvalidXid
		}
		u, ok := m.multiUpdater(p, multi)
		if ok && t.isCurrent(u.Xid) {
			if h.Cmax >= t.cid {
				return TMSelfModified, u.Xid
			}
			return TMInvisible, InvalidXid
		}
		if m.multiRunning(p, t, multi) {
			return TMBeingModified, h.Xmax
		}
		if ok && m.clog.status(p, u.Xid) == Committed {
			return replaced(h), u.Xid
		}
		// The updater aborted and no member runs.
		h.Flags |= XmaxInvalid
		return TMOk, InvalidXid
	}
	if t.isCurrent(h.Xmax) {
		if h.xmaxLockOnly() {
			return TMBeingModified, h.Xmax // our own row lock
		}
		if h.Cmax >= t.cid {
			return TMSelfModified, h.Xmax
		}
		return TMInvisible, InvalidXid
	}
	if m.isRunning(p, h.Xmax) {
		return TMBeingModified, h.Xmax
	}
	if !m.xmaxResolved(p, h) {
		return TMOk, InvalidXid // deleter aborted, or only locked
	}
	return replaced(h), h.Xmax
}

func replaced(h *TupleHeader) UpdateResult {
	if h.Flags&Updated != 0 {
		return TMUpdated
	}
	return TMDeleted
}

// SatisfiesDirty reports whether the tuple is visible counting the effects
// of transactions still in progress (HeapTupleSatisfiesDirty), for unique
// checks. If it is visible only because another transaction is inserting
// it, or is being deleted by one, waitXid is that transaction: the caller
// waits for it (WaitFor) and checks again. Row locks do not matter.
func (t *Txn) SatisfiesDirty(h *TupleHeader) (visible bool, waitXid Xid) {
	m, p := t.m, t.p
	if !h.xminCommitted() {
		switch {
		case h.xminInvalid():
			return false, InvalidXid
		case t.isCurrent(h.Xmin):
			if h.xmaxInvalid() || h.xmaxLockOnly() {
				return true, InvalidXid
			}
			if h.XmaxIsMulti() {
				u, _ := m.multiUpdater(p, MultiXactID(h.Xmax))
				return !t.isCurrent(u.Xid), InvalidXid
			}
			if !t.isCurrent(h.Xmax) {
				h.Flags |= XmaxInvalid
				return true, InvalidXid
			}
			return false, InvalidXid // deleted by ourselves
		case m.isRunning(p, h.Xmin):
			return true, h.Xmin // being inserted by another
		case !m.xminResolved(p, h):
			return false, InvalidXid
		}
	}

	// The inserter committed.
	if h.xmaxInvalid() {
		return true, InvalidXid
	}
	if h.Flags&XmaxCommitted != 0 {
		return h.xmaxLockOnly(), InvalidXid
	}
	if h.XmaxIsMulti() {
		if h.xmaxLockOnly() {
			return true, InvalidXid
		}
		u, ok := m.multiUpdater(p, MultiXactID(h.Xmax))
		switch {
		case !ok:
			return true, InvalidXid
		case t.isCurrent(u.Xid):
			return false, InvalidXid
		case m.isRunning(p, u.Xid):
			return true, u.Xid // being deleted by another
		}
		return m.clog.status(p, u.Xid) != Committed, InvalidXid
	}
	if t.isCurrent(h.Xmax) {
		return h.xmaxLockOnly(), InvalidXid
	}
	if m.isRunning(p, h.Xmax) {
		if h.xmaxLockOnly() {
			return true, InvalidXid
		}
		return true, h.Xmax // being deleted by another
	}
	return !m.xmaxResolved(p, h), InvalidXid
}

// runningAfter is isRunning for an xid VACUUM meets: one older than
// oldestXmin has ended (every running xid is at or after it), which needs
// no look at the ProcArray — PostgreSQL's RecentXmin test at the top of
// TransactionIdIsInProgress. VACUUM on a table loaded in bulk asks it of
// every tuple.
func (m *Manager) runningAfter(xid, oldestXmin Xid) bool {
	if xid.IsNormal() && oldestXmin.IsNormal() && Precedes(xid, oldestXmin) {
		return false
	}
	return m.isRunning(nil, xid)
}

// SatisfiesVacuum classifies a tuple for VACUUM
// (HeapTupleSatisfiesVacuum): a tuple whose deleter committed before
// oldestXmin (see OldestXmin) is dead to everyone. VACUUM runs without an
// xid, so no tuple counts as its own. A multixact xmax is judged by its
// updater; a lock-only one whose members all ended is hinted invalid. It
// may set hint bits in h.
func (m *Manager) SatisfiesVacuum(h *TupleHeader, oldestXmin Xid) VacuumResult {
	if !h.xminCommitted() {
		switch {
		case h.xminInvalid():
			return HeapTupleDead
		case m.runningAfter(h.Xmin, oldestXmin):
			// Even if the inserter also deleted it: PostgreSQL would
			// rather have callers wait for xmin than xmax.
			return HeapTupleInsertInProgress
		case !m.xminResolved(nil, h):
			return HeapTupleDead // inserter aborted or crashed
		}
	}

	if h.xmaxInvalid() {
		return HeapTupleLive
	}
	if h.xmaxLockOnly() {
		if h.Flags&XmaxCommitted == 0 {
			if h.XmaxIsMulti() {
				if !m.multiRunning(nil, nil, MultiXactID(h.Xmax)) {
					h.Flags |= XmaxInvalid // lockers gone
				}
			} else if !m.runningAfter(h.Xmax, oldestXmin) {
				h.Flags |= XmaxInvalid // locker gone
			}
		}
		return HeapTupleLive
	}
	xmax := h.Xmax
	if h.XmaxIsMulti() {
		u, ok := m.multiUpdater(nil, MultiXactID(h.Xmax))
		switch {
		case ok && m.isRunning(nil, u.Xid):
			return HeapTupleDeleteInProgress
		case ok && m.clog.status(nil, u.Xid) == Committed:
			xmax = u.Xid
		default:
			if !m.multiRunning(nil, nil, MultiXactID(h.Xmax)) {
				h.Flags |= XmaxInvalid // updater aborted, lockers gone
			}
			return HeapTupleLive
		}
	} else if h.Flags&XmaxCommitted == 0 {
		switch {
		case m.runningAfter(h.Xmax, oldestXmin):
			return HeapTupleDeleteInProgress
		case !m.xmaxResolved(nil, h):
			return HeapTupleLive // deleter aborted or crashed
		}
	}
	if !Precedes(xmax, oldestXmin) {
		return HeapTupleRecentlyDead
	}
	return HeapTupleDead
}
