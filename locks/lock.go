package locks

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LockOptions qualify one Lock call.
type LockOptions struct {
	// NoWait makes Lock return ErrLockNotAvailable instead of waiting.
	NoWait bool
	// Session takes a session-level lock, which survives transaction end
	// (advisory session locks); otherwise the lock is transaction-level and
	// ReleaseTransactionLocks drops it.
	Session bool
	// LockTimeout is lock_timeout for this call (0 = none): a wait longer
	// than this fails with 55P03 "canceling statement due to lock timeout".
	LockTimeout time.Duration
	// DeadlockTimeout is the waiting session's deadlock_timeout (0 = the
	// manager's, see SetDeadlockTimeout): how long a wait lasts before the
	// deadlock detector runs.
	DeadlockTimeout time.Duration
	// LogLockWaits is the waiting session's log_lock_waits when
	// LogLockWaitsSet (else the manager's, see SetLogLockWaits): whether
	// waits longer than the deadlock timeout are logged (and counted in
	// Stats' LoggedWaits).
	LogLockWaits, LogLockWaitsSet bool
	// Unlogged keeps a transaction-level count out of the subtransaction
	// acquisition log (see Mark), so ReleaseSince does not release it: it
	// is held until Unlock or the end of the transaction. txn takes the
	// locks on its own xids this way.
	Unlogged bool
}

// Lock acquires a heavyweight lock on tag in mode for backend p
// (LockAcquireExtended). It returns nil once the lock is granted; a lock
// already held in that mode only has its count raised.
//
// A request that must wait parks on p's wait channel until it is granted,
// ctx is done (the result is context.Cause(ctx)), opt.LockTimeout expires
// (*Error 55P03) or, after deadlock_timeout, the deadlock detector finds p
// on a cycle (*Error 40P01). A grant that races with a timeout or
// cancellation wins: Lock then returns nil. A full shared table gives
// *Error 53200.
func (m *Manager) Lock(ctx context.Context, p *Proc, tag LockTag, mode LockMode, opt LockOptions) error {
	if !mode.Valid() {
		panic("locks: invalid lock mode " + strconv.Itoa(int(mode)))
	}
	hash := tag.hash()
	if ll := p.local.get(tag, mode, hash); ll != nil {
		if opt.Session {
			ll.nSession++
		} else {
			ll.nTx++
			if p.marks > 0 && !opt.Unlogged {
				p.logGrant(ll)
			}
		}
		return nil
	}
	ll := p.newLocal(tag, mode, hash)
	if err := m.acquire(ctx, p, ll, opt); err != nil {
		p.freeLocalLock(ll)
		return err
	}
	if opt.Session {
		ll.nSession = 1
	} else {
		ll.nTx = 1
		if p.marks > 0 && !opt.Unlogged {
			p.logGrant(ll)
		}
	}
	p.local.put(ll)
	return nil
}

func (m *Manager) acquire(ctx context.Context, p *Proc, ll *localLock, opt LockOptions) error {
	tag, mode := ll.tag, ll.mode
	if p.fp.groups > 0 && eligibleForFastPath(tag, mode) && m.fastPathGrant(p, tag, mode, ll.hash) {
		ll.fastPath = true
		p.stats.lock[tag.Type][mode].fastPath.Add(1)
		return nil
	}
	if conflictsWithFastPath(tag, mode) {
		// BeginStrongLockAcquire + FastPathTransferRelationLocks.
		ll.holdsStrong = true
		m.strong[ll.hash%strongPartitions].Add(1)
		if err := m.transferRelationLocks(p, tag, ll.hash); err != nil {
			m.dropStrong(ll)
			return err
		}
	} else if tag.Type == LockTagVirtualTransaction {
		if err := m.transferVXID(p, tag, ll.hash); err != nil {
			return err
		}
	}
	err := m.acquireShared(ctx, p, ll, opt)
	if err != nil {
		m.dropStrong(ll)
	}
	return err
}

func (m *Manager) dropStrong(ll *localLock) {
	if ll.holdsStrong {
		ll.holdsStrong = false
		m.strong[ll.hash%strongPartitions].Add(^uint32(0))
	}
}

