package locks

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// LWMode is the mode of an LWLock acquisition, or of a wait.
type LWMode uint8

// LWLock modes. LWWaitUntilFree is PostgreSQL's LW_WAIT_UNTIL_FREE: only
// a waiter has it (AcquireOrWait, WaitForVar); nobody holds a lock in it.
const (
	LWExclusive LWMode = iota
	LWShared
	LWWaitUntilFree
	// NumLWModes is the size of arrays indexed by LWMode.
	NumLWModes = 3
)

func (m LWMode) String() string {
	switch m {
	case LWShared:
		return "shared"
	case LWWaitUntilFree:
		return "wait_until_free"
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
// Acquiring is a CAS on the word (LWLockAttemptLock). A backend that must
// wait queues itself (LWLockQueueSelf), tries once more (the lock may have
// been released meanwhile; if so it takes itself off the queue again,
// LWLockDequeueSelf), and only then sleeps on its Proc's wait channel. A
// wake-up does not grant the lock: the woken waiter retries and may lose to
// a newcomer ("barging"), exactly as PostgreSQL has done since 2001; that
// saves a context switch per acquisition under contention at the price of
// possible starvation.
//
// The queue holds three kinds of waiter. Exclusive and shared ones are
// appended at the tail. Wait-until-free ones (LW_WAIT_UNTIL_FREE, from
// AcquireOrWait and WaitForVar, PostgreSQL's LWLockAcquireOrWait and
// LWLockWaitForVar) are pushed at the head, so they always form a prefix of
// the queue; they want to know that the lock was freed, not to take it.
//
// Which waiters a full release wakes is the experiment. The rule is
// lwlock_wakeup_rule (SetWakeupRule); wake_up_all_waiters and
// lwlock_wakeup_limit (SetWakePolicy) apply on top of either rule:
//
//   - pg95 (the default): PostgreSQL 9.5 to 18's LWLockWakeup. Walk the
//     whole queue from the head; once a waiter that will retry the lock has
//     been picked, skip every exclusive waiter; stop after picking an
//     exclusive one. So: if the first such waiter wants exclusive it is woken
//     alone, otherwise every shared waiter anywhere in the queue is woken and
//     the exclusive ones between them stay queued. For S S X S X S that is
//     S S . S . S; for X S S it is X alone.
//   - pg84: PostgreSQL 8.4's LWLockRelease, the rule the 2009 thread
//     measured. If the first waiter wants exclusive, wake it alone; otherwise
//     wake the leading run of shared waiters and stop at the first exclusive
//     one. For S S X S X S that is S S only. (Wait-until-free waiters came
//     in 9.2; 9.2 to 9.4's LWLockRelease kept this rule and treated them as
//     the next paragraph says, and so does pg84.)
//   - wake_up_all_waiters = on (either rule): every queued waiter is woken
//     and they race, as the 2009 proposal did.
//   - lwlock_wakeup_limit = N > 0: at most N waiters that will retry the
//     lock are woken per release (the "heart valve"); the rest stay queued.
//
// Under every rule and either switch, wait-until-free waiters at the head
// are all woken, and they do not count as having taken the lock: they do
// not stop the wake-up of the next waiter, do not count against the limit,
// and do not set WAKE_PENDING (PostgreSQL: "Backends that are just waiting
// for the lock to become free don't retry automatically").
//
// After a wake-up that picked a waiter that will retry, WAKE_PENDING is set
// and further releases wake nobody until one woken waiter has run and
// cleared it: this throttles the herd and cannot lose a wake-up, because
// that waiter either gets the lock (and will release it, waking the next)
// or finds it held (and its holder will). A wake-up that picked none clears
// it, as LWLockWakeup sets RELEASE_OK then. A WaitForVar waiter also clears
// it once queued, so that the next release wakes it at once.
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

// WakeRule is lwlock_wakeup_rule: which waiters a release wakes when
// wake_up_all_waiters is off (see LWLock).
type WakeRule uint8

// Wake-up rules.
const (
	// WakePG95 is PostgreSQL 9.5 to 18's LWLockWakeup: the first exclusive
	// waiter alone, or every shared waiter in the queue. The default.
	WakePG95 WakeRule = iota
	// WakePG84 is PostgreSQL 8.4's LWLockRelease: the first exclusive
	// waiter alone, or the leading run of shared waiters.
	WakePG84
)

// String returns the setting value: "pg95" or "pg84".
func (r WakeRule) String() string {
	if r == WakePG84 {
		return "pg84"
	}
	return "pg95"
}

// ParseWakeRule parses an lwlock_wakeup_rule value ("pg95", "pg84").
func ParseWakeRule(s string) (WakeRule, bool) {
	switch s {
	case "pg95":
		return WakePG95, true
	case "pg84":
		return WakePG84, true
	}
	return 0, false
}

// wakePolicy packs the wake settings so that a wake-up reads them in one
// load: wake_up_all_waiters (bit 31), lwlock_wakeup_rule = pg84 (bit 30)
// and lwlock_wakeup_limit (bits 0..29). The zero value is PostgreSQL's
// default: pg95, no wake-all, no limit.
var wakePolicy atomic.Uint32

const (
	wakeAllBit   = 1 << 31
	wakePG84Bit  = 1 << 30
	wakeLimitMax = 1<<30 - 1
)

// updateWakePolicy replaces the bits in mask by v.
func updateWakePolicy(mask, v uint32) {
	for {
		old := wakePolicy.Load()
		if wakePolicy.CompareAndSwap(old, old&^mask|v) {
			return
		}
	}
}

// SetWakePolicy sets wake_up_all_waiters and lwlock_wakeup_limit (0 = no
// limit) for all LWLocks; it takes effect on the next release.
func SetWakePolicy(wakeAll bool, limit int) {
	limit = min(max(limit, 0), wakeLimitMax)
	v := uint32(limit)
	if wakeAll {
		v |= wakeAllBit
	}
	updateWakePolicy(wakeAllBit|wakeLimitMax, v)
}

// WakePolicy returns the current wake_up_all_waiters and lwlock_wakeup_limit.
func WakePolicy() (wakeAll bool, limit int) {
	v := wakePolicy.Load()
	return v&wakeAllBit != 0, int(v & wakeLimitMax)
}

// SetWakeupRule sets lwlock_wakeup_rule for all LWLocks; it takes effect on
// the next release.
func SetWakeupRule(r WakeRule) {
	var v uint32
	if r == WakePG84 {
		v = wakePG84Bit
	}
	updateWakePolicy(wakePG84Bit, v)
}

// WakeupRule returns the current lwlock_wakeup_rule.
func WakeupRule() WakeRule {
	if wakePolicy.Load()&wakePG84Bit != 0 {
		return WakePG84
	}
	return WakePG95
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

// Acquire takes the lock in mode (LWExclusive or LWShared), sleeping until
// it is available. p is the calling backend (its stats and held-lock list
// are updated, its wait event shows ("LWLock", tranche) while it sleeps); p
// may be nil for callers without a backend, who then get no stats.
func (l *LWLock) Acquire(p *Proc, mode LWMode) {
	if invariantsEnabled && mode > LWShared {
		panic("locks: LWLock acquired in mode " + mode.String())
	}
	if !l.attempt(mode) {
		l.acquireSlow(p, mode)
		return
	}
	if p != nil {
		p.pushLW(l, mode)
		p.stats.lw[l.tranche][mode].acquisitions.Add(1)
	}
}

// AcquireWaited is Acquire that reports whether the caller had to sleep
// for the lock (PostgreSQL's LWLockAcquire returns the negation: true if
// the lock was had without waiting). The WAL insertion locks use it: a
// backend that waited moves on to another lock for its next insertion.
func (l *LWLock) AcquireWaited(p *Proc, mode LWMode) (waited bool) {
	if invariantsEnabled && mode > LWShared {
		panic("locks: LWLock acquired in mode " + mode.String())
	}
	if !l.attempt(mode) {
		return l.acquireSlow(p, mode)
	}
	if p != nil {
		p.pushLW(l, mode)
		p.stats.lw[l.tranche][mode].acquisitions.Add(1)
	}
	return false
}

// ConditionalAcquire takes the lock if that is possible without sleeping.
func (l *LWLock) ConditionalAcquire(p *Proc, mode LWMode) bool {
	if invariantsEnabled && mode > LWShared {
		panic("locks: LWLock acquired in mode " + mode.String())
	}
	if !l.attempt(mode) {
		return false
	}
	if p != nil {
		p.pushLW(l, mode)
		p.stats.lw[l.tranche][mode].acquisitions.Add(1)
	}
	return true
}

// waiter returns the queue node p sleeps with, or one from the pool for a
// nil p (give it back with putWaiter).
func waiter(p *Proc) *lwWaiter {
	if p != nil {
		return &p.lw
	}
	return lwWaiterPool.Get().(*lwWaiter)
}

// putWaiter re-posts the foreign wake-ups a sleeper absorbed (heavyweight
// grants aimed at p, which shares the wait channel) and returns a pooled
// node.
func putWaiter(p *Proc, w *lwWaiter, extra int) {
	for ; extra > 0; extra-- {
		w.sem <- struct{}{}
	}
	if p == nil {
		lwWaiterPool.Put(w)
	}
}

// sleep waits until a releaser has dequeued w and posted its wake-up. The
// channel may also carry heavyweight-lock grants aimed at this backend:
// they are counted in *extra, to be re-posted once the caller is done.
func (w *lwWaiter) sleep(extra *int) {
	for {
		<-w.sem
		if w.status.Load() == lwNotWaiting {
			return
		}
		*extra++
	}
}

// lwSleep is the bookkeeping of one call that sleeps on an LWLock one or
// more times: the wait event shown meanwhile and the timing of the wait.
type lwSleep struct {
	slept    bool
	timing   bool
	start    time.Time
	prevWait uint32
}

// begin is called before each sleep; the first one starts the wait.
func (s *lwSleep) begin(p *Proc, t Tranche) {
	if s.slept {
		return
	}
	s.slept = true
	if s.timing = trackTiming.Load(); s.timing {
		s.start = time.Now()
	}
	if p != nil {
		s.prevWait = p.waitEvent.Swap(uint32(LWLockWaitEvent(t)))
	}
}

// end finishes a wait that slept: it restores p's wait event and counts
// and times the wait in st.
func (s *lwSleep) end(p *Proc, st *lwCounters) {
	if !s.slept || p == nil {
		return
	}
	p.waitEvent.Store(s.prevWait)
	st.waits.Add(1)
	if s.timing {
		st.waitTime.observe(time.Since(s.start))
	}
}

// acquireSlow queues and sleeps until the lock is had; it reports whether
// it slept.
func (l *LWLock) acquireSlow(p *Proc, mode LWMode) bool {
	w := waiter(p)
	var st *lwCounters
	if p != nil {
		st = &p.stats.lw[l.tranche][mode]
	}
	var (
		sl    lwSleep
		woken bool
		extra int // wake-ups meant for someone else (a heavyweight grant); re-posted at the end
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
		sl.begin(p, l.tranche)
		w.sleep(&extra)
		woken = true
		if st != nil {
			st.wakeups.Add(1)
		}
		// Allow releasers to wake waiters again (PostgreSQL sets RELEASE_OK).
		l.state.And(^lwFlagWakePending)
	}
	if p != nil {
		sl.end(p, st)
		p.pushLW(l, mode)
		st.acquisitions.Add(1)
	}
	putWaiter(p, w, extra)
	return sl.slept
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

// queueSelf puts w on the queue (LWLockQueueSelf): at the tail, or at the
// head for a wait-until-free waiter, as PostgreSQL does.
func (l *LWLock) queueSelf(p *Proc, w *lwWaiter, mode LWMode) {
	l.lockWaitList(p)
	w.mode = mode
	w.status.Store(lwWaiting)
	if mode == LWWaitUntilFree {
		w.prev, w.next = nil, l.head
		if l.head != nil {
			l.head.prev = w
		} else {
			l.tail = w
		}
		l.head = w
	} else {
		w.next, w.prev = nil, l.tail
		if l.tail != nil {
			l.tail.next = w
		} else {
			l.head = w
		}
		l.tail = w
	}
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
	w.sleep(&extra)
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

// wakeup detaches the waiters the current rule and switches select and
// wakes them (LWLockWakeup; see LWLock). Wake-ups are sent after the list
// lock is released.
func (l *LWLock) wakeup(p *Proc) {
	l.lockWaitList(p)
	pol := wakePolicy.Load()
	wakeAll, pg84, limit := pol&wakeAllBit != 0, pol&wakePG84Bit != 0, int(pol&wakeLimitMax)
	var first, last *lwWaiter
	retriers := 0 // woken waiters that will retry the lock
	for w := l.head; w != nil; {
		next := w.next
		if w.mode != LWWaitUntilFree {
			if limit > 0 && retriers >= limit {
				break // the valve; wait-until-free waiters are a prefix, all seen
			}
			if !wakeAll && retriers > 0 && w.mode == LWExclusive {
				if pg84 {
					break // 8.4: only the leading run of shared waiters
				}
				w = next // 9.5+: exclusive waiters are skipped, shared ones further on still woken
				continue
			}
		}
		l.unlink(w)
		w.status.Store(lwPendingWakeup)
		if last == nil {
			first = w
		} else {
			last.wakeNext = w
		}
		last = w
		if w.mode != LWWaitUntilFree {
			retriers++
			if !wakeAll && w.mode == LWExclusive {
				break // an exclusive waiter is woken alone
			}
		}
		w = next
	}
	if invariantsEnabled {
		l.checkQueue()
	}
	// WAKE_PENDING is PostgreSQL's RELEASE_OK inverted: set it when a
	// waiter that will retry was woken, clear it otherwise.
	set, clear := uint32(0), uint32(lwFlagWakePending)
	if retriers > 0 {
		set, clear = lwFlagWakePending, 0
	}
	if l.head == nil {
		clear |= lwFlagHasWaiters
	}
	l.unlockWaitList(set, clear)
	wakeList(first)
}

// wakeList posts the wake-up of every waiter on a private wake list.
func wakeList(w *lwWaiter) {
	for w != nil {
		next, sem := w.wakeNext, w.sem
		w.wakeNext = nil
		w.status.Store(lwNotWaiting) // from here on w may run and reuse its node
		sem <- struct{}{}
		w = next
	}
}

// checkQueue verifies the queue's links and that the wait-until-free
// waiters form its prefix (invariants builds). The list lock is held.
func (l *LWLock) checkQueue() {
	var prev *lwWaiter
	seenOther := false
	for w := l.head; w != nil; w = w.next {
		if w.prev != prev {
			panic("locks: LWLock wait queue links corrupted")
		}
		if w.status.Load() != lwWaiting {
			panic("locks: LWLock waiter on the queue is not waiting")
		}
		if w.mode == LWWaitUntilFree {
			if seenOther {
				panic("locks: wait-until-free LWLock waiter behind a lock waiter")
			}
		} else {
			seenOther = true
		}
		prev = w
	}
	if l.tail != prev {
		panic("locks: LWLock wait queue tail corrupted")
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
