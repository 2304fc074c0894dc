package locks

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Config sizes a Manager: the settings that need a restart. Zero fields
// take PostgreSQL's defaults. Reloadable settings are not here; they reach
// the Manager through its setters, which a server calls from the settings'
// assign hooks: SetFastPathSlots (fastpath_lock_slots, -1 = derive from
// max_locks_per_transaction, 0 = disabled), SetDeadlockTimeout,
// SetLogLockWaits. Until a setter is called the Manager runs on
// PostgreSQL's defaults (fast-path slots derived, deadlock_timeout 1s).
type Config struct {
	MaxConnections         int          // max_connections; default 100
	MaxLocksPerTransaction int          // max_locks_per_transaction; default 64
	Partitions             int          // lock_partitions, a power of two ≤ 1024; default 16
	Logger                 *slog.Logger // log_lock_waits messages; nil discards
}

// NumAuxProcs is the number of proc numbers beyond MaxConnections (for
// background workers such as a checkpointer).
const NumAuxProcs = 8

// MaxPartitions bounds lock_partitions.
const MaxPartitions = 1024

// Manager is the heavyweight lock manager: PostgreSQL's shared lock table
// (split into partitions, each guarded by a LockManager LWLock), the
// strong-lock counters of the fast path, the array of backends (procs), and
// the deadlock detector.
//
// Lock ordering: a backend holds at most one partition lock at a time,
// except the deadlock detector and Status, which take all of them in
// partition order. A backend's fast-path LWLock may be held while taking a
// partition lock (strong-lock transfer), never the other way round.
//
// Wait queues are granted in PostgreSQL's order: a request that conflicts
// with a granted mode of another backend, or with a mode somebody already
// waits for, queues at the tail — newcomers never barge past a conflicting
// waiter — except that a backend already holding a mode that a waiter
// wants to be free of is inserted ahead of that waiter (and granted at once
// if nothing granted or queued before that point conflicts). On release
// the queue is scanned in order and each waiter that conflicts neither with
// granted modes nor with an earlier still-waiting request is granted before
// it is woken.
//
// All methods are safe for concurrent use; methods taking a *Proc must be
// called from that Proc's goroutine.
type Manager struct {
	maxConns, maxLocks int
	logger             *slog.Logger
	parts              []partition
	partMask           uint32

	strong [strongPartitions]atomic.Uint32 // FastPathStrongRelationLocks

	procs []atomic.Pointer[Proc] // by proc number

	fpSlots         atomic.Int64
	deadlockTimeout atomic.Int64
	logLockWaits    atomic.Bool

	reg struct {
		sync.Mutex
		free   []int32         // free proc numbers, lowest last
		byPID  map[int32]*Proc // live procs
		closed Stats           // counters of closed procs
	}

	det detector // guarded by all partition locks
}

// NewManager builds a Manager; it fails for a partition count that is not a
// power of two in 1..MaxPartitions or for negative sizes.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = 100
	}
	if cfg.MaxLocksPerTransaction == 0 {
		cfg.MaxLocksPerTransaction = 64
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = 16
	}
	if cfg.MaxConnections < 0 || cfg.MaxLocksPerTransaction < 0 {
		return nil, fmt.Errorf("locks: negative max_connections or max_locks_per_transaction")
	}
	if n := cfg.Partitions; n < 1 || n > MaxPartitions || n&(n-1) != 0 {
		return nil, fmt.Errorf("locks: lock_partitions must be a power of two between 1 and %d, got %d",
			MaxPartitions, n)
	}
	m := &Manager{
		maxConns: cfg.MaxConnections,
		maxLocks: cfg.MaxLocksPerTransaction,
		logger:   cfg.Logger,
		parts:    make([]partition, cfg.Partitions),
		partMask: uint32(cfg.Partitions - 1),
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	capacity := int64(cfg.MaxLocksPerTransaction) * int64(cfg.MaxConnections)
	n := int64(cfg.Partitions)
	for i := range m.parts {
		part := &m.parts[i]
		part.lock.Init(TrancheLockManager)
		part.locks = make(map[LockTag]*lockObj)
		part.procLocks = make(map[procLockKey]*procLock)
		share := capacity / n
		if int64(i) < capacity%n {
			share++
		}
		part.lockQuota.Store(share)
		part.procLockQuota.Store(2 * share)
	}
	nprocs := cfg.MaxConnections + NumAuxProcs
	m.procs = make([]atomic.Pointer[Proc], nprocs)
	m.reg.byPID = make(map[int32]*Proc)
	for i := nprocs - 1; i >= 0; i-- {
		m.reg.free = append(m.reg.free, int32(i))
	}
	m.fpSlots.Store(-1) // fastpath_lock_slots' default until SetFastPathSlots
	m.deadlockTimeout.Store(int64(time.Second))
	return m, nil
}

func (m *Manager) part(hash uint32) *partition { return &m.parts[hash&m.partMask] }

