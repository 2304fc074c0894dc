package locks

import (
	"sync/atomic"
	"time"
)

// Counters live in each backend's Proc (one writer, atomic fields) and are
// summed only when somebody reads them, so a lock experiment never measures
// the contention of its own counters. Closed procs fold their counters into
// the Manager's totals, so sums never go backwards.

// WaitBucketBounds are the upper bounds (inclusive) of the wait-time
// histogram buckets, 1 µs to 10 s in 1-2.5-5 steps; a longer wait falls
// in the last bucket, WaitBuckets[len(WaitBucketBounds)].
var WaitBucketBounds = [...]time.Duration{
	1 * time.Microsecond, 2500 * time.Nanosecond, 5 * time.Microsecond,
	10 * time.Microsecond, 25 * time.Microsecond, 50 * time.Microsecond,
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	1 * time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	1 * time.Second, 2500 * time.Millisecond, 5 * time.Second,
	10 * time.Second,
}

// NumWaitBuckets is the number of wait-time buckets, the open-ended one
// included.
const NumWaitBuckets = len(WaitBucketBounds) + 1

// waitBucket returns the index of the bucket d falls in.
func waitBucket(d time.Duration) int {
	for i, b := range WaitBucketBounds {
		if d <= b {
			return i
		}
	}
	return len(WaitBucketBounds)
}

// waitTiming is the time and the distribution of timed waits.
type waitTiming struct {
	ns      atomic.Uint64
	buckets [NumWaitBuckets]atomic.Uint64
}

func (w *waitTiming) observe(d time.Duration) {
	w.ns.Add(uint64(d))
	w.buckets[waitBucket(d)].Add(1)
}

func (w *waitTiming) addTo(ns *uint64, buckets *[NumWaitBuckets]uint64) {
	*ns += w.ns.Load()
	for i := range w.buckets {
		buckets[i] += w.buckets[i].Load()
	}
}

type lwCounters struct {
	acquisitions  atomic.Uint64
	waits         atomic.Uint64
	waitTime      waitTiming
	wakeups       atomic.Uint64
	futileWakeups atomic.Uint64
	spinDelays    atomic.Uint64
}

// lwOutcomeCounters count how the wait-until-free calls of one tranche
// ended.
type lwOutcomeCounters struct {
	acquireOrWaitAcquired atomic.Uint64
	acquireOrWaitFreed    atomic.Uint64
	waitForVarFree        atomic.Uint64
	waitForVarUpdated     atomic.Uint64
}

type lockCounters struct {
	fastPath     atomic.Uint64
	shared       atomic.Uint64
	waits        atomic.Uint64
	waitTime     waitTiming
	deadlocks    atomic.Uint64
	lockTimeouts atomic.Uint64
	// granted waits that outlasted deadlock_timeout while log_lock_waits
	// was on, and their duration in whole milliseconds (PostgreSQL 19's
	// pg_stat_lock waits and wait_time)
	loggedWaits  atomic.Uint64
	loggedWaitMs atomic.Uint64
}

// Fast-path acquisitions are not counted separately: they are the sum of
// the relation lock counters' fastPath fields.
type fpCounters struct {
	fallbackFull   atomic.Uint64
	fallbackStrong atomic.Uint64
	transfersDone  atomic.Uint64
	transfersOut   atomic.Uint64
}

type procStats struct {
	lw         [MaxTranches][NumLWModes]lwCounters
	lwOutcomes [MaxTranches]lwOutcomeCounters
	lock       [NumLockTagTypes][NumLockModes]lockCounters
	fp         fpCounters
}