type joinResult int

const (
	joinWaiting joinResult = iota
	joinGranted
	joinNoWait
	joinDeadlock
)

// acquireShared takes the lock through the shared table, waiting if needed.
func (m *Manager) acquireShared(ctx context.Context, p *Proc, ll *localLock, opt LockOptions) error {
	tag, mode := ll.tag, ll.mode
	st := &p.stats.lock[tag.Type][mode]
	part := m.part(ll.hash)
	part.lock.Acquire(p, LWExclusive)
	lock, pl := m.setupLock(part, p, tag, ll.hash, mode)
	if lock == nil {
		part.lock.Release(p)
		return errOutOfSharedMemory()
	}
	// No barging: a request conflicting with somebody's queued request
	// waits even if it is compatible with everything granted.
	if conflictTab[mode]&lock.waitMask == 0 && !lock.checkConflicts(mode, pl) {
		lock.grant(pl, mode)
		part.lock.Release(p)
		ll.procLock = pl
		st.shared.Add(1)
		return nil
	}
	start := time.Now()
	res, blocker := m.joinWaitQueue(p, lock, pl, mode, opt.NoWait, start)
	switch res {
	case joinGranted:
		part.lock.Release(p)
		ll.procLock = pl
		st.shared.Add(1)
		return nil
	case joinNoWait, joinDeadlock:
		var info []deadlockInfo
		if res == joinDeadlock {
			info = []deadlockInfo{{tag, mode, p.pid}, {tag, blocker.waitMode, blocker.pid}}
		}
		lock.requested[mode]--
		lock.nRequested--
		m.cleanUpLock(part, lock, pl, false)
		part.lock.Release(p)
		if opt.NoWait {
			return ErrLockNotAvailable
		}
		st.deadlocks.Add(1)
		return errDeadlock(info)
	}
	part.lock.Release(p)
	return m.waitOnLock(ctx, p, ll, part, pl, start, opt)
}

// joinWaitQueue queues p for lock (JoinWaitQueue). Normally p goes to the
// tail; but if p already holds modes on this lock that an earlier waiter
// conflicts with, p goes just ahead of the first such waiter — and is
// granted at once if nothing granted or queued before that point
// conflicts, or fails with an early deadlock if that waiter also holds
// something p's request conflicts with. Caller holds the partition lock.
func (m *Manager) joinWaitQueue(p *Proc, lock *lockObj, pl *procLock, mode LockMode, noWait bool, now time.Time) (joinResult, *Proc) {
	var before *Proc
	if held := pl.holdMask; held != 0 {
		var ahead lockMask
		for w := lock.waitHead; w != nil; w = w.waitNext {
			if conflictTab[w.waitMode]&held != 0 {
				if conflictTab[mode]&w.waitProcLock.holdMask != 0 {
					return joinDeadlock, w
				}
				if conflictTab[mode]&ahead == 0 && !lock.checkConflicts(mode, pl) {
					lock.grant(pl, mode)
					return joinGranted, nil
				}
				before = w
				break
			}
			ahead |= modeBit(w.waitMode)
		}
	}
	if noWait {
		return joinNoWait, nil
	}
	lock.pushWaiter(p, before)
	lock.waitMask |= modeBit(mode)
	p.waitLock, p.waitProcLock, p.waitMode = lock, pl, mode
	p.waitStart.Store(now.UnixNano())
	p.waitStatus.Store(waitWaiting)
	if invariantsEnabled {
		lock.check()
	}
	return joinWaiting, nil
}

