// Package locks re-implements PostgreSQL's locking subsystem so that its
// scalability tunables can be changed and observed while a workload runs:
// lightweight locks (LWLocks) with switchable wake-up policies, and the
// heavyweight lock manager with its partitioned shared lock table, per-backend
// fast-path slots, wait queues, deadlock detector and timeouts.
//
// # What it owns
//
//   - Proc: the per-backend state a session owns for its whole life — proc
//     number, pid, the wait channel it parks on, fast-path slots, the local
//     lock table, its wait event (for pg_stat_activity) and its counters.
//   - LWLock: PostgreSQL's lightweight lock, one atomic state word plus a FIFO
//     wait queue; see the LWLock type for the state bits and the wake-up
//     rules (SetWakeupRule: lwlock_wakeup_rule, PostgreSQL 9.5+'s or 8.4's;
//     SetWakePolicy: wake_up_all_waiters, lwlock_wakeup_limit). Besides
//     Acquire/Release, the WAL's wait-until-free calls: AcquireOrWait
//     (group commit) and WaitForVar/UpdateVar/ReleaseClearVar on an
//     LWLockVar (the insertion locks' insertingAt).
//   - Manager: the heavyweight lock manager — eight lock modes and the
//     conflict table, lock tags, lock_partitions partitions guarded by
//     LockManager LWLocks, wait queues granted in PostgreSQL's order, the
//     fast path (fastpath_lock_slots, strong-lock counters), the deadlock
//     detector (deadlock_timeout), lock_timeout, log_lock_waits, pg_locks
//     (Status) and pg_blocking_pids (BlockingPIDs).
//   - The exact client-visible errors: *Error with SQLSTATE 40P01 (deadlock
//     detected, with PostgreSQL's per-process detail lines), 55P03 (lock
//     timeout) and 53200 (out of shared memory); ErrLockNotAvailable for
//     NOWAIT, whose message the caller words.
//   - Counters, per backend and summed on demand: LWLock acquisitions, waits,
//     wait time, wake-ups and futile wake-ups per tranche and mode (the
//     wait-until-free calls' sleeps as mode LWWaitUntilFree), how those
//     calls ended per tranche;
//     heavyweight grants by path, waits, wait time, deadlocks and lock
//     timeouts per lock type and mode; fast-path hits and misses (group full,
//     strong lock) and transfers. Closed backends fold their counters into
//     Manager totals so sums never go backwards.
//
// Design notes sit next to the code they describe: the LWLock type
// (lwlock.go: state word, barging, wake policies and why RELEASE_OK makes
// them safe), the Manager type (manager.go: partitions, lock ordering, wait
// queue order), fastpath.go (slots, groups, strong-lock counters and the
// memory-ordering argument) and deadlock.go (hard and soft edges, queue
// rearrangement).
//
// # What it must not do
//
// It knows nothing of SQL, storage, settings files or the network, and
// imports no other lockd package (only the standard library). It never
// decides when a lock is taken — sql/, storage/ and txn/ do that, at the
// points PostgreSQL does. Tunables arrive through setters (SetWakeupRule,
// SetWakePolicy, SetTrackTiming, Manager.SetDeadlockTimeout,
// SetLogLockWaits, SetFastPathSlots), which the settings' assign hooks call;
// with no calls the package runs on PostgreSQL's defaults, so it stays
// benchmarkable alone.
// Hot paths (LWLock acquire/release, fast-path lock/unlock, steady-state
// shared-table lock/unlock) do not allocate, log, or touch a shared counter.
//
// # Concurrency contract
//
// A Proc belongs to one goroutine (its session). Methods that take a *Proc —
// LWLock.Acquire/Release, Manager.Lock/Unlock/Release*/BeginVirtualXact and
// Proc.Close — must be called from that goroutine; a Proc waits for at most
// one lock at a time. Other goroutines may call a Proc's PID, Number,
// VirtualXID, WaitEvent, WaitEventCode, Stats and AddStats at any time.
// Every Manager method is safe for concurrent use. Package-level setters
// are atomic and take effect on the next release (wake rule and policy),
// the next wait (timing, deadlock timeout) or the next NewProc (fast-path
// slots).
//
// # Process-wide settings
//
// The LWLock wake-up rule and policy (SetWakeupRule, SetWakePolicy) and the
// timing switch (SetTrackTiming) are package-level, not Manager fields,
// because most LWLocks have no Manager: the buffer pool's mapping and
// content locks, ProcArray, the SLRUs and the WAL locks live in storage/,
// txn/ and wal/ as plain values, and an LWLock's zero value must work. A
// per-Manager policy would need a pointer in every LWLock (one per buffer)
// and a dependent load on every release that wakes; the package-level word
// is one load on that path, and none on the uncontended one. It is also
// how PostgreSQL scopes them: a sighup setting holds for the whole server,
// and one server is one lockd process. The price is that servers embedded
// in one process (tests) share these three: the last assign hook to run
// wins, so a test that changes them puts the old values back. Everything
// sized or tuned per lock table (partitions, capacity, fast-path slots,
// deadlock_timeout, log_lock_waits) stays in the Manager.
//
// Heavyweight lock waits honour a context (its cause is returned), a
// per-call lock timeout and deadlock detection; LWLock waits, as in
// PostgreSQL, are not interruptible and must be short. Never wait for a
// heavyweight lock while holding an LWLock.
//
// Build with -tags invariants to enable expensive self-checks of the lock
// table's counters and of LWLock state transitions.
package locks
