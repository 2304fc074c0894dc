package locks

import (
	"sync/atomic"
	"unsafe"
)

// The shared lock table: PostgreSQL's LOCK and PROCLOCK hash tables, split
// into partitions by the lock tag's hash. Everything reachable from a
// partition (its lock objects, their holder lists and wait queues, the wait
// fields of the procs queued there) is guarded by that partition's
// LockManager LWLock, held exclusively to modify.

// lockObj is PostgreSQL's LOCK: one per locked object in the shared table.
type lockObj struct {
	tag        LockTag
	hash       uint32
	grantMask  lockMask // modes currently granted to somebody
	waitMask   lockMask // modes somebody waits for
	requested  [NumLockModes]int32
	granted    [NumLockModes]int32
	nRequested int32 // granted + waiting requests
	nGranted   int32
	procLocks  *procLock // holders and waiters, linked by lockNext/lockPrev
	waitHead   *Proc     // wait queue, linked by Proc.waitNext/waitPrev
	waitTail   *Proc
	nWaiting   int32
	nextFree   *lockObj
}

// procLock is PostgreSQL's PROCLOCK: what one backend holds (holdMask) on
// one lock object; it exists while the backend holds or awaits the lock.
type procLock struct {
	lock               *lockObj
	proc               *Proc
	holdMask           lockMask
	lockNext, lockPrev *procLock
	nextFree           *procLock
}

type procLockKey struct {
	lock *lockObj
	proc *Proc
}

type partitionData struct {
	lock          LWLock // tranche LockManager
	locks         map[LockTag]*lockObj
	procLocks     map[procLockKey]*procLock
	freeLocks     *lockObj
	freeProcLocks *procLock
	// Remaining shared-table entries this partition may allocate. Quotas
	// start evenly split; a partition that runs out borrows from others
	// (like PostgreSQL's per-partition hash freelists), so the table as a
	// whole holds exactly max_locks_per_transaction × max_connections
	// lock objects (and twice as many proclocks).
	lockQuota     atomic.Int64
	procLockQuota atomic.Int64
}

const cacheLine = 128

// partition pads partitionData to whole cache lines so that neighbouring
// partition locks do not share a line.
type partition struct {
	partitionData
	_ [(cacheLine - unsafe.Sizeof(partitionData{})%cacheLine) % cacheLine]byte
}