// waitOnLock sleeps until p is granted or gives up (ProcSleep).
func (m *Manager) waitOnLock(ctx context.Context, p *Proc, ll *localLock, part *partition, pl *procLock, start time.Time, opt LockOptions) error {
	tag, mode := ll.tag, ll.mode
	st := &p.stats.lock[tag.Type][mode]
	prevEvent := p.waitEvent.Swap(uint32(LockWaitEvent(tag.Type)))
	timing := trackTiming.Load()
	dt := opt.DeadlockTimeout
	if dt <= 0 {
		dt = time.Duration(m.deadlockTimeout.Load())
	}
	logOn := m.logLockWaits.Load()
	if opt.LogLockWaitsSet {
		logOn = opt.LogLockWaits
	}
	p.dlTimer.Reset(dt)
	dlC := p.dlTimer.C
	var ltC <-chan time.Time
	if opt.LockTimeout > 0 {
		p.ltTimer.Reset(opt.LockTimeout)
		ltC = p.ltTimer.C
	}
	var (
		err     error
		granted bool
		checked bool // the deadlock check ran
		logged  bool // "still waiting" was logged
	)
	for !granted && err == nil {
		select {
		case <-p.sem:
			granted = p.waitStatus.Load() == waitGranted
		case <-dlC:
			dlC = nil
			checked = true
			err = m.checkDeadlock(p, part, ll, start, logOn, &logged)
		case <-p.dlKick:
			checked = true
			err = m.checkDeadlock(p, part, ll, start, logOn, &logged)
		case <-ltC:
			if granted = m.cancelWait(p, part); !granted {
				err = errLockTimeout()
				st.lockTimeouts.Add(1)
			}
		case <-ctx.Done():
			if granted = m.cancelWait(p, part); !granted {
				err = context.Cause(ctx)
			}
		}
	}
	p.dlTimer.Stop()
	p.ltTimer.Stop()
	p.waitEvent.Store(prevEvent)
	p.waitStatus.Store(waitNone)
	p.waitStart.Store(0)
	elapsed := time.Since(start)
	st.waits.Add(1)
	if timing {
		st.waitTime.observe(elapsed)
	}
	logWaits := checked && logOn
	if granted {
		ll.procLock = pl
		st.shared.Add(1)
		if logWaits {
			st.loggedWaits.Add(1)
			st.loggedWaitMs.Add(uint64(elapsed / time.Millisecond))
			m.logf("process %d acquired %s on %s after %s ms", p, mode, "", p.pid, mode, tag.Describe(), fmtMs(elapsed))
		}
		return nil
	}
	if logWaits && !isDeadlock(err) {
		m.logf("process %d failed to acquire %s on %s after %s ms", p, mode, "", p.pid, mode, tag.Describe(), fmtMs(elapsed))
	}
	return err
}

func isDeadlock(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == CodeDeadlockDetected
}

// cancelWait takes p out of its wait queue after a timeout or cancellation
// (LockErrorCleanup). If p was granted meanwhile it consumes the pending
// wake-up and reports true: the lock is held.
func (m *Manager) cancelWait(p *Proc, part *partition) bool {
	part.lock.Acquire(p, LWExclusive)
	if p.waitStatus.Load() == waitWaiting {
		m.removeFromWaitQueue(part, p)
		part.lock.Release(p)
		return false
	}
	part.lock.Release(p)
	<-p.sem
	return true
}

// checkDeadlock runs the deadlock detector for waiting backend p with every
// partition locked (CheckDeadLock), and does log_lock_waits reporting.
func (m *Manager) checkDeadlock(p *Proc, part *partition, ll *localLock, start time.Time, logOn bool, logged *bool) error {
	defer p.dlChecks.Add(1)
	for i := range m.parts {
		m.parts[i].lock.Acquire(p, LWExclusive)
	}
	var err error
	state := dsNotWaiting
	if p.waitStatus.Load() == waitWaiting {
		state = m.det.check(m, p)
		if state == dsHardDeadlock {
			err = errDeadlock(m.det.details)
			m.removeFromWaitQueue(part, p)
			p.stats.lock[ll.tag.Type][ll.mode].deadlocks.Add(1)
		}
	}
	for i := len(m.parts) - 1; i >= 0; i-- {
		m.parts[i].lock.Release(p)
	}
	if state == dsNotWaiting || !logOn {
		return err
	}
	elapsed := time.Since(start)
	detail := m.holdersAndWaiters(p, part, ll.tag)
	desc := ll.tag.Describe()
	switch state {
	case dsSoftDeadlock:
		m.logf("process %d avoided deadlock for %s on %s by rearranging queue order after %s ms", p, ll.mode, detail,
			p.pid, ll.mode, desc, fmtMs(elapsed))
	case dsHardDeadlock:
		m.logf("process %d detected deadlock while waiting for %s on %s after %s ms", p, ll.mode, detail,
			p.pid, ll.mode, desc, fmtMs(elapsed))
	}
	if p.waitStatus.Load() == waitWaiting && !*logged {
		*logged = true
		m.logf("process %d still waiting for %s on %s after %s ms", p, ll.mode, detail,
			p.pid, ll.mode, desc, fmtMs(elapsed))
	}
	return err
}

