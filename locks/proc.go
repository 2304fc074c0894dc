package locks

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// semCapacity is the wait channel's buffer. At most two wake-ups are ever
// outstanding for one backend: one LWLock wake-up (it is queued on at most
// one LWLock) and one heavyweight grant (it waits for at most one lock), so
// a send never blocks.
const semCapacity = 2

// Heavyweight wait states (PROC_WAIT_STATUS_*).
const (
	waitNone int32 = iota
	waitWaiting
	waitGranted
	waitFailed
)

// Proc is the per-backend state of one session (PostgreSQL's PGPROC plus
// the backend-private parts of the lock manager): its proc number and pid,
// the wait channel it parks on for both LWLocks and heavyweight locks, its
// fast-path slots (guarded by its own LockFastPath LWLock), its local lock
// table, its wait event and its counters.
//
// A Proc belongs to one goroutine, its session: every method except PID,
// Number, VirtualXID, WaitEvent, WaitEventCode and Stats must be called
// from that goroutine. Other backends touch a Proc only through the fields
// documented as guarded by a lock or atomic. The zero value is not usable;
// get one from Manager.NewProc and Close it at disconnection. A Proc must not
// be copied.
type Proc struct {
	_      noCopy
	m      *Manager
	number int32
	pid    int32
	sem    chan struct{}
	lw     lwWaiter // LWLock queue node; uses sem
	stats  *procStats
	closed bool // owner only

	heldLW []heldLW // LWLocks held, in acquisition order; owner only

	waitEvent atomic.Uint32 // a WaitEvent, read by pg_stat_activity
	lxid      atomic.Uint32 // local transaction id of the current vxid; written under fp.lock

	// Heavyweight wait state, guarded by the partition lock of waitLock
	// (waitStatus and waitStart are atomic so the owner and pg_locks can
	// read them; they are written under that partition lock).
	waitLock     *lockObj
	waitProcLock *procLock
	waitMode     LockMode
	waitNext     *Proc
	waitPrev     *Proc
	waitStatus   atomic.Int32
	waitStart    atomic.Int64 // unix ns; 0 when not waiting

	// Backend-private state (owner only).
	//
	// lockLog, marks and markPos are the subtransaction acquisition log
	// (subxact.go): logged transaction-level grants, the number of open
	// levels (logging is on while it is > 0) and the log position of the
	// innermost open level.
	lockLog   []*localLock
	marks     int32
	markPos   int32
	local     localTable
	freeLocal *localLock
	relBuf    []*localLock
	dlTimer   *time.Timer
	ltTimer   *time.Timer
	dlKick    chan struct{} // forces a deadlock check now (tests)
	dlChecks  atomic.Int32  // deadlock checks run (tests)

	_  [cacheLine]byte
	fp fastPath // own cache lines: the hot fast-path lock and slots
	_  [cacheLine - unsafe.Sizeof(fastPath{})%cacheLine]byte
}

func newProc(m *Manager, number, pid int32, fpGroups int) *Proc {
	p := &Proc{
		m:      m,
		number: number,
		pid:    pid,
		sem:    make(chan struct{}, semCapacity),
		stats:  new(procStats),
		heldLW: make([]heldLW, 0, 32),
		dlKick: make(chan struct{}, 1),
	}
	p.lw.sem = p.sem
	p.dlTimer = time.NewTimer(time.Hour)
	p.dlTimer.Stop()
	p.ltTimer = time.NewTimer(time.Hour)
	p.ltTimer.Stop()
	p.fp.init(fpGroups)
	p.local.init(localTableMinSize)
	return p
}

// PID returns the backend pid given to NewProc (pg_locks.pid).
func (p *Proc) PID() int32 { return p.pid }

// Number returns the proc number (PostgreSQL's ProcNumber), the first half
// of the backend's virtual transaction id.
func (p *Proc) Number() int32 { return p.number }

// VirtualXID returns the current virtual transaction id; lxid is 0 when no
// virtual transaction is active.
func (p *Proc) VirtualXID() (procNo int32, lxid uint32) { return p.number, p.lxid.Load() }

// FastPathSlots returns the number of fast-path slots this backend has.
func (p *Proc) FastPathSlots() int { return int(p.fp.groups) * fpSlotsPerGroup }

// WaitEvent returns wait_event_type and wait_event ("" and "" when not
// waiting). Safe to call from any goroutine.
func (p *Proc) WaitEvent() (typ, name string) {
	e := WaitEvent(p.waitEvent.Load())
	return e.Type(), e.Name()
}

// WaitEventCode returns the current wait event code. Safe from any goroutine.
func (p *Proc) WaitEventCode() WaitEvent { return WaitEvent(p.waitEvent.Load()) }

// SetWaitEvent reports that the backend starts waiting for e
// (pgstat_report_wait_start), e.g. WaitEventPgSleep during pg_sleep.
func (p *Proc) SetWaitEvent(e WaitEvent) { p.waitEvent.Store(uint32(e)) }

// ClearWaitEvent reports the end of a wait (pgstat_report_wait_end).
func (p *Proc) ClearWaitEvent() { p.waitEvent.Store(0) }

// Stats returns a snapshot of this backend's counters. Safe from any goroutine.
func (p *Proc) Stats() *Stats {
	s := new(Stats)
	p.stats.addTo(s)
	return s
}

// AddStats adds this backend's counters into dst (for scrapers that sum
// many backends without allocating). Safe from any goroutine.
func (p *Proc) AddStats(dst *Stats) { p.stats.addTo(dst) }

// Close releases every heavyweight lock p holds (transaction and session
// level, and its virtual transaction), any LWLock it still holds, folds its
// counters into the Manager's totals and frees its proc number. Calling
// Close twice is a no-op.
func (p *Proc) Close() {
	if p.closed {
		return
	}
	p.ReleaseAllLWLocks()
	m := p.m
	m.ReleaseTransactionLocks(p)
	m.ReleaseSessionLocks(p, false)
	p.closed = true
	p.dlTimer.Stop()
	p.ltTimer.Stop()
	p.waitEvent.Store(0)
	m.unregister(p)
}

// wakeGranted marks a waiter granted and wakes it (ProcWakeup). Caller holds
// the partition lock of the lock the waiter was queued on.
func (p *Proc) wakeGranted() {
	p.waitLock, p.waitProcLock = nil, nil
	p.waitStart.Store(0)
	p.waitStatus.Store(waitGranted)
	p.sem <- struct{}{}
}

// localLock is PostgreSQL's LOCALLOCK: the backend's private record of one
// (object, mode) it holds, with re-entrancy counts split into transaction
// and session level. It exists only while one of the counts is non-zero.
type localLock struct {
	tag         LockTag
	mode        LockMode
	hash        uint32
	nTx         int32
	nSession    int32
	fastPath    bool      // granted in a fast-path slot (may since have been transferred)
	holdsStrong bool      // counted in the strong-lock counters
	procLock    *procLock // shared-table proclock, nil for fast-path grants
	nextFree    *localLock
}

func (p *Proc) newLocal(tag LockTag, mode LockMode, hash uint32) *localLock {
	ll := p.freeLocal
	if ll != nil {
		p.freeLocal = ll.nextFree
		ll.nextFree = nil
	} else {
		ll = new(localLock)
	}
	ll.tag, ll.mode, ll.hash = tag, mode, hash
	return ll
}

func (p *Proc) freeLocalLock(ll *localLock) {
	*ll = localLock{nextFree: p.freeLocal}
	p.freeLocal = ll
}
