package storage

import (
	"context"
	"errors"

	"lockd/locks"
	"lockd/txn"
)

// Row locks and waits for conflicting transactions (heapam.c's
// heap_lock_tuple, heap_acquire_tuplock, heap_lock_updated_tuple and the
// waiting parts of heap_update and heap_delete).
//
// Update, Delete and LockTuple decide under the page's exclusive content
// lock whether the transactions named by the tuple's xmax conflict with
// what they want (txn.TupleLockMode: an UPDATE that changes no key column
// is FOR NO KEY UPDATE strength, a key UPDATE or DELETE FOR UPDATE).
// Compatible lockers are kept — a new multixact records them with the new
// locker or updater — so a FOR KEY SHARE lock is granted at once on a row
// that another transaction is updating without touching its key, and that
// update need not wait for key-share lockers either.
//
// When they must wait (RowWait.Policy WaitBlock) they do it as PostgreSQL
// does, without any buffer lock held:
//
//  1. take the heavyweight tuple lock (locks.TupleTag, in the strength's
//     mode: AccessShareLock, RowShareLock, ExclusiveLock or
//     AccessExclusiveLock), which queues concurrent waiters for the same
//     row in order and shows in pg_locks as locktype "tuple" — unless the
//     transaction already holds a weaker row lock on the tuple, which
//     could deadlock against a waiter queued there for it;
//  2. wait for the xmax transaction, or for each conflicting member of a
//     multixact (txn.Txn.WaitForMulti): Lock/transactionid waits on those
//     xids;
//  3. lock the page again and start over if xmax changed meanwhile;
//
// and the tuple lock is given back once the row is locked or changed (or
// the attempt failed). With WaitSkip and WaitError they do not wait: Update
// and Delete return TMBeingModified, LockTuple TMWouldBlock, naming the
// xid or multixact that is in the way; the caller skips the row (SKIP
// LOCKED) or raises 55P03 `could not obtain lock on row in relation "t"`
// (NOWAIT), which needs the relation's name storage does not know.

// WaitPolicy says what Update, Delete and LockTuple do when a conflicting
// transaction holds the row (LockWaitPolicy).
type WaitPolicy uint8

// Wait policies.
const (
	WaitBlock WaitPolicy = iota // wait (the default; DML, plain FOR UPDATE)
	WaitSkip                    // SKIP LOCKED: do not wait, the caller skips the row
	WaitError                   // NOWAIT: do not wait, the caller raises 55P03
)

// RowWait qualifies Update, Delete and LockTuple: the wait policy and the
// session's lock options (lock_timeout, deadlock_timeout) for the
// heavyweight waits. The zero value waits with the lock manager's
// deadlock_timeout and no lock timeout.
type RowWait struct {
	Policy WaitPolicy
	Lock   locks.LockOptions
	// RelOID is the relation OID tuple locks are tagged with, as
	// PostgreSQL tags them (pg_locks.relation), which stays when TRUNCATE
	// gives a relation a new file; 0 tags them with the relation's RelID.
	RelOID uint32
}

// tupleLock is the heavyweight tuple lock one Update, Delete or LockTuple
// call may take while it waits.
type tupleLock struct {
	s    *Store
	p    *locks.Proc
	tag  locks.LockTag
	mode locks.LockMode
	held bool
}

func (s *Store) newTupleLock(p *locks.Proc, rel RelID, tid TID, mode txn.TupleLockMode, wait RowWait) tupleLock {
	oid := wait.RelOID
	if oid == 0 {
		oid = uint32(rel)
	}
	return tupleLock{s: s, p: p, tag: locks.TupleTag(s.cfg.DatabaseOID, oid, tid.Block, tid.Offset), mode: mode.HWLock()}
}

