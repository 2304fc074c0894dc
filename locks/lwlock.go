package locks

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// LWMode is the mode of an LWLock acquisition.
type LWMode uint8

// LWLock modes.
const (
	LWExclusive LWMode = iota
	LWShared
	// NumLWModes is the size of arrays indexed by LWMode.
	NumLWModes = 2
)

func (m LWMode) String() string {
	if m == LWShared {
		return "shared"
	}
	return "exclusive"
}

// LWLock is PostgreSQL's lightweight lock (lwlock.c, 9.6+ design): a
// reader/writer lock whose whole state is one atomic 32-bit word, with a
// FIFO queue of sleeping waiters.
//
// State word (PostgreSQL 18 layout):
//
//	bit 31      HAS_WAITERS   the wait queue is (probably) non-empty
//	bit 30      WAKE_PENDING  waiters were woken and none has run yet
//	                          (PostgreSQL's RELEASE_OK, stored inverted so
//	                          that the zero value is a ready, unlocked lock)
//	bit 29      LIST_LOCKED   the wait queue is being modified (a spin bit,
//	                          replacing 9.5's separate spinlock, as in 9.6+)
//	bit 18      EXCLUSIVE     value 1<<18 = MAX_BACKENDS+1: held exclusively
//	bits 0..17  shared count  number of shared holders
//
// Acquiring is a CAS on the word. A backend that must wait queues itself,
// tries once more (the lock may have been released meanwhile), and only
// then sleeps on its Proc's wait channel. A wake-up does not grant the lock:
// the woken waiter retries and may lose to a newcomer ("barging"), exactly
// as PostgreSQL has done since 2001; that saves a context switch per
// acquisition under contention at the price of possible starvation.
//
// Which waiters a full release wakes is the experiment (SetWakePolicy):
//
//   - default (wake_up_all_waiters = off): the 8.4 rule. If the first waiter
//     wants exclusive, wake it alone; otherwise wake the leading run of
//     shared waiters, stopping at the first exclusive one. PostgreSQL 9.5+
//     instead wakes every shared waiter anywhere in the queue (skipping the
//     exclusive ones); lockd keeps the 8.4 rule because the 2009 thread that
//     motivates the knob measured it.
//   - wake_up_all_waiters = on: every queued waiter is woken; they race.
//   - lwlock_wakeup_limit = N > 0: at most N waiters per release (the
//     "heart valve"), under either rule.
//
// After any wake-up WAKE_PENDING is set and further releases wake nobody
// until one woken waiter has run and cleared it: this throttles the herd and
// cannot lose a wake-up, because that waiter either gets the lock (and will
// release it, waking the next) or finds it held (and its holder will).
//
// LWLock waits are not interruptible: Acquire takes no context, as in
// PostgreSQL. Hold LWLocks briefly and never across a heavyweight lock wait.
//
// The zero value is an unlocked lock of TrancheOther; Init or NewLWLock sets
// the tranche. An LWLock must not be copied after first use. All methods are
// safe for concurrent use; Release must be called with the Proc (or nil)
// that acquired.
type LWLock struct {
	_       noCopy
	state   atomic.Uint32
	tranche Tranche
	head    *lwWaiter // guarded by lwFlagListLocked
	tail    *lwWaiter // guarded by lwFlagListLocked
}

const (
	lwFlagHasWaiters  uint32 = 1 << 31
	lwFlagWakePending uint32 = 1 << 30
	lwFlagListLocked  uint32 = 1 << 29
	lwValExclusive    uint32 = 1 << 18
	lwValShared       uint32 = 1
	lwSharedMask             = lwValExclusive - 1
	lwLockMask               = lwSharedMask | lwValExclusive
)

// Waiter states (PostgreSQL's LW_WS_*).
const (
	lwNotWaiting uint32 = iota
	lwWaiting
	lwPendingWakeup
)