// LWLockStats are counters for one tranche and mode. For mode
// LWWaitUntilFree, which nobody holds a lock in, Acquisitions and
// SpinDelays stay 0 and the others count the sleeps of AcquireOrWait and
// WaitForVar calls.
type LWLockStats struct {
	Acquisitions uint64 // successful acquisitions (conditional ones and AcquireOrWait's included)
	Waits        uint64 // acquisitions (or wait-until-free calls) that slept at least once
	WaitTimeNs   uint64 // time slept, when SetTrackTiming(true)
	// WaitBuckets counts the timed waits by duration, one count per
	// bucket of WaitBucketBounds (not cumulative); their sum is the
	// number of waits that WaitTimeNs covers.
	WaitBuckets   [NumWaitBuckets]uint64
	Wakeups       uint64 // wake-ups received (summed over backends = wake-ups issued)
	FutileWakeups uint64 // wake-ups after which the lock was found taken again
	SpinDelays    uint64 // yields while spinning on the wait-list lock bit
}

// LWLockWaitOutcomes count, for one tranche, how the wait-until-free
// calls ended: whether AcquireOrWait took the lock or waited for it to be
// freed, and whether WaitForVar returned because the lock was free or
// because its holder updated the variable.
type LWLockWaitOutcomes struct {
	AcquireOrWaitAcquired uint64 // took the lock (at once or on the re-check after queueing)
	AcquireOrWaitFreed    uint64 // slept until the lock was released and returned without it
	WaitForVarFree        uint64 // returned true: the lock was (or became) free of exclusive holders
	WaitForVarUpdated     uint64 // returned false: the holder had set the variable to a new value
}

func (a *LWLockWaitOutcomes) add(b *LWLockWaitOutcomes) {
	a.AcquireOrWaitAcquired += b.AcquireOrWaitAcquired
	a.AcquireOrWaitFreed += b.AcquireOrWaitFreed
	a.WaitForVarFree += b.WaitForVarFree
	a.WaitForVarUpdated += b.WaitForVarUpdated
}

// LockStats are heavyweight-lock counters for one lock type and mode.
type LockStats struct {
	FastPath     uint64                 // grants through the fast path
	Shared       uint64                 // grants through the shared lock table (immediate or after a wait)
	Waits        uint64                 // requests that had to sleep
	WaitTimeNs   uint64                 // time slept, when SetTrackTiming(true)
	WaitBuckets  [NumWaitBuckets]uint64 // timed waits by duration, as in LWLockStats
	Deadlocks    uint64                 // requests aborted with 40P01
	LockTimeouts uint64                 // requests aborted by lock_timeout
	// LoggedWaits counts the granted waits that lasted longer than
	// deadlock_timeout while log_lock_waits was on (the waits PostgreSQL
	// 19's pg_stat_lock counts), LoggedWaitMs their total duration in
	// milliseconds, each wait truncated to whole milliseconds.
	LoggedWaits  uint64
	LoggedWaitMs uint64
}

// FastPathStats are a backend's fast-path counters.
type FastPathStats struct {
	Acquisitions    uint64 // weak relation locks granted in the backend's slots
	FallbacksFull   uint64 // eligible requests sent to the shared table: the relation's group was full
	FallbacksStrong uint64 // eligible requests sent to the shared table: a strong lock was counted
	TransfersDone   uint64 // fast-path entries this backend moved to the shared table as a strong locker
	TransfersOut    uint64 // entries of this backend moved to the shared table by strong lockers
}

// Stats is a plain-value snapshot of counters; index LWLock by
// [Tranche][LWMode], LWLockOutcomes by Tranche and Lock by
// [LockTagType][LockMode].
type Stats struct {
	LWLock         [MaxTranches][NumLWModes]LWLockStats
	LWLockOutcomes [MaxTranches]LWLockWaitOutcomes
	Lock           [NumLockTagTypes][NumLockModes]LockStats
	FastPath       FastPathStats
}

