package txn

import (
	"slices"
	"time"

	"lockd/locks"
)

// Snapshot is an MVCC snapshot (SnapshotData): every xid below Xmin had
// ended when it was taken, every xid at or above Xmax had not started, and
// Xip lists the top-level xids in between that were running, sorted
// ascending, the taking transaction's own xid excluded. Subtransaction
// xids are not listed: XidInProgress maps them to their topmost parent
// (PostgreSQL's suboverflowed snapshots).
//
// A Snapshot returned by StatementSnapshot is owned by its Txn and reused:
// under READ COMMITTED it is overwritten by the next StatementSnapshot
// call and must not be kept beyond the statement; under REPEATABLE READ it
// stays valid until the next Begin. Read-only for callers.
type Snapshot struct {
	Xmin, Xmax Xid
	Xip        []Xid

	completions uint64    // Manager.completions when taken (snapshot reuse)
	sub         *subtrans // the Manager's subtransaction map
}

// XidInProgress reports whether xid counts as running for this snapshot
// (XidInMVCCSnapshot): its effects are invisible even if it has committed
// since.
func (s *Snapshot) XidInProgress(xid Xid) bool {
	if Precedes(xid, s.Xmin) {
		return false
	}
	if FollowsOrEquals(xid, s.Xmax) {
		return true
	}
	if _, found := slices.BinarySearch(s.Xip, xid); found {
		return true
	}
	if s.sub == nil {
		return false
	}
	top := s.sub.topmost(xid)
	if top == xid || Precedes(top, s.Xmin) {
		return false
	}
	_, found := slices.BinarySearch(s.Xip, top)
	return found
}

// StatementSnapshot returns the snapshot for the statement about to run;
// call it at the start of every statement. READ COMMITTED takes a new one
// each time, REPEATABLE READ keeps the transaction's first
// (GetTransactionSnapshot). A new snapshot is built under ProcArrayLock
// shared (GetSnapshotData) and also advertises this backend's xmin for
// OldestXmin. No allocation once the Txn has been used.
func (t *Txn) StatementSnapshot() *Snapshot {
	if t.state != txnActive {
		panic("txn: StatementSnapshot outside a transaction")
	}
	if t.haveSnap && t.iso == RepeatableRead {
		return &t.snap
	}
	t.m.getSnapshot(t)
	t.haveSnap = true
	t.snapOK = true
	t.slot.stats.snapshots.Add(1)
	return &t.snap
}

// snapshot returns the current statement snapshot, taking one if the
// transaction has none yet.
func (t *Txn) snapshot() *Snapshot {
	if !t.haveSnap {
		return t.StatementSnapshot()
	}
	return &t.snap
}

// getSnapshot fills t.snap (GetSnapshotData). xmax is loaded first: every
// xid below it was published in xids before nextXid passed it (newXid), so
// the scan finds each of them that has not ended; ending needs
// ProcArrayLock exclusive, which the shared hold excludes. Xids published
// after the load are at or above xmax and skipped.
func (m *Manager) getSnapshot(t *Txn) {
	p := t.p
	s := &t.snap
	m.procArrayLock.Acquire(p, locks.LWShared)
	if t.snapOK && m.snapshotReuse.Load() && s.completions == m.completions {
		// GetSnapshotDataReuse: no xid-bearing transaction ended since s
		// was taken, so every xid running then still runs and anything
		// assigned since is at or above s.Xmax.
		t.slot.xmin.Store(uint32(t.advertisedXmin(s.Xmin)))
		m.procArrayLock.Release(p)
		t.slot.stats.snapshotsReused.Add(1)
		return
	}
	m.fillSnapshot(s, p)
	// PGPROC.xmin: never behind a concurrently computed OldestXmin, since
	// both see the same running xids under the shared lock.
	t.slot.xmin.Store(uint32(t.advertisedXmin(s.Xmin)))
	m.procArrayLock.Release(p)
}