// acquire takes the tuple lock unless held (heap_acquire_tuplock). With a
// non-blocking policy it reports false instead of waiting.
func (tl *tupleLock) acquire(ctx context.Context, wait RowWait) (bool, error) {
	if tl.held {
		return true, nil
	}
	opt := wait.Lock
	opt.Session, opt.Unlogged = false, false
	opt.NoWait = wait.Policy != WaitBlock
	err := tl.s.lm.Lock(ctx, tl.p, tl.tag, tl.mode, opt)
	if errors.Is(err, locks.ErrLockNotAvailable) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	tl.held = true
	return true, nil
}

func (tl *tupleLock) release() {
	if tl.held {
		tl.s.lm.Unlock(tl.p, tl.tag, tl.mode, false)
		tl.held = false
	}
}

// waitXmax waits for the transaction(s) in h's xmax that conflict with
// status, or with a non-blocking policy reports whether it would have to
// (blocked). remaining counts the multixact members still running after
// the wait (0 for a plain xmax).
func waitXmax(ctx context.Context, t *txn.Txn, h *txn.TupleHeader, status txn.MultiStatus, wait RowWait) (blocked bool, remaining int, err error) {
	opt := wait.Lock
	if h.XmaxIsMulti() {
		remaining, err = t.WaitForMulti(ctx, h, status, opt, wait.Policy != WaitBlock)
		if errors.Is(err, txn.ErrWouldBlock) {
			return true, remaining, nil
		}
		return false, remaining, err
	}
	if wait.Policy == WaitBlock {
		return false, 0, t.WaitForOptions(ctx, h.Xmax, opt)
	}
	ok, err := t.TryWaitFor(h.Xmax)
	return !ok, 0, err
}

// blockedOutcome is the outcome of a conflict that the policy forbade
// waiting for.
func (s *Store) blockedOutcome(res txn.UpdateResult, h *txn.TupleHeader, ctid TID) UpdateOutcome {
	out := UpdateOutcome{Result: res, WaitXid: h.Xmax, NextTID: ctid}
	if h.XmaxIsMulti() {
		out.WaitMulti = txn.MultiXactID(h.Xmax)
		out.WaitMembers = s.tm.MultiMembers(out.WaitMulti, nil)
	}
	return out
}

// xmaxKind says how writeXmax treats ctid and the Updated flag.
type xmaxKind uint8

const (
	xmaxLock   xmaxKind = iota // a row lock: ctid and Updated stay unless xmax is now lock-only
	xmaxDelete                 // a delete: ctid = self, not Updated
	xmaxUpdate                 // an update: ctid = the new version, Updated
)

// writeXmax stores a new xmax and its flags in tup (exclusive lock held):
// the XmaxBits of Flags and KeysUpdated of Flags2 are replaced, and cmax is
// set unless the tuple is only being locked (heap_lock_tuple keeps cmax: a
// lock does not change what the command counter says about an earlier
// update).
func writeXmax(tup []byte, h *txn.TupleHeader, xmax txn.Xid, flags, flags2 uint16, cid txn.CommandID, kind xmaxKind, self, next TID) {
	f := h.Flags&^txn.XmaxBits | flags
	f2 := h.Flags2&^txn.KeysUpdated | flags2
	switch {
	case kind == xmaxUpdate:
		// a HOT update sets HotUpdated afterwards; one left by an
		// aborted HOT update goes (HeapTupleClearHotUpdated)
		f |= txn.Updated
		f2 &^= txn.HotUpdated
		setTupleCtid(tup, next)
	case kind == xmaxDelete || flags&txn.XmaxLockOnly != 0:
		f &^= txn.Updated
		f2 &^= txn.HotUpdated
		setTupleCtid(tup, self)
	}
	ne.PutUint32(tup[thXmax:], uint32(xmax))
	if kind != xmaxLock {
		ne.PutUint32(tup[thCmax:], uint32(cid))
	}
	flagsWord(tup).Store(uint32(f) | uint32(f2)<<16)
	h.Xmax, h.Flags, h.Flags2 = xmax, f, f2
	if kind != xmaxLock {
		h.Cmax = cid
	}
}