// holdersAndWaiters renders log_lock_waits' detail line
// (GetLockHoldersAndWaiters): holders in holder-list order, waiters in
// queue order.
func (m *Manager) holdersAndWaiters(p *Proc, part *partition, tag LockTag) string {
	var holders, waiters []string
	part.lock.Acquire(p, LWShared)
	if lock := part.locks[tag]; lock != nil {
		for w := lock.waitHead; w != nil; w = w.waitNext {
			waiters = append(waiters, strconv.Itoa(int(w.pid)))
		}
		for pl := lock.procLocks; pl != nil; pl = pl.lockNext {
			if pl.holdMask != 0 && !lock.hasWaiter(pl.proc) {
				holders = append(holders, strconv.Itoa(int(pl.proc.pid)))
			}
		}
	}
	part.lock.Release(p)
	format := "Processes holding the lock: %s. Wait queue: %s."
	if len(holders) == 1 {
		format = "Process holding the lock: %s. Wait queue: %s."
	}
	return fmt.Sprintf(format, strings.Join(holders, ", "), strings.Join(waiters, ", "))
}

func (lock *lockObj) hasWaiter(q *Proc) bool {
	for w := lock.waitHead; w != nil; w = w.waitNext {
		if w == q {
			return true
		}
	}
	return false
}

func (m *Manager) logf(format string, p *Proc, mode LockMode, detail string, args ...any) {
	attrs := []slog.Attr{slog.Int("pid", int(p.pid)), slog.String("lock_mode", mode.String())}
	if detail != "" {
		attrs = append(attrs, slog.String("detail", detail))
	}
	m.logger.LogAttrs(context.Background(), slog.LevelInfo, fmt.Sprintf(format, args...), attrs...)
}

// fmtMs renders a duration as PostgreSQL's "%ld.%03d" milliseconds.
func fmtMs(d time.Duration) string {
	us := d.Microseconds()
	return fmt.Sprintf("%d.%03d", us/1000, us%1000)
}

// Unlock releases one count of a lock p holds in mode at the given level
// (LockRelease). It returns false if p holds no such lock at that level —
// PostgreSQL then warns "you don't own a lock of type %s".
func (m *Manager) Unlock(p *Proc, tag LockTag, mode LockMode, session bool) bool {
	ll := p.local.get(tag, mode, tag.hash())
	if ll == nil {
		return false
	}
	if session {
		if ll.nSession == 0 {
			return false
		}
		ll.nSession--
	} else {
		if ll.nTx == 0 {
			return false
		}
		ll.nTx--
		if p.marks > 0 {
			p.unlogGrant(ll)
		}
	}
	if ll.nTx+ll.nSession > 0 {
		return true
	}
	p.local.remove(ll)
	m.release(p, ll)
	p.freeLocalLock(ll)
	return true
}

// Holds reports how many times p holds tag in mode at transaction and at
// session level.
func (m *Manager) Holds(p *Proc, tag LockTag, mode LockMode) (tx, session int) {
	if ll := p.local.get(tag, mode, tag.hash()); ll != nil {
		return int(ll.nTx), int(ll.nSession)
	}
	return 0, 0
}

// release gives up the lock a local entry stands for.
func (m *Manager) release(p *Proc, ll *localLock) {
	if ll.fastPath {
		p.fp.lock.Acquire(p, LWExclusive)
		ok := p.fp.ungrantSlot(ll.tag.Field1, ll.tag.Field2, ll.mode)
		p.fp.lock.Release(p)
		if ok {
			return
		}
	}
	part := m.part(ll.hash)
	part.lock.Acquire(p, LWExclusive)
	m.releaseShared(part, p, ll)
	part.lock.Release(p)
	m.dropStrong(ll)
}