// lwWaiter is the queue node of one sleeping backend. Every Proc embeds one;
// Acquire with a nil Proc borrows one from a pool.
type lwWaiter struct {
	next, prev *lwWaiter     // guarded by the list lock of the LWLock waited on
	wakeNext   *lwWaiter     // private wake list of the releasing backend
	mode       LWMode        // guarded by the list lock
	status     atomic.Uint32 // lwNotWaiting / lwWaiting / lwPendingWakeup
	sem        chan struct{} // the backend's wait channel
}

var lwWaiterPool = sync.Pool{New: func() any { return &lwWaiter{sem: make(chan struct{}, semCapacity)} }}

type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// NewLWLock returns an unlocked LWLock of tranche t.
func NewLWLock(t Tranche) *LWLock {
	l := &LWLock{}
	l.Init(t)
	return l
}

// Init sets the tranche of an unused lock (e.g. an element of an array).
func (l *LWLock) Init(t Tranche) {
	if t >= MaxTranches {
		panic("locks: invalid tranche")
	}
	l.tranche = t
}

// Tranche returns the lock's tranche.
func (l *LWLock) Tranche() Tranche { return l.tranche }

// wakePolicy packs wake_up_all_waiters (bit 31) and lwlock_wakeup_limit
// (low bits); read once per wake-up.
var wakePolicy atomic.Uint32

const wakeAllBit = 1 << 31

// SetWakePolicy sets wake_up_all_waiters and lwlock_wakeup_limit (0 = no
// limit) for all LWLocks; it takes effect on the next release.
func SetWakePolicy(wakeAll bool, limit int) {
	if limit < 0 {
		limit = 0
	}
	if limit > 1<<30 {
		limit = 1 << 30
	}
	v := uint32(limit)
	if wakeAll {
		v |= wakeAllBit
	}
	wakePolicy.Store(v)
}

// WakePolicy returns the current wake_up_all_waiters and lwlock_wakeup_limit.
func WakePolicy() (wakeAll bool, limit int) {
	v := wakePolicy.Load()
	return v&wakeAllBit != 0, int(v &^ wakeAllBit)
}

// attempt tries once to take the lock (LWLockAttemptLock); it ignores the
// flags and queued waiters, which is what allows barging.
func (l *LWLock) attempt(mode LWMode) bool {
	old := l.state.Load()
	for {
		var desired uint32
		if mode == LWExclusive {
			if old&lwLockMask != 0 {
				return false
			}
			desired = old + lwValExclusive
		} else {
			if old&lwValExclusive != 0 {
				return false
			}
			desired = old + lwValShared
		}
		if l.state.CompareAndSwap(old, desired) {
			return true
		}
		old = l.state.Load()
	}
}

// Acquire takes the lock in mode, sleeping until it is available. p is the
// calling backend (its stats and held-lock list are updated, its wait event
// shows ("LWLock", tranche) while it sleeps); p may be nil for callers
// without a backend, who then get no stats.
func (l *LWLock) Acquire(p *Proc, mode LWMode) {
	if !l.attempt(mode) {
		l.acquireSlow(p, mode)
		return
	}
	if p != nil {
		p.pushLW(l, mode)
		p.stats.lw[l.tranche][mode].acquisitions.Add(1)
	}
}

// ConditionalAcquire takes the lock if that is possible without sleeping.
func (l *LWLock) ConditionalAcquire(p *Proc, mode LWMode) bool {
	if !l.attempt(mode) {
		return false
	}
	if p != nil {
		p.pushLW(l, mode)
		p.stats.lw[l.tranche][mode].acquisitions.Add(1)
	}
	return true
}

