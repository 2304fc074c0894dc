package txn

import (
	"context"
	"errors"
	"time"

	"lockd/locks"
)

// Row locks (heapam.c's tuple lock modes, compute_new_xmax_infomask,
// DoesMultiXactIdConflict, MultiXactIdWait). What a tuple's xmax says:
//
//	no lock, no update         XmaxInvalid
//	plain xid, lock only       XmaxLockOnly + XmaxKeyShrLock (FOR KEY SHARE),
//	                           XmaxShrLock (FOR SHARE), XmaxExclLock (FOR NO
//	                           KEY UPDATE), XmaxExclLock + KeysUpdated in
//	                           Flags2 (FOR UPDATE)
//	plain xid, update/delete   no lock bits; KeysUpdated for a key update or
//	                           a delete
//	multixact                  XmaxIsMulti, the lock bits of the strongest
//	                           member, XmaxLockOnly unless a member updates,
//	                           KeysUpdated if a member is FOR UPDATE or a key
//	                           update (GetMultiXactIdHintBits)
//
// The four strengths conflict as their heavyweight counterparts do
// (TupleLockMode.HWLock): FOR KEY SHARE only with FOR UPDATE (and key
// updates and deletes), FOR SHARE with FOR NO KEY UPDATE and stronger, FOR
// NO KEY UPDATE with FOR SHARE and stronger, FOR UPDATE with everything.

// TupleLockMode is a row lock strength (LockTupleMode), weakest first.
type TupleLockMode uint8

// Row lock strengths.
const (
	LockTupleKeyShare       TupleLockMode = iota // FOR KEY SHARE
	LockTupleShare                               // FOR SHARE
	LockTupleNoKeyExclusive                      // FOR NO KEY UPDATE; UPDATE of no key column
	LockTupleExclusive                           // FOR UPDATE; key UPDATE; DELETE
)

var tupleLockInfo = [...]struct {
	name       string
	hw         locks.LockMode
	lock, upd  MultiStatus
	updateable bool
}{
	{"FOR KEY SHARE", locks.AccessShareLock, MultiForKeyShare, 0, false},
	{"FOR SHARE", locks.RowShareLock, MultiForShare, 0, false},
	{"FOR NO KEY UPDATE", locks.ExclusiveLock, MultiForNoKeyUpdate, MultiNoKeyUpdate, true},
	{"FOR UPDATE", locks.AccessExclusiveLock, MultiForUpdate, MultiUpdate, true},
}

func (m TupleLockMode) String() string { return tupleLockInfo[m].name }

// HWLock is the heavyweight lock mode taken on the tuple's TupleTag while
// waiting for it (tupleLockExtraInfo.hwlock); two strengths conflict iff
// these do.
func (m TupleLockMode) HWLock() locks.LockMode { return tupleLockInfo[m].hw }

// Conflicts reports whether the strengths conflict.
func (m TupleLockMode) Conflicts(o TupleLockMode) bool { return m.HWLock().Conflicts(o.HWLock()) }

// status is the member status for locking (isUpdate false) or updating
// with this strength (get_mxact_status_for_lock).
func (m TupleLockMode) status(isUpdate bool) MultiStatus {
	if isUpdate {
		if !tupleLockInfo[m].updateable {
			panic("txn: " + m.String() + " cannot update")
		}
		return tupleLockInfo[m].upd
	}
	return tupleLockInfo[m].lock
}

// LockStatus is the member status of a row lock of this strength.
func (m TupleLockMode) LockStatus() MultiStatus { return m.status(false) }

// UpdateStatus is the member status of an update of this strength; it
// panics for FOR KEY SHARE and FOR SHARE.
func (m TupleLockMode) UpdateStatus() MultiStatus { return m.status(true) }

// PlainXmaxStatus is the member status a plain (non-multi) xmax amounts to.
func PlainXmaxStatus(h *TupleHeader) MultiStatus { return h.plainStatus() }

func statusesConflict(a, b MultiStatus) bool { return a.Mode().Conflicts(b.Mode()) }

// Header predicates over the xmax bits.

// XmaxIsMulti reports whether Xmax holds a MultiXactID.
func (h *TupleHeader) XmaxIsMulti() bool { return h.Flags&XmaxIsMulti != 0 }