// fillSnapshot sets s to the xids running now but p's own, reusing s.Xip's
// array. Caller holds ProcArrayLock (shared suffices).
func (m *Manager) fillSnapshot(s *Snapshot, p *locks.Proc) {
	xmax := Xid(m.nextXid.Load())
	xmin := xmax
	horizon := xmax // OldestXmin as of now, as GetSnapshotData's globalxmin
	own := int(p.Number())
	xip := s.Xip[:0]
	for i := range m.xids {
		if x := Xid(m.procs[i].xmin.Load()); x.IsNormal() && Precedes(x, horizon) {
			horizon = x
		}
		x := Xid(m.xids[i].Load())
		if x == InvalidXid || !Precedes(x, xmax) {
			continue
		}
		if Precedes(x, horizon) {
			horizon = x
		}
		if i == own {
			continue
		}
		if Precedes(x, xmin) {
			xmin = x
		}
		xip = append(xip, x)
	}
	m.noteHorizon(horizon)
	// Normal xids in use are within 2^31 of each other and below
	// xidStopLimit, so integer order is xid order.
	slices.Sort(xip)
	s.Xmin, s.Xmax, s.Xip = xmin, xmax, xip
	s.completions = m.completions
	s.sub = &m.subtrans
}

// IsRunning reports whether xid belongs to a transaction in the ProcArray
// now (TransactionIdIsInProgress), under ProcArrayLock shared. An xid not
// yet assigned is not running. A subtransaction xid runs while its
// top-level transaction does, unless it was rolled back.
func (m *Manager) IsRunning(xid Xid) bool { return m.isRunning(nil, xid) }

// isRunning is IsRunning on behalf of p (whose LWLock stats count the
// ProcArrayLock acquisition). The xid is mapped to its topmost parent
// first; a subxid found running that way is then checked against the
// commit log, because a rolled-back subtransaction is not running although
// its parent is (PostgreSQL's step 4, TransactionIdDidAbort then
// SubTransGetTopmostTransaction).
func (m *Manager) isRunning(p *locks.Proc, xid Xid) bool {
	if !xid.IsNormal() || !Precedes(xid, Xid(m.nextXid.Load())) {
		return false
	}
	if b := Xid(m.endedBelow.Load()); b.IsNormal() && Precedes(xid, b) {
		// A subtransaction's top-level xid is older than it, so ended
		// too.
		return false
	}
	top := m.subtrans.topmost(xid)
	m.procArrayLock.Acquire(p, locks.LWShared)
	// Assigned and newer than every ended top-level xid: it cannot have
	// ended.
	running := Follows(top, m.latestCompletedXid)
	for i := 0; !running && i < len(m.xids); i++ {
		running = Xid(m.xids[i].Load()) == top
	}
	m.procArrayLock.Release(p)
	if running && top != xid && m.clog.status(p, xid) == Aborted {
		return false
	}
	return running
}

// OldestXmin returns the oldest xid that a running transaction or snapshot
// may still need (GetOldestNonRemovableTransactionId): tuples deleted by
// transactions that committed before it are invisible to everyone. Under
// ProcArrayLock shared.
func (m *Manager) OldestXmin() Xid {
	m.procArrayLock.Acquire(nil, locks.LWShared)
	oldest := Xid(m.nextXid.Load())
	for i := range m.xids {
		if x := Xid(m.xids[i].Load()); x.IsNormal() && Precedes(x, oldest) {
			oldest = x
		}
		if x := Xid(m.procs[i].xmin.Load()); x.IsNormal() && Precedes(x, oldest) {
			oldest = x
		}
	}
	m.procArrayLock.Release(nil)
	// Every xid before oldest had ended: none was in the ProcArray, and
	// each was published there before nextXid passed it.
	for {
		b := m.endedBelow.Load()
		if Xid(b).IsNormal() && !Precedes(Xid(b), oldest) {
			break
		}
		if m.endedBelow.CompareAndSwap(b, uint32(oldest)) {
			break
		}
	}
	m.noteHorizon(oldest)
	return oldest
}

// noteHorizon records h, an OldestXmin just computed, for
// RecentOldestXmin. Every snapshot taken computes one on the way, so
// under load the recorded horizon is as recent as the last snapshot.
func (m *Manager) noteHorizon(h Xid) {
	now := time.Now().UnixNano()
	if Xid(m.horizon.Load()) == h && now-m.horizonAt.Load() < int64(recentHorizonAge/4) {
		return // unchanged and recent: no store to the line every backend reads
	}
	m.horizon.Store(uint32(h))
	m.horizonAt.Store(now)
}

// recentHorizonAge bounds how old a horizon RecentOldestXmin returns may
// be before it computes a new one under ProcArrayLock.
const recentHorizonAge = 20 * time.Millisecond