func (l *LWLock) acquireSlow(p *Proc, mode LWMode) {
	var w *lwWaiter
	if p != nil {
		w = &p.lw
	} else {
		w = lwWaiterPool.Get().(*lwWaiter)
	}
	var st *lwCounters
	if p != nil {
		st = &p.stats.lw[l.tranche][mode]
	}
	var (
		slept    bool
		woken    bool
		extra    int // wake-ups meant for someone else (a heavyweight grant); re-posted at the end
		start    time.Time
		timing   bool
		prevWait uint32
	)
	for {
		if l.attempt(mode) {
			break
		}
		if woken && st != nil {
			st.futileWakeups.Add(1)
		}
		woken = false
		l.queueSelf(p, w, mode)
		if l.attempt(mode) {
			extra += l.dequeueSelf(p, w)
			break
		}
		if !slept {
			slept = true
			if timing = trackTiming.Load(); timing {
				start = time.Now()
			}
			if p != nil {
				prevWait = p.waitEvent.Swap(uint32(LWLockWaitEvent(l.tranche)))
			}
		}
		// Sleep until a releaser has dequeued us. The semaphore may also
		// carry a heavyweight-lock grant aimed at this backend; count it
		// and re-post it once we have the LWLock.
		for {
			<-w.sem
			if w.status.Load() == lwNotWaiting {
				break
			}
			extra++
		}
		woken = true
		if st != nil {
			st.wakeups.Add(1)
		}
		// Allow releasers to wake waiters again (PostgreSQL sets RELEASE_OK).
		l.state.And(^lwFlagWakePending)
	}
	if p != nil {
		if slept {
			p.waitEvent.Store(prevWait)
			st.waits.Add(1)
			if timing {
				st.waitTime.observe(time.Since(start))
			}
		}
		p.pushLW(l, mode)
		st.acquisitions.Add(1)
	}
	for ; extra > 0; extra-- {
		w.sem <- struct{}{}
	}
	if p == nil {
		lwWaiterPool.Put(w)
	}
}

// lockWaitList takes the LIST_LOCKED bit, spinning (and yielding to the Go
// scheduler every few spins, the analogue of perform_spin_delay).
func (l *LWLock) lockWaitList(p *Proc) uint32 {
	for spins := 0; ; {
		old := l.state.Or(lwFlagListLocked)
		if old&lwFlagListLocked == 0 {
			return old | lwFlagListLocked
		}
		for l.state.Load()&lwFlagListLocked != 0 {
			spins++
			if spins&31 == 0 {
				if p != nil {
					p.stats.lw[l.tranche][LWExclusive].spinDelays.Add(1)
				}
				runtime.Gosched()
			}
		}
	}
}

// unlockWaitList clears LIST_LOCKED, setting and clearing other flags in
// the same atomic step.
func (l *LWLock) unlockWaitList(set, clear uint32) {
	for {
		old := l.state.Load()
		if l.state.CompareAndSwap(old, (old|set)&^(clear|lwFlagListLocked)) {
			return
		}
	}
}

func (l *LWLock) queueSelf(p *Proc, w *lwWaiter, mode LWMode) {
	l.lockWaitList(p)
	w.mode = mode
	w.status.Store(lwWaiting)
	w.next, w.prev = nil, l.tail
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
	l.unlockWaitList(lwFlagHasWaiters, 0)
}

func (l *LWLock) unlink(w *lwWaiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.next, w.prev = nil, nil
}

// dequeueSelf removes w after a successful second attempt. If a releaser
// already took w off the queue, its wake-up is on the way: absorb it and
// reset WAKE_PENDING, since the wake-up was spent on a backend that no
// longer waits. Returns the number of foreign wake-ups absorbed meanwhile.
func (l *LWLock) dequeueSelf(p *Proc, w *lwWaiter) int {
	l.lockWaitList(p)
	onList := w.status.Load() == lwWaiting
	if onList {
		l.unlink(w)
	}
	var clear uint32
	if l.head == nil {
		clear = lwFlagHasWaiters
	}
	l.unlockWaitList(0, clear)
	if onList {
		w.status.Store(lwNotWaiting)
		return 0
	}
	extra := 0
	for {
		<-w.sem
		if w.status.Load() == lwNotWaiting {
			break
		}
		extra++
	}
	l.state.And(^lwFlagWakePending)
	return extra
}

