package locks

import "sync/atomic"

// Waiting until an LWLock is free, without taking it: PostgreSQL's
// LW_WAIT_UNTIL_FREE waiters, used by the WAL.
//
//   - AcquireOrWait (LWLockAcquireOrWait, since 9.2) is group commit's
//     WALWriteLock: a backend that finds the lock held waits for the holder
//     to finish and then returns without the lock, because the holder has
//     probably flushed its commit record too; it re-checks and returns at
//     once if so.
//   - WaitForVar / UpdateVar / ReleaseClearVar (LWLockWaitForVar,
//     LWLockUpdateVar, LWLockReleaseClearVar, since 9.4) are the WAL
//     insertion locks' insertingAt: WaitXLogInsertionsToFinish waits until
//     an insertion lock is free or its holder reports progress past the
//     position the waiter needs, and the holder reports progress without
//     releasing the lock.
//
// Both queue as wait-until-free waiters: at the head of the queue, woken by
// every full release whatever the rule (see LWLock), without counting as a
// waiter that takes the lock. UpdateVar wakes only them.

// LWLockVar is a 64-bit variable protected by an LWLock (PostgreSQL's
// valptr; the WAL insertion locks' insertingAt). Its meaning is the
// caller's: the lock only stores, compares and hands it out. Only the
// lock's exclusive holder changes it, through UpdateVar or ReleaseClearVar;
// anybody may Load it. Acquiring the lock leaves it as the last holder left
// it. The zero value is 0. It must not be copied.
//
// It is an atomic, as releases after 15 made insertingAt (a
// pg_atomic_uint64), rather than a value read and written under the
// wait-list lock as in 15; the semantics are 15's. A waiter queues itself
// before it reads the variable and UpdateVar stores the variable before it
// looks at the queue, so with sequentially consistent atomics either the
// waiter sees the new value or UpdateVar sees the waiter (below).
type LWLockVar struct {
	_   noCopy
	val atomic.Uint64
}

// Load returns the variable's current value.
func (v *LWLockVar) Load() uint64 { return v.val.Load() }

// AcquireOrWait takes the lock in mode if it is free and reports true.
// Otherwise it waits until the lock has been released and returns false
// without it (PostgreSQL's LWLockAcquireOrWait): the caller re-checks
// whatever it wanted the lock for. It queues as a wait-until-free waiter,
// so any full release wakes it, and so does an UpdateVar on the same lock
// (PostgreSQL mixes the two on no lock; neither should callers here).
//
// An acquisition is counted as by Acquire, a sleep as a wait of mode
// LWWaitUntilFree; Stats.LWLockOutcomes counts the calls by outcome.
func (l *LWLock) AcquireOrWait(p *Proc, mode LWMode) (acquired bool) {
	if mode > LWShared {
		panic("locks: LWLock acquired in mode " + mode.String())
	}
	if l.attempt(mode) {
		l.acquiredOrWaited(p, mode)
		return true
	}
	return l.acquireOrWaitSlow(p, mode)
}

func (l *LWLock) acquireOrWaitSlow(p *Proc, mode LWMode) bool {
	w := waiter(p)
	extra := 0
	l.queueSelf(p, w, LWWaitUntilFree)
	if l.attempt(mode) {
		// Got it on the second try: as LWLockAcquireOrWait, take
		// ourselves off the queue and hold the lock, so that our release
		// wakes whoever our queue entry kept from being woken.
		extra = l.dequeueSelf(p, w)
		l.acquiredOrWaited(p, mode)
		putWaiter(p, w, extra)
		return true
	}
	var sl lwSleep
	sl.begin(p, l.tranche)
	w.sleep(&extra)
	if p != nil {
		st := &p.stats.lw[l.tranche][LWWaitUntilFree]
		st.wakeups.Add(1)
		sl.end(p, st)
		p.stats.lwOutcomes[l.tranche].acquireOrWaitFreed.Add(1)
	}
	putWaiter(p, w, extra)
	return false
}

func (l *LWLock) acquiredOrWaited(p *Proc, mode LWMode) {
	if p != nil {
		p.pushLW(l, mode)
		p.stats.lw[l.tranche][mode].acquisitions.Add(1)
		p.stats.lwOutcomes[l.tranche].acquireOrWaitAcquired.Add(1)
	}
}