// RecentOldestXmin is OldestXmin as of at most 20 ms ago: the last one
// computed while it is that recent, a new one otherwise. An older horizon
// is still a safe one — the oldest xmin only moves forward, and a tuple
// dead to every transaction then stays so — only a smaller one. Reading
// it costs no ProcArrayLock, which a reader pruning pages on its way
// (storage's pruneOpt) or an index lookup removing dead entries must not
// take for every page or key (PostgreSQL's GlobalVisState serves the
// same purpose).
func (m *Manager) RecentOldestXmin() Xid {
	if time.Now().UnixNano()-m.horizonAt.Load() < int64(recentHorizonAge) {
		if h := Xid(m.horizon.Load()); h.IsNormal() {
			return h
		}
	}
	return m.OldestXmin()
}

// endXid removes t's xid from the ProcArray (ProcArrayEndTransaction): with
// ProcArrayLock if it is free at once; otherwise through a group clear when
// procarray_group_update is on, or by queueing for the lock when it is off.
func (m *Manager) endXid(t *Txn) {
	p := t.p
	if m.procArrayLock.ConditionalAcquire(p, locks.LWExclusive) {
		m.endXidLocked(int(p.Number()), t.xid)
		m.procArrayLock.Release(p)
		t.slot.stats.clearDirect.Add(1)
		return
	}
	if m.groupUpdate.Load() {
		m.groupClearXid(t)
		return
	}
	m.procArrayLock.Acquire(p, locks.LWExclusive)
	m.endXidLocked(int(p.Number()), t.xid)
	m.procArrayLock.Release(p)
	t.slot.stats.clearLocked.Add(1)
}

// endXidLocked clears proc n's xid and xmin (ProcArrayEndTransactionInternal).
// Caller holds ProcArrayLock exclusive.
func (m *Manager) endXidLocked(n int, xid Xid) {
	if invariantsEnabled && Xid(m.xids[n].Load()) != xid {
		panic("txn: ProcArray entry does not hold the ending xid")
	}
	m.xids[n].Store(0)
	m.procs[n].xmin.Store(0)
	if Follows(xid, m.latestCompletedXid) {
		m.latestCompletedXid = xid
	}
	m.completions++
}

// groupClearXid is ProcArrayGroupClearXid; see "Group xid clearing" in the
// package documentation. t's proc pushes itself on the list; the proc that
// found the list empty leads: it takes ProcArrayLock, detaches the whole
// list, clears every member's xid, releases the lock and wakes the others.
func (m *Manager) groupClearXid(t *Txn) {
	p := t.p
	me := uint32(p.Number())
	slot := t.slot
	slot.groupMemberXid = t.xid
	slot.groupMember.Store(true)
	next := m.groupFirst.Load()
	for {
		slot.groupNext.Store(next)
		if m.groupFirst.CompareAndSwap(next, me) {
			break
		}
		next = m.groupFirst.Load()
	}

	if next != invalidProcNumber {
		// Follower: the leader clears our xid and then wakes us. Exactly
		// one token arrives per membership, after groupMember was cleared.
		p.SetWaitEvent(locks.WaitEventProcArrayGroupUpdate)
		<-slot.wake
		p.ClearWaitEvent()
		if invariantsEnabled && (slot.groupMember.Load() || Xid(m.xids[me].Load()) != InvalidXid) {
			panic("txn: woken from group xid clear before being cleared")
		}
		slot.stats.groupFollowers.Add(1)
		return
	}

	// Leader. Members keep joining until we swap the list out under the
	// lock; later arrivals form the next group.
	m.procArrayLock.Acquire(p, locks.LWExclusive)
	first := m.groupFirst.Swap(invalidProcNumber)
	n := 0
	for i := first; i != invalidProcNumber; i = m.procs[i].groupNext.Load() {
		m.endXidLocked(int(i), m.procs[i].groupMemberXid)
		n++
	}
	m.procArrayLock.Release(p)

	// Wake the followers outside the lock. Read a member's next link
	// before clearing its membership: once woken it may join a new group.
	for i := first; i != invalidProcNumber; {
		q := &m.procs[i]
		i = q.groupNext.Load()
		q.groupNext.Store(invalidProcNumber)
		q.groupMember.Store(false)
		if &q.procState != slot {
			q.wake <- struct{}{}
		}
	}
	slot.stats.groupLeaders.Add(1)
	slot.stats.groupSizes[groupSizeBucket(n)].Add(1)
}