// Release releases the lock; p must be the Proc passed to Acquire.
func (l *LWLock) Release(p *Proc) {
	var mode LWMode
	if p != nil {
		mode = p.popLW(l)
	} else {
		s := l.state.Load()
		switch {
		case s&lwValExclusive != 0:
			mode = LWExclusive
		case s&lwSharedMask != 0:
			mode = LWShared
		default:
			panic("locks: release of an LWLock that is not held")
		}
	}
	sub := lwValShared
	if mode == LWExclusive {
		sub = lwValExclusive
	}
	s := l.state.Add(^(sub - 1))
	if invariantsEnabled && (s&lwSharedMask == lwSharedMask || (mode == LWExclusive && s&lwValExclusive != 0)) {
		panic("locks: LWLock state corrupted by release")
	}
	if s&(lwFlagHasWaiters|lwFlagWakePending) == lwFlagHasWaiters && s&lwLockMask == 0 {
		l.wakeup(p)
	}
}

// wakeup detaches the waiters the current policy selects and wakes them
// (LWLockWakeup). Wake-ups are sent after the list lock is released.
func (l *LWLock) wakeup(p *Proc) {
	l.lockWaitList(p)
	pol := wakePolicy.Load()
	wakeAll, limit := pol&wakeAllBit != 0, int(pol&^wakeAllBit)
	var first, last *lwWaiter
	n := 0
	for w := l.head; w != nil; {
		next := w.next
		if limit > 0 && n >= limit {
			break
		}
		if !wakeAll && n > 0 && w.mode == LWExclusive {
			break // 8.4: only the leading run of shared waiters
		}
		l.unlink(w)
		w.status.Store(lwPendingWakeup)
		if last == nil {
			first = w
		} else {
			last.wakeNext = w
		}
		last = w
		n++
		if !wakeAll && w.mode == LWExclusive {
			break // an exclusive waiter is woken alone
		}
		w = next
	}
	var set, clear uint32
	if n > 0 {
		set = lwFlagWakePending
	}
	if l.head == nil {
		clear = lwFlagHasWaiters
	}
	l.unlockWaitList(set, clear)
	for w := first; w != nil; {
		next, sem := w.wakeNext, w.sem
		w.wakeNext = nil
		w.status.Store(lwNotWaiting) // from here on w may run and reuse its node
		sem <- struct{}{}
		w = next
	}
}

// LWLockState is a decoded snapshot of an LWLock's state word.
type LWLockState struct {
	Exclusive  bool
	Shared     int
	HasWaiters bool
	ReleaseOK  bool // PostgreSQL's RELEASE_OK (not WAKE_PENDING)
}

// State decodes the lock's current state word (for tests and debugging).
func (l *LWLock) State() LWLockState {
	s := l.state.Load()
	return LWLockState{
		Exclusive:  s&lwValExclusive != 0,
		Shared:     int(s & lwSharedMask),
		HasWaiters: s&lwFlagHasWaiters != 0,
		ReleaseOK:  s&lwFlagWakePending == 0,
	}
}

// heldLW is an entry of a backend's held-LWLock list (held_lwlocks).
type heldLW struct {
	l    *LWLock
	mode LWMode
}

func (p *Proc) pushLW(l *LWLock, mode LWMode) {
	p.heldLW = append(p.heldLW, heldLW{l, mode})
}

func (p *Proc) popLW(l *LWLock) LWMode {
	h := p.heldLW
	if n := len(h) - 1; n >= 0 && h[n].l == l {
		p.heldLW = h[:n]
		return h[n].mode
	}
	for i := len(h) - 2; i >= 0; i-- {
		if h[i].l == l {
			mode := h[i].mode
			copy(h[i:], h[i+1:])
			p.heldLW = h[:len(h)-1]
			return mode
		}
	}
	panic("locks: release of an LWLock not held by this backend")
}

// ReleaseAllLWLocks releases every LWLock p holds (LWLockReleaseAll), for
// error recovery: a panic caught at the session boundary must not leave a
// partition or buffer lock held.
func (p *Proc) ReleaseAllLWLocks() {
	for len(p.heldLW) > 0 {
		p.heldLW[len(p.heldLW)-1].l.Release(p)
	}
}

// HeldLWLocks reports how many LWLocks p holds.
func (p *Proc) HeldLWLocks() int { return len(p.heldLW) }