// XmaxLockedOnly reports whether xmax only locks the tuple
// (HEAP_XMAX_IS_LOCKED_ONLY).
func (h *TupleHeader) XmaxLockedOnly() bool { return h.Flags&XmaxLockOnly != 0 }

func (h *TupleHeader) keyShrLocked() bool { return h.Flags&XmaxLockMask == XmaxKeyShrLock }
func (h *TupleHeader) shrLocked() bool    { return h.Flags&XmaxLockMask == XmaxShrLock }
func (h *TupleHeader) exclLocked() bool   { return h.Flags&XmaxLockMask == XmaxExclLock }
func (h *TupleHeader) keysUpdated() bool  { return h.Flags2&KeysUpdated != 0 }

// plainStatus is the member status a plain (non-multi) xmax amounts to.
// A lock-only xmax without strength bits (lockd before row-lock strengths)
// counts as FOR UPDATE.
func (h *TupleHeader) plainStatus() MultiStatus {
	if h.xmaxLockOnly() {
		switch {
		case h.keyShrLocked():
			return MultiForKeyShare
		case h.shrLocked():
			return MultiForShare
		case h.exclLocked() && !h.keysUpdated():
			return MultiForNoKeyUpdate
		}
		return MultiForUpdate
	}
	if h.keysUpdated() {
		return MultiUpdate
	}
	return MultiNoKeyUpdate
}

// XmaxChanged reports whether the xmax of a tuple re-read after a wait
// differs from what was seen before it (xmax_infomask_changed plus the raw
// xmax comparison): the caller starts over.
func XmaxChanged(now, before *TupleHeader) bool {
	const interesting = XmaxIsMulti | XmaxLockOnly | XmaxLockMask
	return now.Flags&interesting != before.Flags&interesting || now.Xmax != before.Xmax
}

// MultiMembers appends the members of multi to dst (GetMultiXactIdMembers).
func (m *Manager) MultiMembers(multi MultiXactID, dst []MultiMember) []MultiMember {
	return m.multis.get(nil, multi, dst)
}

// NextMultiXactID returns the next multixact id to be assigned.
func (m *Manager) NextMultiXactID() MultiXactID {
	m.multis.slru.Acquire(nil, locks.LWShared)
	defer m.multis.slru.Release(nil)
	return m.multis.next
}

// TruncateMultis forgets every multixact below oldest. The caller
// guarantees that no tuple's xmax names one of them any more (VACUUM has
// resolved them all).
func (m *Manager) TruncateMultis(oldest MultiXactID) { m.multis.truncate(nil, oldest) }

// MultiTruncationLimit returns the highest cutoff TruncateMultis may be
// given as far as running transactions are concerned: the next multixact
// id, or the first one a running transaction created if older. Read it
// before the relations' multixact floors.
func (m *Manager) MultiTruncationLimit() MultiXactID {
	limit := m.NextMultiXactID()
	for i := range m.procs {
		if o := MultiXactID(m.procs[i].oldestMulti.Load()); o != 0 && o < limit {
			limit = o
		}
	}
	return limit
}

// OldestMultiXactID returns the oldest multixact id still kept.
func (m *Manager) OldestMultiXactID() MultiXactID {
	m.multis.slru.Acquire(nil, locks.LWShared)
	defer m.multis.slru.Release(nil)
	return m.multis.oldest
}

// multiUpdater returns the updating member of multi (MultiXactIdGetUpdateXid),
// InvalidXid and false if none.
func (m *Manager) multiUpdater(p *locks.Proc, multi MultiXactID) (MultiMember, bool) {
	var buf [8]MultiMember
	for _, mem := range m.multis.get(p, multi, buf[:0]) {
		if mem.Status.IsUpdate() {
			return mem, true
		}
	}
	return MultiMember{}, false
}

// UpdateXid returns the xid that updated or deleted the tuple
// (HeapTupleHeaderGetUpdateXid): the updating member of a multixact xmax,
// otherwise the raw xmax (which may be a locker).
func (m *Manager) UpdateXid(h *TupleHeader) Xid {
	if h.Flags&XmaxInvalid == 0 && h.XmaxIsMulti() && !h.xmaxLockOnly() {
		u, _ := m.multiUpdater(nil, MultiXactID(h.Xmax))
		return u.Xid
	}
	return h.Xmax
}