func takeQuota(q *atomic.Int64) bool {
	for {
		v := q.Load()
		if v <= 0 {
			return false
		}
		if q.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

func (m *Manager) takeLockQuota(part *partition) bool {
	if takeQuota(&part.lockQuota) {
		return true
	}
	for i := range m.parts {
		if takeQuota(&m.parts[i].lockQuota) {
			return true
		}
	}
	return false
}

func (m *Manager) takeProcLockQuota(part *partition) bool {
	if takeQuota(&part.procLockQuota) {
		return true
	}
	for i := range m.parts {
		if takeQuota(&m.parts[i].procLockQuota) {
			return true
		}
	}
	return false
}

// setupLock finds or creates the lock object for tag and q's proclock on
// it, and counts a request for mode (SetupLockInTable). It returns nils
// when the shared table is full. Caller holds part.lock exclusively.
func (m *Manager) setupLock(part *partition, q *Proc, tag LockTag, hash uint32, mode LockMode) (*lockObj, *procLock) {
	lock := part.locks[tag]
	created := false
	if lock == nil {
		if !m.takeLockQuota(part) {
			return nil, nil
		}
		lock = part.freeLocks
		if lock != nil {
			part.freeLocks = lock.nextFree
			lock.nextFree = nil
		} else {
			lock = new(lockObj)
		}
		lock.tag, lock.hash = tag, hash
		part.locks[tag] = lock
		created = true
	}
	key := procLockKey{lock, q}
	pl := part.procLocks[key]
	if pl == nil {
		if !m.takeProcLockQuota(part) {
			if created {
				m.freeLock(part, lock)
			}
			return nil, nil
		}
		pl = part.freeProcLocks
		if pl != nil {
			part.freeProcLocks = pl.nextFree
			pl.nextFree = nil
		} else {
			pl = new(procLock)
		}
		pl.lock, pl.proc = lock, q
		pl.lockNext = lock.procLocks
		if lock.procLocks != nil {
			lock.procLocks.lockPrev = pl
		}
		lock.procLocks = pl
		part.procLocks[key] = pl
	}
	lock.requested[mode]++
	lock.nRequested++
	return lock, pl
}

func (m *Manager) freeLock(part *partition, lock *lockObj) {
	delete(part.locks, lock.tag)
	*lock = lockObj{nextFree: part.freeLocks}
	part.freeLocks = lock
	part.lockQuota.Add(1)
}

func (m *Manager) freeProcLock(part *partition, pl *procLock) {
	lock := pl.lock
	if pl.lockPrev != nil {
		pl.lockPrev.lockNext = pl.lockNext
	} else {
		lock.procLocks = pl.lockNext
	}
	if pl.lockNext != nil {
		pl.lockNext.lockPrev = pl.lockPrev
	}
	delete(part.procLocks, procLockKey{lock, pl.proc})
	*pl = procLock{nextFree: part.freeProcLocks}
	part.freeProcLocks = pl
	part.procLockQuota.Add(1)
}

// checkConflicts reports whether mode conflicts with locks granted to other
// backends (LockCheckConflicts). A backend never conflicts with itself.
func (lock *lockObj) checkConflicts(mode LockMode, pl *procLock) bool {
	mask := conflictTab[mode]
	if mask&lock.grantMask == 0 {
		return false
	}
	for m := AccessShareLock; m <= MaxLockMode; m++ {
		if mask&modeBit(m) == 0 {
			continue
		}
		n := lock.granted[m]
		if pl.holdMask&modeBit(m) != 0 {
			n--
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// grant records a granted request of mode (GrantLock).
func (lock *lockObj) grant(pl *procLock, mode LockMode) {
	lock.granted[mode]++
	lock.nGranted++
	lock.grantMask |= modeBit(mode)
	if lock.granted[mode] == lock.requested[mode] {
		lock.waitMask &^= modeBit(mode)
	}
	pl.holdMask |= modeBit(mode)
	if invariantsEnabled {
		lock.check()
	}
}

// ungrant drops a granted lock of mode and its request (UnGrantLock). It
// reports whether waiters may now be wakeable.
func (lock *lockObj) ungrant(pl *procLock, mode LockMode) bool {
	lock.requested[mode]--
	lock.nRequested--
	lock.granted[mode]--
	lock.nGranted--
	if lock.granted[mode] == 0 {
		lock.grantMask &^= modeBit(mode)
	}
	pl.holdMask &^= modeBit(mode)
	if invariantsEnabled {
		lock.check()
	}
	return conflictTab[mode]&lock.waitMask != 0
}

// cleanUpLock frees pl if it holds nothing and the lock object if nobody
// requests it, otherwise wakes grantable waiters when asked (CleanUpLock).
func (m *Manager) cleanUpLock(part *partition, lock *lockObj, pl *procLock, wakeup bool) {
	if pl.holdMask == 0 {
		m.freeProcLock(part, pl)
	}
	if lock.nRequested == 0 {
		if invariantsEnabled && (lock.procLocks != nil || lock.waitHead != nil) {
			panic("locks: freeing a lock object still in use")
		}
		m.freeLock(part, lock)
	} else if wakeup {
		m.wakeWaiters(lock)
	}
}

func (lock *lockObj) pushWaiter(p, before *Proc) {
	if before == nil {
		p.waitNext, p.waitPrev = nil, lock.waitTail
		if lock.waitTail != nil {
			lock.waitTail.waitNext = p
		} else {
			lock.waitHead = p
		}
		lock.waitTail = p
	} else {
		p.waitNext, p.waitPrev = before, before.waitPrev
		if before.waitPrev != nil {
			before.waitPrev.waitNext = p
		} else {
			lock.waitHead = p
		}
		before.waitPrev = p
	}
	lock.nWaiting++
}

func (lock *lockObj) unlinkWaiter(p *Proc) {
	if p.waitPrev != nil {
		p.waitPrev.waitNext = p.waitNext
	} else {
		lock.waitHead = p.waitNext
	}
	if p.waitNext != nil {
		p.waitNext.waitPrev = p.waitPrev
	} else {
		lock.waitTail = p.waitPrev
	}
	p.waitNext, p.waitPrev = nil, nil
	lock.nWaiting--
}

// wakeWaiters grants every waiter whose request conflicts neither with
// granted modes nor with an earlier waiter that stays queued, in queue order
// (ProcLockWakeup). Granted waiters are woken already holding the lock.
func (m *Manager) wakeWaiters(lock *lockObj) {
	var ahead lockMask
	for w := lock.waitHead; w != nil; {
		next := w.waitNext
		mode := w.waitMode
		if conflictTab[mode]&ahead == 0 && !lock.checkConflicts(mode, w.waitProcLock) {
			lock.unlinkWaiter(w)
			lock.grant(w.waitProcLock, mode)
			w.wakeGranted()
		} else {
			ahead |= modeBit(mode)
		}
		w = next
	}
}

// removeFromWaitQueue takes p out of the queue it waits in, giving up its
// request (RemoveFromWaitQueue); used on timeout, cancel and deadlock.
// Caller holds the partition lock of p.waitLock.
func (m *Manager) removeFromWaitQueue(part *partition, p *Proc) {
	lock, pl, mode := p.waitLock, p.waitProcLock, p.waitMode
	lock.unlinkWaiter(p)
	lock.requested[mode]--
	lock.nRequested--
	if lock.granted[mode] == lock.requested[mode] {
		lock.waitMask &^= modeBit(mode)
	}
	p.waitLock, p.waitProcLock = nil, nil
	p.waitStatus.Store(waitFailed)
	if invariantsEnabled {
		lock.check()
	}
	m.cleanUpLock(part, lock, pl, true)
}

// check verifies the lock object's counters against its holder list and
// wait queue (invariants builds only).
func (lock *lockObj) check() {
	var held [NumLockModes]int32
	var waiting [NumLockModes]int32
	var grantMask, waitMask lockMask
	var nGranted, nWaiting int32
	for pl := lock.procLocks; pl != nil; pl = pl.lockNext {
		for m := AccessShareLock; m <= MaxLockMode; m++ {
			if pl.holdMask&modeBit(m) != 0 {
				held[m]++
			}
		}
	}
	for w := lock.waitHead; w != nil; w = w.waitNext {
		waiting[w.waitMode]++
		waitMask |= modeBit(w.waitMode)
		nWaiting++
	}
	for m := AccessShareLock; m <= MaxLockMode; m++ {
		if held[m] != lock.granted[m] {
			panic("locks: granted count does not match holders")
		}
		if lock.granted[m] < 0 || lock.requested[m] < lock.granted[m] {
			panic("locks: requested < granted")
		}
		if lock.granted[m] > 0 {
			grantMask |= modeBit(m)
		}
		nGranted += lock.granted[m]
	}
	if grantMask != lock.grantMask || nGranted != lock.nGranted || nWaiting != lock.nWaiting {
		panic("locks: lock masks or counts inconsistent")
	}
	// waitMask may transiently keep a bit for a waiter that is being
	// granted, but every real waiter's mode must be in it.
	if waitMask&^lock.waitMask != 0 {
		panic("locks: wait mask misses a waiter")
	}
}