// releaseShared drops ll's lock from the shared table. Caller holds part.
func (m *Manager) releaseShared(part *partition, p *Proc, ll *localLock) {
	pl := ll.procLock
	if pl == nil {
		// A fast-path grant that a strong locker moved to the shared table.
		if lock := part.locks[ll.tag]; lock != nil {
			pl = part.procLocks[procLockKey{lock, p}]
		}
	}
	if pl == nil || pl.holdMask&modeBit(ll.mode) == 0 {
		panic("locks: failed to re-find shared lock object for " + ll.tag.Describe())
	}
	lock := pl.lock
	wake := lock.ungrant(pl, ll.mode)
	m.cleanUpLock(part, lock, pl, wake)
}

// ReleaseTransactionLocks releases every transaction-level lock of p and
// ends its virtual transaction (at commit or abort). Session-level locks
// stay. Open subtransaction levels (Mark) are closed.
func (m *Manager) ReleaseTransactionLocks(p *Proc) {
	m.releaseAll(p, false, false)
	m.endVirtualXact(p)
}

// ReleaseSessionLocks releases p's session-level locks — only advisory
// ones if advisoryOnly (pg_advisory_unlock_all) — leaving transaction-level
// locks alone.
func (m *Manager) ReleaseSessionLocks(p *Proc, advisoryOnly bool) {
	m.releaseAll(p, true, advisoryOnly)
}

// releaseAll drops one level of counts from every local entry and releases
// the entries that reach zero: fast-path ones under a single acquisition of
// the backend's fast-path lock, shared-table ones sorted by partition so
// each partition lock is taken once (LockReleaseAll).
func (m *Manager) releaseAll(p *Proc, session, advisoryOnly bool) {
	if !session {
		p.resetLog()
	}
	if p.local.n == 0 {
		return
	}
	// Collect first: removal shifts entries, so it cannot run mid-scan.
	buf := p.relBuf[:0]
	for _, ll := range p.local.slots {
		if ll == nil {
			continue
		}
		if session {
			if ll.nSession == 0 || (advisoryOnly && ll.tag.Method != UserLockMethod) {
				continue
			}
			ll.nSession = 0
		} else {
			if ll.nTx == 0 {
				continue
			}
			ll.nTx = 0
		}
		if ll.nTx+ll.nSession == 0 {
			buf = append(buf, ll)
		}
	}
	if len(buf) == 0 {
		p.relBuf = buf
		return
	}
	if p.local.n == len(buf) && len(p.local.slots) > localTableShrinkSize {
		p.local.init(localTableMinSize)
	} else {
		for _, ll := range buf {
			p.local.remove(ll)
		}
	}
	// Fast-path entries under one acquisition of the backend's own lock;
	// keep the rest (including transferred ones) for the shared table.
	shared := buf[:0]
	fpLocked := false
	for _, ll := range buf {
		if ll.fastPath {
			if !fpLocked {
				p.fp.lock.Acquire(p, LWExclusive)
				fpLocked = true
			}
			if p.fp.ungrantSlot(ll.tag.Field1, ll.tag.Field2, ll.mode) {
				p.freeLocalLock(ll)
				continue
			}
		}
		shared = append(shared, ll)
	}
	if fpLocked {
		p.fp.lock.Release(p)
	}
	if len(shared) > 0 {
		mask := m.partMask
		slices.SortFunc(shared, func(a, b *localLock) int { return cmp.Compare(a.hash&mask, b.hash&mask) })
		var cur *partition
		for _, ll := range shared {
			if part := m.part(ll.hash); part != cur {
				if cur != nil {
					cur.lock.Release(p)
				}
				cur = part
				cur.lock.Acquire(p, LWExclusive)
			}
			m.releaseShared(cur, p, ll)
		}
		cur.lock.Release(p)
		for _, ll := range shared {
			m.dropStrong(ll)
			p.freeLocalLock(ll)
		}
	}
	clear(buf)
	p.relBuf = buf[:0]
}