// multiRunning reports whether any member of multi is running
// (MultiXactIdIsRunning); t's own members count as running. t may be nil.
func (m *Manager) multiRunning(p *locks.Proc, t *Txn, multi MultiXactID) bool {
	var buf [8]MultiMember
	mems := m.multis.get(p, multi, buf[:0])
	if t != nil {
		for _, mem := range mems {
			if t.isCurrent(mem.Xid) {
				return true
			}
		}
	}
	for _, mem := range mems {
		if m.isRunning(p, mem.Xid) {
			return true
		}
	}
	return false
}

// IsOnlyLocked reports whether the tuple's xmax does not stand for an
// update or delete that may still count (HeapTupleHeaderIsOnlyLocked): no
// xmax, a lock-only one, or a multixact whose updater aborted.
func (t *Txn) IsOnlyLocked(h *TupleHeader) bool {
	if h.xmaxInvalid() || h.xmaxLockOnly() {
		return true
	}
	if !h.XmaxIsMulti() {
		return false
	}
	u, ok := t.m.multiUpdater(t.p, MultiXactID(h.Xmax))
	if !ok {
		return true
	}
	if t.isCurrent(u.Xid) || t.m.isRunning(t.p, u.Xid) {
		return false
	}
	return t.m.clog.status(t.p, u.Xid) != Committed
}

// OwnLock reports what the transaction itself already holds on a tuple
// with this xmax (heap_lock_tuple's first pass over the lockers): covered
// when one of its own xids holds mode or stronger, so the lock is already
// had; weaker when it holds a weaker one, in which case the caller must not
// take the heavyweight tuple lock (it could deadlock against someone queued
// there waiting for this very transaction).
func (t *Txn) OwnLock(h *TupleHeader, mode TupleLockMode) (covered, weaker bool) {
	if h.xmaxInvalid() {
		return false, false
	}
	if h.XmaxIsMulti() {
		var buf [8]MultiMember
		for _, mem := range t.m.multis.get(t.p, MultiXactID(h.Xmax), buf[:0]) {
			if !t.isCurrent(mem.Xid) {
				continue
			}
			if mem.Status.Mode() >= mode {
				return true, false
			}
			weaker = true
		}
		return false, weaker
	}
	if !t.isCurrent(h.Xmax) {
		return false, false
	}
	switch mode {
	case LockTupleKeyShare:
		return true, false
	case LockTupleShare:
		return h.shrLocked() || h.exclLocked(), false
	case LockTupleNoKeyExclusive:
		return h.exclLocked(), false
	}
	return h.exclLocked() && h.keysUpdated(), false
}

// MultiConflicts reports whether a member of the multixact xmax of h,
// other than this transaction's own, conflicts with mode
// (DoesMultiXactIdConflict): a running locker of a conflicting strength or
// a conflicting updater that did not abort. currentIsMember reports
// whether one of the transaction's own xids is a member.
func (t *Txn) MultiConflicts(h *TupleHeader, mode TupleLockMode) (conflict, currentIsMember bool) {
	var buf [8]MultiMember
	for _, mem := range t.m.multis.get(t.p, MultiXactID(h.Xmax), buf[:0]) {
		if t.isCurrent(mem.Xid) {
			currentIsMember = true
			continue
		}
		if conflict || !mem.Status.Mode().Conflicts(mode) {
			continue
		}
		if mem.Status.IsUpdate() {
			if t.m.clog.status(t.p, mem.Xid) == Aborted {
				continue
			}
		} else if !t.m.isRunning(t.p, mem.Xid) {
			continue
		}
		conflict = true
	}
	return conflict, currentIsMember
}

// ErrWouldBlock is returned by the conditional waits (TryWaitFor,
// WaitForMulti with nowait) when waiting would be needed.
var ErrWouldBlock = errors.New("txn: would have to wait")

// TryWaitFor is ConditionalXactLockTableWait: it reports whether xid (and,
// for a released subtransaction, its top-level transaction) has ended,
// without waiting.
func (t *Txn) TryWaitFor(xid Xid) (bool, error) {
	if !xid.IsNormal() || t.isCurrent(xid) {
		return true, nil
	}
	for first := true; ; first = false {
		tag := locks.TransactionTag(uint32(xid))
		err := t.m.locks.Lock(context.Background(), t.p, tag, locks.ShareLock, locks.LockOptions{NoWait: true})
		if errors.Is(err, locks.ErrLockNotAvailable) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		t.m.locks.Unlock(t.p, tag, locks.ShareLock, false)
		if !t.m.isRunning(t.p, xid) {
			return true, nil
		}
		if !first {
			time.Sleep(xactLockRetryDelay)
		}
		xid = t.m.subtrans.topmost(xid)
	}
}