// Add adds o into s.
func (s *Stats) Add(o *Stats) {
	for t := range s.LWLock {
		for m := range s.LWLock[t] {
			a, b := &s.LWLock[t][m], &o.LWLock[t][m]
			a.Acquisitions += b.Acquisitions
			a.Waits += b.Waits
			a.WaitTimeNs += b.WaitTimeNs
			addBuckets(&a.WaitBuckets, &b.WaitBuckets)
			a.Wakeups += b.Wakeups
			a.FutileWakeups += b.FutileWakeups
			a.SpinDelays += b.SpinDelays
		}
		s.LWLockOutcomes[t].add(&o.LWLockOutcomes[t])
	}
	for t := range s.Lock {
		for m := range s.Lock[t] {
			a, b := &s.Lock[t][m], &o.Lock[t][m]
			a.FastPath += b.FastPath
			a.Shared += b.Shared
			a.Waits += b.Waits
			a.WaitTimeNs += b.WaitTimeNs
			addBuckets(&a.WaitBuckets, &b.WaitBuckets)
			a.Deadlocks += b.Deadlocks
			a.LockTimeouts += b.LockTimeouts
			a.LoggedWaits += b.LoggedWaits
			a.LoggedWaitMs += b.LoggedWaitMs
		}
	}
	s.FastPath.Acquisitions += o.FastPath.Acquisitions
	s.FastPath.FallbacksFull += o.FastPath.FallbacksFull
	s.FastPath.FallbacksStrong += o.FastPath.FallbacksStrong
	s.FastPath.TransfersDone += o.FastPath.TransfersDone
	s.FastPath.TransfersOut += o.FastPath.TransfersOut
}

func addBuckets(a, b *[NumWaitBuckets]uint64) {
	for i := range a {
		a[i] += b[i]
	}
}

// addTo adds the live counters of ps into dst (atomic loads; safe while the
// owner keeps counting).
func (ps *procStats) addTo(dst *Stats) {
	for t := range ps.lw {
		for m := range ps.lw[t] {
			c, d := &ps.lw[t][m], &dst.LWLock[t][m]
			d.Acquisitions += c.acquisitions.Load()
			d.Waits += c.waits.Load()
			c.waitTime.addTo(&d.WaitTimeNs, &d.WaitBuckets)
			d.Wakeups += c.wakeups.Load()
			d.FutileWakeups += c.futileWakeups.Load()
			d.SpinDelays += c.spinDelays.Load()
		}
		c, d := &ps.lwOutcomes[t], &dst.LWLockOutcomes[t]
		d.AcquireOrWaitAcquired += c.acquireOrWaitAcquired.Load()
		d.AcquireOrWaitFreed += c.acquireOrWaitFreed.Load()
		d.WaitForVarFree += c.waitForVarFree.Load()
		d.WaitForVarUpdated += c.waitForVarUpdated.Load()
	}
	for t := range ps.lock {
		for m := range ps.lock[t] {
			c, d := &ps.lock[t][m], &dst.Lock[t][m]
			d.FastPath += c.fastPath.Load()
			d.Shared += c.shared.Load()
			d.Waits += c.waits.Load()
			c.waitTime.addTo(&d.WaitTimeNs, &d.WaitBuckets)
			d.Deadlocks += c.deadlocks.Load()
			d.LockTimeouts += c.lockTimeouts.Load()
			d.LoggedWaits += c.loggedWaits.Load()
			d.LoggedWaitMs += c.loggedWaitMs.Load()
		}
	}
	for m := AccessShareLock; m <= RowExclusiveLock; m++ {
		dst.FastPath.Acquisitions += ps.lock[LockTagRelation][m].fastPath.Load()
	}
	dst.FastPath.FallbacksFull += ps.fp.fallbackFull.Load()
	dst.FastPath.FallbacksStrong += ps.fp.fallbackStrong.Load()
	dst.FastPath.TransfersDone += ps.fp.transfersDone.Load()
	dst.FastPath.TransfersOut += ps.fp.transfersOut.Load()
}

// trackTiming mirrors track_lock_timing (default on).
var trackTiming atomic.Bool

func init() { trackTiming.Store(true) }

// SetTrackTiming switches wait-time measurement on or off for every waiter
// that starts waiting afterwards. Waits are counted either way.
func SetTrackTiming(on bool) { trackTiming.Store(on) }

// TrackTiming reports the current setting.
func TrackTiming() bool { return trackTiming.Load() }
