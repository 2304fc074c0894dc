package locks

import "sync/atomic"

// Counters live in each backend's Proc (one writer, atomic fields) and are
// summed only when somebody reads them, so a lock experiment never measures
// the contention of its own counters. Closed procs fold their counters into
// the Manager's totals, so sums never go backwards.

type lwCounters struct {
	acquisitions  atomic.Uint64
	waits         atomic.Uint64
	waitTimeNs    atomic.Uint64
	wakeups       atomic.Uint64
	futileWakeups atomic.Uint64
	spinDelays    atomic.Uint64
}

type lockCounters struct {
	fastPath     atomic.Uint64
	shared       atomic.Uint64
	waits        atomic.Uint64
	waitTimeNs   atomic.Uint64
	deadlocks    atomic.Uint64
	lockTimeouts atomic.Uint64
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
	lw   [MaxTranches][NumLWModes]lwCounters
	lock [NumLockTagTypes][NumLockModes]lockCounters
	fp   fpCounters
}

// LWLockStats are counters for one tranche and mode.
type LWLockStats struct {
	Acquisitions  uint64 // successful acquisitions (conditional ones included)
	Waits         uint64 // acquisitions that slept at least once
	WaitTimeNs    uint64 // time slept, when SetTrackTiming(true)
	Wakeups       uint64 // wake-ups received (summed over backends = wake-ups issued)
	FutileWakeups uint64 // wake-ups after which the lock was found taken again
	SpinDelays    uint64 // yields while spinning on the wait-list lock bit
}

// LockStats are heavyweight-lock counters for one lock type and mode.
type LockStats struct {
	FastPath     uint64 // grants through the fast path
	Shared       uint64 // grants through the shared lock table (immediate or after a wait)
	Waits        uint64 // requests that had to sleep
	WaitTimeNs   uint64 // time slept, when SetTrackTiming(true)
	Deadlocks    uint64 // requests aborted with 40P01
	LockTimeouts uint64 // requests aborted by lock_timeout
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
// [Tranche][LWMode] and Lock by [LockTagType][LockMode].
type Stats struct {
	LWLock   [MaxTranches][NumLWModes]LWLockStats
	Lock     [NumLockTagTypes][NumLockModes]LockStats
	FastPath FastPathStats
}

// Add adds o into s.
func (s *Stats) Add(o *Stats) {
	for t := range s.LWLock {
		for m := range s.LWLock[t] {
			a, b := &s.LWLock[t][m], &o.LWLock[t][m]
			a.Acquisitions += b.Acquisitions
			a.Waits += b.Waits
			a.WaitTimeNs += b.WaitTimeNs
			a.Wakeups += b.Wakeups
			a.FutileWakeups += b.FutileWakeups
			a.SpinDelays += b.SpinDelays
		}
	}
	for t := range s.Lock {
		for m := range s.Lock[t] {
			a, b := &s.Lock[t][m], &o.Lock[t][m]
			a.FastPath += b.FastPath
			a.Shared += b.Shared
			a.Waits += b.Waits
			a.WaitTimeNs += b.WaitTimeNs
			a.Deadlocks += b.Deadlocks
			a.LockTimeouts += b.LockTimeouts
		}
	}
	s.FastPath.Acquisitions += o.FastPath.Acquisitions
	s.FastPath.FallbacksFull += o.FastPath.FallbacksFull
	s.FastPath.FallbacksStrong += o.FastPath.FallbacksStrong
	s.FastPath.TransfersDone += o.FastPath.TransfersDone
	s.FastPath.TransfersOut += o.FastPath.TransfersOut
}

// addTo adds the live counters of ps into dst (atomic loads; safe while the
// owner keeps counting).
func (ps *procStats) addTo(dst *Stats) {
	for t := range ps.lw {
		for m := range ps.lw[t] {
			c, d := &ps.lw[t][m], &dst.LWLock[t][m]
			d.Acquisitions += c.acquisitions.Load()
			d.Waits += c.waits.Load()
			d.WaitTimeNs += c.waitTimeNs.Load()
			d.Wakeups += c.wakeups.Load()
			d.FutileWakeups += c.futileWakeups.Load()
			d.SpinDelays += c.spinDelays.Load()
		}
	}
	for t := range ps.lock {
		for m := range ps.lock[t] {
			c, d := &ps.lock[t][m], &dst.Lock[t][m]
			d.FastPath += c.fastPath.Load()
			d.Shared += c.shared.Load()
			d.Waits += c.waits.Load()
			d.WaitTimeNs += c.waitTimeNs.Load()
			d.Deadlocks += c.deadlocks.Load()
			d.LockTimeouts += c.lockTimeouts.Load()
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