// WaitForMulti waits for every member of the multixact xmax of h whose
// status conflicts with status, one after the other with WaitForOptions,
// so each wait is a Lock/transactionid wait on that member's xid
// (Do_MultiXactIdWait). The transaction's own members are skipped. With
// nowait it waits for nobody and returns ErrWouldBlock if it would have to.
// remaining is the number of members left running afterwards (own ones
// included; members that did not conflict and have ended are not counted).
func (t *Txn) WaitForMulti(ctx context.Context, h *TupleHeader, status MultiStatus, opt locks.LockOptions, nowait bool) (remaining int, err error) {
	var buf [8]MultiMember
	mems := t.m.multis.get(t.p, MultiXactID(h.Xmax), buf[:0])
	for _, mem := range mems {
		if t.isCurrent(mem.Xid) {
			remaining++
			continue
		}
		if !statusesConflict(mem.Status, status) {
			if t.m.isRunning(t.p, mem.Xid) {
				remaining++
			}
			continue
		}
		if nowait {
			ok, err := t.TryWaitFor(mem.Xid)
			if err != nil {
				return remaining, err
			}
			if !ok {
				return remaining, ErrWouldBlock
			}
			continue
		}
		if err := t.WaitForOptions(ctx, mem.Xid, opt); err != nil {
			return remaining, err
		}
	}
	return remaining, nil
}

// NewXmax computes the xmax and xmax flags a tuple gets when the current
// (sub)transaction locks it with mode or — isUpdate — updates or deletes it
// with that strength, keeping every other member that still matters
// (compute_new_xmax_infomask): running lockers and updaters, and a
// committed updater. That may create a new multixact. h is the tuple's
// header as it is now (with hint bits); the returned flags replace XmaxBits
// of Flags and KeysUpdated of Flags2. The caller holds the buffer content
// lock exclusively, and has given the transaction an xid.
func (t *Txn) NewXmax(h *TupleHeader, mode TupleLockMode, isUpdate bool) (xmax Xid, flags, flags2 uint16, err error) {
	add := t.CurrentXid()
	if !add.IsValid() {
		panic("txn: NewXmax without an xid")
	}
	old := *h
	for {
		if old.Flags&XmaxInvalid != 0 || old.Xmax == InvalidXid {
			// No previous locker or updater.
			if isUpdate {
				if mode == LockTupleExclusive {
					flags2 = KeysUpdated
				}
				return add, 0, flags2, nil
			}
			flags = XmaxLockOnly
			switch mode {
			case LockTupleKeyShare:
				flags |= XmaxKeyShrLock
			case LockTupleShare:
				flags |= XmaxShrLock
			case LockTupleNoKeyExclusive:
				flags |= XmaxExclLock
			case LockTupleExclusive:
				flags |= XmaxExclLock
				flags2 = KeysUpdated
			}
			return add, flags, flags2, nil
		}
		status := mode.status(isUpdate)
		if old.XmaxIsMulti() {
			multi := MultiXactID(old.Xmax)
			if !t.m.multiRunning(t.p, t, multi) {
				u, ok := MultiMember{}, false
				if !old.xmaxLockOnly() {
					u, ok = t.m.multiUpdater(t.p, multi)
				}
				if !ok || t.m.clog.status(t.p, u.Xid) != Committed {
					old.Flags |= XmaxInvalid // all gone: start afresh
					continue
				}
			}
			nm, err := t.m.expandMulti(t.p, t, multi, MultiMember{add, status})
			if err != nil {
				return 0, 0, 0, err
			}
			f, f2 := t.m.multiHintBits(t.p, nm)
			return Xid(nm), f, f2, nil
		}
		oldStatus := old.plainStatus()
		switch {
		case old.Flags&XmaxCommitted != 0 && !old.xmaxLockOnly():
			// A committed update: keep its updater.
		case t.isCurrent(old.Xmax) || t.m.isRunning(t.p, old.Xmax):
			if old.Xmax == add {
				// Our own xid already locks it: keep the stronger of both.
				if m := oldStatus.Mode(); m > mode {
					mode = m
				}
				old.Flags |= XmaxInvalid
				continue
			}
		case !old.xmaxLockOnly() && t.m.clog.status(t.p, old.Xmax) == Committed:
			// A committed update: keep its updater.
		default:
			// The locker or an aborted updater ended meanwhile.
			old.Flags |= XmaxInvalid
			continue
		}
		nm, err := t.m.multis.create(t.p, []MultiMember{{old.Xmax, oldStatus}, {add, status}}, &t.slot.oldestMulti)
		if err != nil {
			return 0, 0, 0, err
		}
		t.slot.stats.multisCreated.Add(1)
		f, f2 := t.m.multiHintBits(t.p, nm)
		return Xid(nm), f, f2, nil
	}
}