// Partitions returns the number of lock partitions.
func (m *Manager) Partitions() int { return len(m.parts) }

// PartitionLock returns the LockManager LWLock of partition i (for tests
// and experiments that want to observe it).
func (m *Manager) PartitionLock(i int) *LWLock { return &m.parts[i].lock }

// NewProc registers a backend with pid pid and gives it a proc number from
// the free list. It returns ErrTooManyProcs when MaxConnections+NumAuxProcs
// procs are live. The fast-path slot count is the one in force now.
func (m *Manager) NewProc(pid int32) (*Proc, error) {
	groups := fastPathGroups(int(m.fpSlots.Load()), m.maxLocks)
	m.reg.Lock()
	defer m.reg.Unlock()
	if len(m.reg.free) == 0 {
		return nil, ErrTooManyProcs
	}
	n := m.reg.free[len(m.reg.free)-1]
	m.reg.free = m.reg.free[:len(m.reg.free)-1]
	p := newProc(m, n, pid, groups)
	m.reg.byPID[pid] = p
	m.procs[n].Store(p)
	return p, nil
}

func (m *Manager) unregister(p *Proc) {
	m.reg.Lock()
	defer m.reg.Unlock()
	p.stats.addTo(&m.reg.closed)
	if m.reg.byPID[p.pid] == p {
		delete(m.reg.byPID, p.pid)
	}
	m.procs[p.number].Store(nil)
	m.reg.free = append(m.reg.free, p.number)
}

// ProcByPID returns the live backend with that pid, or nil.
func (m *Manager) ProcByPID(pid int32) *Proc {
	m.reg.Lock()
	defer m.reg.Unlock()
	return m.reg.byPID[pid]
}

// ForEachProc calls fn for every live backend, in proc number order. fn
// runs without any lock held and may only use the Proc's concurrency-safe
// methods (PID, Number, VirtualXID, WaitEvent, Stats).
func (m *Manager) ForEachProc(fn func(*Proc)) {
	for i := range m.procs {
		if p := m.procs[i].Load(); p != nil {
			fn(p)
		}
	}
}

// Stats returns the sum of the counters of every backend, live or closed.
// Consecutive calls never go backwards.
func (m *Manager) Stats() *Stats {
	s := new(Stats)
	m.reg.Lock()
	defer m.reg.Unlock()
	*s = m.reg.closed
	for i := range m.procs {
		if p := m.procs[i].Load(); p != nil {
			p.stats.addTo(s)
		}
	}
	return s
}

// SetFastPathSlots sets fastpath_lock_slots for procs created afterwards:
// -1 derives it from max_locks_per_transaction, 0 disables the fast path,
// n > 0 rounds up to a multiple of 16 (at most 16384).
func (m *Manager) SetFastPathSlots(n int) { m.fpSlots.Store(int64(n)) }

// FastPathSlots returns the slot count new procs get.
func (m *Manager) FastPathSlots() int {
	return fastPathGroups(int(m.fpSlots.Load()), m.maxLocks) * fpSlotsPerGroup
}

// SetDeadlockTimeout sets deadlock_timeout for waits that start afterwards.
func (m *Manager) SetDeadlockTimeout(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	m.deadlockTimeout.Store(int64(d))
}

// SetLogLockWaits sets log_lock_waits.
func (m *Manager) SetLogLockWaits(on bool) { m.logLockWaits.Store(on) }

// Capacity returns the number of lock objects the shared table can hold
// (max_locks_per_transaction × max_connections).
func (m *Manager) Capacity() int { return m.maxLocks * m.maxConns }

// WaiterCount returns the number of requests for tag in the shared lock
// table, holders included — PostgreSQL's LockWaiterCount (lock->nRequested),
// which RelationExtensionLockWaiterCount uses to size group extension. It
// reads the lock object under its partition's LockManager LWLock in shared
// mode and returns 0 if there is none. Locks held only through the fast
// path are not counted (as in PostgreSQL, which uses this for relation
// extension locks, never fast-path eligible).
func (m *Manager) WaiterCount(tag LockTag) int {
	part := m.part(tag.hash())
	part.lock.Acquire(nil, LWShared)
	n := 0
	if lock := part.locks[tag]; lock != nil {
		n = int(lock.nRequested)
	}
	part.lock.Release(nil)
	return n
}

// HasWaiters reports whether some request for tag waits in the shared
// lock table (PostgreSQL's autovacuum gives up a table when a backend
// waits behind its lock). It reads the lock object under its partition's
// LockManager LWLock in shared mode.
func (m *Manager) HasWaiters(tag LockTag) bool {
	part := m.part(tag.hash())
	part.lock.Acquire(nil, LWShared)
	n := int32(0)
	if lock := part.locks[tag]; lock != nil {
		n = lock.nWaiting
	}
	part.lock.Release(nil)
	return n > 0
}