// WaitForVar waits until the lock is not held exclusively, or its holder
// has set v to something other than oldval (PostgreSQL's LWLockWaitForVar).
// If the lock is free of exclusive holders on return (at once or after
// waiting) it returns free = true; shared holders are ignored, as in
// PostgreSQL. Otherwise it returns false and the variable's new value.
// It never takes the lock.
//
// A sleep is counted as a wait of mode LWWaitUntilFree (a wake-up after
// which the lock was still held with the old value is a futile one);
// Stats.LWLockOutcomes counts the calls by outcome.
func (l *LWLock) WaitForVar(p *Proc, v *LWLockVar, oldval uint64) (free bool, newval uint64) {
	if free, newval, wait := l.conflictsWithVar(v, oldval); !wait {
		l.waitedForVar(p, free)
		return free, newval
	}
	return l.waitForVarSlow(p, v, oldval)
}

// conflictsWithVar is LWLockConflictsWithVar: wait reports whether the
// caller must keep waiting; if not, free says why.
func (l *LWLock) conflictsWithVar(v *LWLockVar, oldval uint64) (free bool, newval uint64, wait bool) {
	if l.state.Load()&lwValExclusive == 0 {
		return true, 0, false
	}
	if nv := v.val.Load(); nv != oldval {
		return false, nv, false
	}
	return false, 0, true
}

func (l *LWLock) waitForVarSlow(p *Proc, v *LWLockVar, oldval uint64) (free bool, newval uint64) {
	w := waiter(p)
	var st *lwCounters
	if p != nil {
		st = &p.stats.lw[l.tranche][LWWaitUntilFree]
	}
	var (
		sl    lwSleep
		woken bool
		extra int
	)
	for {
		var wait bool
		if woken {
			// Woken by a release or an UpdateVar: look again.
			if free, newval, wait = l.conflictsWithVar(v, oldval); !wait {
				break
			}
			if st != nil {
				st.futileWakeups.Add(1)
			}
		}
		l.queueSelf(p, w, LWWaitUntilFree)
		// Make sure the next release wakes us even if an earlier wake-up
		// is still pending (PostgreSQL sets RELEASE_OK here).
		l.state.And(^lwFlagWakePending)
		// Queued: from here on UpdateVar and any full release will find
		// us, so a value or a release we miss now wakes us later.
		if free, newval, wait = l.conflictsWithVar(v, oldval); !wait {
			extra += l.dequeueSelf(p, w)
			break
		}
		sl.begin(p, l.tranche)
		w.sleep(&extra)
		woken = true
		if st != nil {
			st.wakeups.Add(1)
		}
	}
	if p != nil {
		sl.end(p, st)
	}
	l.waitedForVar(p, free)
	putWaiter(p, w, extra)
	return free, newval
}

func (l *LWLock) waitedForVar(p *Proc, free bool) {
	if p == nil {
		return
	}
	if free {
		p.stats.lwOutcomes[l.tranche].waitForVarFree.Add(1)
	} else {
		p.stats.lwOutcomes[l.tranche].waitForVarUpdated.Add(1)
	}
}

// UpdateVar sets v to val and wakes every WaitForVar waiter, so they see
// it, without releasing the lock (PostgreSQL's LWLockUpdateVar). The caller
// must hold the lock exclusively. Only wait-until-free waiters are woken;
// they are always at the head of the queue.
func (l *LWLock) UpdateVar(p *Proc, v *LWLockVar, val uint64) {
	if invariantsEnabled && l.state.Load()&lwValExclusive == 0 {
		panic("locks: UpdateVar without holding the LWLock exclusively")
	}
	v.val.Store(val)
	// A waiter sets HAS_WAITERS (queueing) before it reads v; we stored v
	// before reading HAS_WAITERS. If we see the flag clear, the waiter's
	// read comes after our store and it will not sleep on the old value.
	if l.state.Load()&lwFlagHasWaiters == 0 {
		return
	}
	l.lockWaitList(p)
	var first, last *lwWaiter
	for w := l.head; w != nil && w.mode == LWWaitUntilFree; {
		next := w.next
		l.unlink(w)
		w.status.Store(lwPendingWakeup)
		if last == nil {
			first = w
		} else {
			last.wakeNext = w
		}
		last = w
		w = next
	}
	var clear uint32
	if l.head == nil {
		clear = lwFlagHasWaiters
	}
	l.unlockWaitList(0, clear)
	wakeList(first)
}

// ReleaseClearVar sets v to val and releases the lock (PostgreSQL's
// LWLockReleaseClearVar). The value is stored before the release, so that
// it cannot overwrite a value the next holder has already set.
func (l *LWLock) ReleaseClearVar(p *Proc, v *LWLockVar, val uint64) {
	v.val.Store(val)
	l.Release(p)
}