// readTuple re-reads the tuple at off under the content lock held, running
// SatisfiesUpdate and writing hint bits back.
func readTuple(d *bufferDesc, pg page, off uint16, t *txn.Txn) (tup []byte, h txn.TupleHeader, res txn.UpdateResult, xid txn.Xid) {
	tup = pg.tuple(int(off))
	if tup == nil {
		return nil, h, txn.TMInvisible, txn.InvalidXid
	}
	readHeader(tup, &h)
	before := h.Flags
	res, xid = t.SatisfiesUpdate(&h)
	writeHints(d, tup, before, h.Flags)
	return tup, h, res, xid
}

// failedOutcome fills an outcome for TMUpdated, TMDeleted or
// TMSelfModified: the xid that changed the tuple and its ctid.
func (s *Store) failedOutcome(res txn.UpdateResult, tup []byte, h *txn.TupleHeader) UpdateOutcome {
	return UpdateOutcome{Result: res, WaitXid: s.tm.UpdateXid(h), NextTID: tupleCtid(tup)}
}

// LockTuple row-locks the tuple at tid for t's current (sub)transaction
// with strength mode (heap_lock_tuple; SELECT ... FOR UPDATE, FOR NO KEY
// UPDATE, FOR SHARE, FOR KEY SHARE, and the FOR KEY SHARE lock of a
// foreign-key check). Results:
//
//   - TMOk: the row is locked (or t already held as strong a lock). If
//     the version was updated by a transaction still running, or by one
//     that committed without changing the key, a FOR KEY SHARE lock is
//     still granted on it, and the newer versions of the row are locked
//     too (heap_lock_updated_tuple), so a later key change of any of them
//     waits for t.
//   - TMUpdated / TMDeleted: a committed transaction replaced or deleted
//     the row in a way that conflicts (NextTID is the next version; a READ
//     COMMITTED caller locks the newest version instead, if it still
//     qualifies).
//   - TMSelfModified: this command (or a later one of t) changed it.
//   - TMInvisible: not visible to t at all.
//   - TMWouldBlock: WaitSkip or WaitError and a conflicting transaction
//     holds it (WaitXid, or WaitMulti and WaitMembers).
//
// Errors: the lock manager's (40P01, 55P03 lock_timeout, cancellation).
//
// It is one long function on purpose: it follows heap_lock_tuple's
// control flow — the l3 retry loop, the per-strength checks that may skip
// the sleep, the tuple lock, the wait, the re-check — statement for
// statement, so that each wait and retry can be set beside PostgreSQL's;
// cut into helpers, the jumps back to l3 would be spread over them.
func (s *Store) LockTuple(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, tid TID, mode txn.TupleLockMode, wait RowWait) (UpdateOutcome, error) {
	r, err := s.relation(rel)
	if err != nil {
		return UpdateOutcome{}, err
	}
	if tid.Block >= r.nblocks.Load() {
		return UpdateOutcome{Result: txn.TMInvisible}, nil
	}
	// The xid is assigned only when the lock is written (as
	// heap_lock_tuple's GetCurrentTransactionId comes after its waits): a
	// locker waiting for another transaction holds no xid of its own yet.
	b, _ := s.backend(p)
	id, err := s.readBuffer(p, &b.stats, r, tid.Block)
	if err != nil {
		return UpdateOutcome{}, err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	pg := s.pool.page(id)
	tl := s.newTupleLock(p, rel, tid, mode, wait)
	defer tl.release()
	status := mode.LockStatus()
	firstTime, skipTupleLock := true, false

	d.content.Acquire(p, locks.LWExclusive)
	locked := true
	defer func() {
		if locked {
			d.content.Release(p)
		}
	}()
	unlock := func() { d.content.Release(p); locked = false }
	relock := func() { d.content.Acquire(p, locks.LWExclusive); locked = true }
l3:
	for {
		tup, h, res, _ := readTuple(d, pg, tid.Offset, t)
		switch res {
		case txn.TMInvisible:
			return UpdateOutcome{Result: txn.TMInvisible}, nil
		case txn.TMSelfModified:
			return s.failedOutcome(res, tup, &h), nil
		case txn.TMOk:
		default: // TMBeingModified, TMUpdated, TMDeleted
			before := h
			ctid := tupleCtid(tup)
			unlock()
			if firstTime {
				firstTime = false
				covered, weaker := t.OwnLock(&before, mode)
				if covered {
					return UpdateOutcome{Result: txn.TMOk}, nil
				}
				skipTupleLock = weaker
			}
			requireSleep := true
			switch mode {
			case txn.LockTupleKeyShare:
				// No wait unless somebody changes the key or locks it FOR
				// UPDATE: lockers of other strengths and a non-key update
				// (running or committed) do not conflict.
				if before.Flags2&txn.KeysUpdated == 0 {
					updated := !before.XmaxLockedOnly()
					if updated {
						out, err := s.lockUpdatedChain(ctx, p, t, rel, ctid, s.tm.UpdateXid(&before), mode, wait)
						if err != nil || out.Result != txn.TMOk {
							return out, err
						}
					}
					relock()
					var nh txn.TupleHeader
					readHeader(pg.tuple(int(tid.Offset)), &nh)
					if !t.IsOnlyLocked(&nh) && (nh.Flags2&txn.KeysUpdated != 0 || !updated) {
						continue l3
					}
					requireSleep = false
				}
			case txn.LockTupleShare:
				// No wait if it is only locked, and not exclusively.
				if before.XmaxLockedOnly() && before.Flags&txn.XmaxLockMask != txn.XmaxExclLock {
					relock()
					var nh txn.TupleHeader
					readHeader(pg.tuple(int(tid.Offset)), &nh)
					if !nh.XmaxLockedOnly() || nh.Flags&txn.XmaxLockMask == txn.XmaxExclLock {
						continue l3
					}
					requireSleep = false
				}
			case txn.LockTupleNoKeyExclusive:
				switch {
				case before.XmaxIsMulti():
					if conflict, _ := t.MultiConflicts(&before, mode); !conflict {
						relock()
						var nh txn.TupleHeader
						readHeader(pg.tuple(int(tid.Offset)), &nh)
						if txn.XmaxChanged(&nh, &before) {
							continue l3
						}
						requireSleep = false
					}
				case before.Flags&txn.XmaxLockMask == txn.XmaxKeyShrLock && before.XmaxLockedOnly():
					relock()
					var nh txn.TupleHeader
					readHeader(pg.tuple(int(tid.Offset)), &nh)
					if txn.XmaxChanged(&nh, &before) {
						continue l3
					}
					requireSleep = false
				}
			}
			// The only locker is this transaction itself.
			if requireSleep && !before.XmaxIsMulti() && t.IsCurrent(before.Xmax) {
				relock()
				var nh txn.TupleHeader
				readHeader(pg.tuple(int(tid.Offset)), &nh)
				if txn.XmaxChanged(&nh, &before) {
					continue l3
				}
				requireSleep = false
			}
			if requireSleep && (res == txn.TMUpdated || res == txn.TMDeleted) {
				relock()
				now := pg.tuple(int(tid.Offset))
				var nh txn.TupleHeader
				readHeader(now, &nh)
				return s.failedOutcome(res, now, &nh), nil
			}
			if requireSleep {
				if !skipTupleLock {
					ok, err := tl.acquire(ctx, wait)
					if err != nil {
						return UpdateOutcome{}, err
					}
					if !ok {
						return s.blockedOutcome(txn.TMWouldBlock, &before, ctid), nil
					}
				}
				blocked, _, err := waitXmax(ctx, t, &before, status, wait)
				if err != nil {
					return UpdateOutcome{}, err
				}
				if blocked {
					return s.blockedOutcome(txn.TMWouldBlock, &before, ctid), nil
				}
				if !before.XmaxLockedOnly() {
					out, err := s.lockUpdatedChain(ctx, p, t, rel, ctid, s.tm.UpdateXid(&before), mode, wait)
					if err != nil || out.Result != txn.TMOk {
						return out, err
					}
				}
				relock()
				var nh txn.TupleHeader
				readHeader(pg.tuple(int(tid.Offset)), &nh)
				if txn.XmaxChanged(&nh, &before) {
					continue l3
				}
			}
			// Re-read with the lock held: may we lock it now?
			tup, h, res, _ = readTuple(d, pg, tid.Offset, t)
			if tup == nil {
				return UpdateOutcome{Result: txn.TMInvisible}, nil
			}
			if requireSleep && !(h.Flags&txn.XmaxInvalid != 0 || h.XmaxLockedOnly() || t.IsOnlyLocked(&h)) {
				r := txn.TMDeleted
				if h.Flags&txn.Updated != 0 {
					r = txn.TMUpdated
				}
				return s.failedOutcome(r, tup, &h), nil
			}
			_ = res
		}
		// Lock it.
		if _, err := xidOf(t); err != nil {
			return UpdateOutcome{}, err
		}
		xmax, f, f2, err := t.NewXmax(&h, mode, false)
		if err != nil {
			return UpdateOutcome{}, err
		}
		writeXmax(tup, &h, xmax, f, f2, 0, xmaxLock, tid, TID{})
		d.setFlags(bmDirty)
		if s.logging() {
			s.logHeapHeader(p, xlogHeapLock, r, tid.Block, pg, int(tid.Offset), t.CurrentXid())
		}
		r.noteMulti(xmax, f)
		return UpdateOutcome{Result: txn.TMOk}, nil
	}
}

// lockUpdatedChain locks the newer versions of a row from tid on for t
// with mode (heap_lock_updated_tuple): each version whose xmin is the
// previous version's updater gets t as a locker too, waiting — always
// blocking, as PostgreSQL does — for conflicting lockers and updaters of
// it. It stops at the end of the chain, at a version made by an aborted
// transaction, or at one t already locks. A conflicting committed change
// gives TMUpdated or TMDeleted.
func (s *Store) lockUpdatedChain(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, tid TID, priorXmax txn.Xid, mode txn.TupleLockMode, wait RowWait) (UpdateOutcome, error) {
	r, err := s.relation(rel)
	if err != nil {
		return UpdateOutcome{}, err
	}
	if _, err := xidOf(t); err != nil {
		return UpdateOutcome{}, err
	}
	b, _ := s.backend(p)
	wait.Policy = WaitBlock
	want := mode.LockStatus()
	for hops := 0; hops < 1<<20; hops++ {
		if !tid.Valid() || tid.Block >= r.nblocks.Load() {
			return UpdateOutcome{Result: txn.TMOk}, nil
		}
		id, err := s.readBuffer(p, &b.stats, r, tid.Block)
		if err != nil {
			return UpdateOutcome{}, err
		}
		d := s.pool.desc(id)
		pg := s.pool.page(id)
		next, done, out, waitFor, err := func() (next TID, done bool, out UpdateOutcome, waitFor *txn.TupleHeader, err error) {
			d.content.Acquire(p, locks.LWExclusive)
			defer d.content.Release(p)
			tup := pg.tuple(int(tid.Offset))
			if tup == nil {
				return next, true, UpdateOutcome{Result: txn.TMOk}, nil, nil // vacuumed away: end of chain
			}
			var h txn.TupleHeader
			readHeader(tup, &h)
			if priorXmax.IsValid() && h.Xmin != priorXmax || s.tm.Status(h.Xmin) == txn.Aborted {
				return next, true, UpdateOutcome{Result: txn.TMOk}, nil, nil
			}
			if h.Flags&txn.XmaxInvalid == 0 && h.Xmax.IsValid() {
				mems := []txn.MultiMember{{Xid: h.Xmax, Status: plainStatusOf(&h)}}
				if h.XmaxIsMulti() {
					mems = s.tm.MultiMembers(txn.MultiXactID(h.Xmax), nil)
				}
				for _, mem := range mems {
					res, needWait := s.testLockConflict(t, mem, want)
					switch {
					case res == txn.TMSelfModified:
						// Already locked by us: go on to the next version.
						return nextVersion(tup, &h, tid, s.tm, t)
					case needWait:
						hh := txn.TupleHeader{Xmax: mem.Xid}
						return next, false, out, &hh, nil
					case res != txn.TMOk:
						if h.Flags&txn.Updated == 0 {
							res = txn.TMDeleted
						}
						return next, true, s.failedOutcome(res, tup, &h), nil, nil
					}
				}
			}
			xmax, f, f2, err := t.NewXmax(&h, mode, false)
			if err != nil {
				return next, true, out, nil, err
			}
			writeXmax(tup, &h, xmax, f, f2, 0, xmaxLock, tid, TID{})
			d.setFlags(bmDirty)
			if s.logging() {
				s.logHeapHeader(p, xlogHeapLock, r, tid.Block, pg, int(tid.Offset), t.CurrentXid())
			}
			r.noteMulti(xmax, f)
			return nextVersion(tup, &h, tid, s.tm, t)
		}()
		d.unpin()
		if err != nil {
			return UpdateOutcome{}, err
		}
		if waitFor != nil {
			if err := t.WaitForOptions(ctx, waitFor.Xmax, wait.Lock); err != nil {
				return UpdateOutcome{}, err
			}
			continue // the same version again
		}
		if done {
			return out, nil
		}
		tid, priorXmax = next, out.WaitXid
	}
	return UpdateOutcome{Result: txn.TMOk}, nil
}

// nextVersion ends one step of lockUpdatedChain: done at the end of the
// chain, else the next TID, with the updater (the next version's expected
// xmin) in out.WaitXid.
func nextVersion(tup []byte, h *txn.TupleHeader, self TID, tm *txn.Manager, t *txn.Txn) (TID, bool, UpdateOutcome, *txn.TupleHeader, error) {
	ok := UpdateOutcome{Result: txn.TMOk}
	ctid := tupleCtid(tup)
	if h.Flags&txn.XmaxInvalid != 0 || ctid == self || h.Flags&txn.Updated == 0 || t.IsOnlyLocked(h) {
		return TID{}, true, ok, nil, nil
	}
	ok.WaitXid = tm.UpdateXid(h)
	return ctid, false, ok, nil, nil
}

// testLockConflict is test_lockmode_for_conflict: may t lock a version a
// member holds with status mem.Status, wait for it, or not at all?
func (s *Store) testLockConflict(t *txn.Txn, mem txn.MultiMember, want txn.MultiStatus) (txn.UpdateResult, bool) {
	switch {
	case t.IsCurrent(mem.Xid):
		return txn.TMSelfModified, false
	case s.tm.IsRunning(mem.Xid):
		return txn.TMOk, mem.Status.Mode().Conflicts(want.Mode())
	case s.tm.Status(mem.Xid) != txn.Committed:
		return txn.TMOk, false
	case !mem.Status.IsUpdate() || !mem.Status.Mode().Conflicts(want.Mode()):
		return txn.TMOk, false
	}
	// A committed conflicting update (the caller tells TMUpdated from
	// TMDeleted by the Updated flag).
	return txn.TMUpdated, false
}

// plainStatusOf is the member status of a plain xmax.
func plainStatusOf(h *txn.TupleHeader) txn.MultiStatus { return txn.PlainXmaxStatus(h) }