// expandMulti makes a new multixact of multi's members that still matter —
// running ones and a committed updater — plus mem (MultiXactIdExpand). If
// mem's xid is already a member with that status, multi is returned.
func (m *Manager) expandMulti(p *locks.Proc, t *Txn, multi MultiXactID, mem MultiMember) (MultiXactID, error) {
	var buf [8]MultiMember
	old := m.multis.get(p, multi, buf[:0])
	for _, o := range old {
		if o == mem {
			return multi, nil
		}
	}
	keep := make([]MultiMember, 0, len(old)+1)
	for _, o := range old {
		if t.isCurrent(o.Xid) || m.isRunning(p, o.Xid) ||
			o.Status.IsUpdate() && m.clog.status(p, o.Xid) == Committed {
			keep = append(keep, o)
		}
	}
	keep = append(keep, mem)
	nm, err := m.multis.create(p, keep, &t.slot.oldestMulti)
	if err == nil {
		t.slot.stats.multisCreated.Add(1)
	}
	return nm, err
}

// multiHintBits are the xmax flags for a multixact (GetMultiXactIdHintBits).
func (m *Manager) multiHintBits(p *locks.Proc, multi MultiXactID) (flags, flags2 uint16) {
	var buf [8]MultiMember
	flags = XmaxIsMulti
	strongest := LockTupleKeyShare
	update := false
	for _, mem := range m.multis.get(p, multi, buf[:0]) {
		strongest = max(strongest, mem.Status.Mode())
		switch mem.Status {
		case MultiForUpdate:
			flags2 |= KeysUpdated
		case MultiNoKeyUpdate:
			update = true
		case MultiUpdate:
			flags2 |= KeysUpdated
			update = true
		}
	}
	switch strongest {
	case LockTupleExclusive, LockTupleNoKeyExclusive:
		flags |= XmaxExclLock
	case LockTupleShare:
		flags |= XmaxShrLock
	default:
		flags |= XmaxKeyShrLock
	}
	if !update {
		flags |= XmaxLockOnly
	}
	return flags, flags2
}

// MultiHintBits returns the xmax flags of an existing multixact, for a new
// tuple version that inherits its lockers (heap_update).
func (m *Manager) MultiHintBits(multi MultiXactID) (flags, flags2 uint16) {
	return m.multiHintBits(nil, multi)
}

// ResolveMulti is what VACUUM puts in place of a multixact xmax once no
// member runs (FreezeMultiXactId): the committed updater as a plain xmax
// (hinted committed, KeysUpdated for a key update or delete), or no xmax
// at all for lockers and an aborted or lost updater. flags replace the
// XmaxBits of Flags and flags2 the KeysUpdated bit of Flags2. ok is false
// while a member still runs: the multixact stays.
func (m *Manager) ResolveMulti(h *TupleHeader) (xmax Xid, flags, flags2 uint16, ok bool) {
	multi := MultiXactID(h.Xmax)
	if m.multiRunning(nil, nil, multi) {
		return 0, 0, 0, false
	}
	if !h.xmaxLockOnly() {
		if u, found := m.multiUpdater(nil, multi); found && m.clog.status(nil, u.Xid) == Committed {
			if u.Status == MultiUpdate {
				flags2 = KeysUpdated
			}
			return u.Xid, XmaxCommitted, flags2, true
		}
	}
	return InvalidXid, XmaxInvalid, 0, true
}
