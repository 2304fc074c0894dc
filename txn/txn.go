package txn

import (
	"context"
	"fmt"
	"time"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/wal"
)

type txnState uint8

const (
	txnIdle   txnState = iota // never begun, or ended
	txnActive                 // between Begin and Commit/Abort
)

// Txn is one session's transaction state (the parts of PostgreSQL's
// TransactionState and PGPROC that the session owns): its xid, command
// counter, isolation level and snapshot. A session keeps one Txn and
// passes it to Begin for every transaction; the snapshot buffer is reused,
// so steady-state transactions allocate nothing here.
//
// The zero value is ready for Begin. A Txn must not be copied, and belongs
// to its session's goroutine: no method is safe for concurrent use.
type Txn struct {
	_     noCopy
	m     *Manager
	p     *locks.Proc
	slot  *procState
	state txnState
	iso   Isolation

	xid       Xid
	xidLocked bool // holds ExclusiveLock on TransactionTag(xid)
	cid       CommandID

	// Subtransactions (subxact.go): subs[i] is nest level i+2 (the top
	// level is the Txn itself); subXids lists, ascending, the xids of every
	// subtransaction that is open or was released into an open level —
	// not those rolled back — so that xid, subXids is the set of the
	// transaction's own xids (TransactionIdIsCurrentTransactionId).
	subs    []subState
	subXids []Xid

	snap     Snapshot
	haveSnap bool // snap belongs to the current transaction
	snapOK   bool // snap holds some earlier snapshot (candidate for reuse)
	// snapshots kept for portals (held.go), and the oldest xmin among
	// them (InvalidXid: none)
	held     []*HeldSnapshot
	heldXmin Xid

	// The write-ahead log (xlog.go): how the commit waits, the files its
	// record lists, and what the commit has done so far.
	commitOpts    CommitOptions
	commitOptsSet bool
	dropAtCommit  []uint32
	dropAtAbort   []uint32
	commitWritten bool    // CommitRecord ran: the record is inserted and flushed
	delayingCkpt  bool    // between the commit record and the commit log
	asyncLSN      wal.LSN // the commit record, if it is not flushed yet
}

// Begin starts a new transaction on t for backend p (StartTransaction).
// No xid is assigned and no snapshot taken yet. It panics if t's previous
// transaction has not ended or p's number does not fit the ProcArray.
func (m *Manager) Begin(t *Txn, p *locks.Proc, iso Isolation) {
	if t.state == txnActive {
		panic("txn: Begin while a transaction is in progress")
	}
	n := int(p.Number())
	if n < 0 || n >= m.maxProcs {
		panic(fmt.Sprintf("txn: proc number %d does not fit MaxProcs %d", n, m.maxProcs))
	}
	if t.m != m || t.p != p {
		t.m, t.p, t.slot = m, p, &m.procs[n].procState
		t.snapOK = false
		if cap(t.snap.Xip) < m.maxProcs {
			t.snap.Xip = make([]Xid, 0, m.maxProcs)
		}
	}
	t.state = txnActive
	t.iso = iso
	t.xid = InvalidXid
	t.xidLocked = false
	t.cid = FirstCommandID
	t.haveSnap = false
	t.subs = t.subs[:0]
	t.subXids = t.subXids[:0]
	t.resetLog()
}

func (t *Txn) resetLog() {
	t.dropAtCommit = t.dropAtCommit[:0]
	t.dropAtAbort = t.dropAtAbort[:0]
	t.commitWritten, t.delayingCkpt, t.asyncLSN = false, false, 0
}

// InProgress reports whether t is between Begin and Commit/Abort.
func (t *Txn) InProgress() bool { return t.state == txnActive }

// Isolation returns the transaction's isolation level.
func (t *Txn) Isolation() Isolation { return t.iso }

// Proc returns the backend the transaction runs in.
func (t *Txn) Proc() *locks.Proc { return t.p }

// Xid returns the top-level transaction's xid, InvalidXid until the first
// write (GetTopTransactionIdIfAny). After Commit or Abort it still returns
// the xid of the transaction that ended, until the next Begin. Tuples
// written inside a subtransaction carry CurrentXid instead.
func (t *Txn) Xid() Xid { return t.xid }

// CurrentXid returns the xid of the innermost open (sub)transaction,
// InvalidXid if it has none yet (GetCurrentTransactionIdIfAny). Without
// subtransactions it is Xid.
func (t *Txn) CurrentXid() Xid {
	if n := len(t.subs); n > 0 {
		return t.subs[n-1].xid
	}
	return t.xid
}

// CommandID returns the current command id (GetCurrentCommandId).
func (t *Txn) CommandID() CommandID { return t.cid }

// CommandCounterIncrement advances the command id, so the next statement
// sees this one's writes. Call it after each statement that wrote (lockd
// does not track "command id used" itself). PostgreSQL's limit of 2^32-2
// commands per transaction is not checked.
func (t *Txn) CommandCounterIncrement() { t.cid++ }

// AssignXid gives the current (sub)transaction an xid if it has none
// (GetCurrentTransactionId → AssignTransactionId) and returns it. As in
// PostgreSQL, parents are given theirs first: the top-level transaction,
// then every enclosing subtransaction outwards in, so a parent's xid is
// always older than its children's. A top-level xid is taken under
// XidGenLock exclusive and published in the ProcArray before the lock is
// released, so every later snapshot sees it running; a subtransaction's
// xid is not published there but recorded with its parent in the
// subtransaction map (SubTransSetParent) under the same lock. Then the
// (sub)transaction takes ExclusiveLock on its TransactionTag, which others
// wait on (WaitFor); the lock is taken unlogged (locks.LockOptions), so it
// survives locks.Manager.ReleaseSince — a subtransaction's lock is given
// back by AbortSub, and the others are kept until the transaction ends.
// Idempotent within a (sub)transaction.
//
// Errors: 54000 when xids are exhausted (lockd does not freeze tuples),
// an I/O error persisting the next-xid bound, or the lock manager's error
// (53200 out of shared memory). If the xid was assigned but the lock could
// not be taken, the xid stays assigned; the caller aborts the transaction.
func (t *Txn) AssignXid() (Xid, error) {
	parent, err := t.AssignTopXid()
	if err != nil {
		return InvalidXid, err
	}
	for i := range t.subs {
		sub := &t.subs[i]
		if sub.xid == InvalidXid {
			xid, err := t.m.newXid(t.p, parent)
			if err != nil {
				return InvalidXid, err
			}
			sub.xid = xid
			t.subXids = append(t.subXids, xid)
			t.slot.stats.subXidsAssigned.Add(1)
		}
		if !sub.xidLocked {
			if err := t.lockXid(sub.xid); err != nil {
				return InvalidXid, err
			}
			sub.xidLocked = true
		}
		parent = sub.xid
	}
	return parent, nil
}

// AssignTopXid is GetTopTransactionId: it gives the top-level transaction
// its xid (and the lock on it) if it has none yet, and returns it,
// without assigning xids to open subtransactions. Sequences use it: a
// nextval that PostgreSQL WAL-logs makes the transaction take an xid so
// that its commit flushes the log. Errors as AssignXid.
func (t *Txn) AssignTopXid() (Xid, error) {
	if t.state != txnActive {
		panic("txn: AssignXid outside a transaction")
	}
	if t.xid == InvalidXid {
		xid, err := t.m.newXid(t.p, InvalidXid)
		if err != nil {
			return InvalidXid, err
		}
		t.xid = xid
		t.slot.stats.xidsAssigned.Add(1)
	}
	if !t.xidLocked {
		if err := t.lockXid(t.xid); err != nil {
			return InvalidXid, err
		}
		t.xidLocked = true
	}
	return t.xid, nil
}

// lockXid is XactLockTableInsert: it never waits, nobody else can hold it.
func (t *Txn) lockXid(xid Xid) error {
	return t.m.locks.Lock(context.Background(), t.p, locks.TransactionTag(uint32(xid)),
		locks.ExclusiveLock, locks.LockOptions{Unlogged: true})
}

// newXid is GetNewTransactionId: it takes the next xid, extends the commit
// log if the xid starts a page, and publishes the xid — a top-level one in
// p's ProcArray entry, a subtransaction's (parent valid) in the
// subtransaction map — all under XidGenLock exclusive.
func (m *Manager) newXid(p *locks.Proc, parent Xid) (Xid, error) {
	m.xidGen.Acquire(p, locks.LWExclusive)
	xid := Xid(m.nextXid.Load())
	for m.dir != "" && !Precedes(xid, m.xidLimit) && m.refill != nil {
		// Assignment outran the background write of the bound: wait for
		// it rather than write the file concurrently.
		done := m.refill
		m.xidGen.Release(p)
		<-done
		m.xidGen.Acquire(p, locks.LWExclusive)
		xid = Xid(m.nextXid.Load())
	}
	if !Precedes(xid, xidStopLimit) {
		m.xidGen.Release(p)
		return InvalidXid, pgerr.New(pgerr.ProgramLimitExceeded,
			"database is not accepting commands that assign new transaction IDs to avoid wraparound data loss").
			WithHint("lockd does not freeze tuples; dump the data and initialize a new data directory.")
	}
	if m.dir != "" {
		if !Precedes(xid, m.xidLimit) {
			// The first assignment after Open or Close, or a failed
			// background write: move the bound now.
			limit := xid + xidReserve
			if err := writeNextXid(m.fs, m.dir, limit); err != nil {
				m.xidGen.Release(p)
				return InvalidXid, err
			}
			m.xidLimit = limit
		}
		if m.refill == nil && !Precedes(xid+xidReserve/2, m.xidLimit) {
			m.startRefill(m.xidLimit + xidReserve)
		}
	}
	m.clog.extend(p, xid)
	// Publish before advancing nextXid: a snapshot that loads nextXid >
	// xid is then guaranteed to find xid in the array (or find it gone
	// because it already ended), or its parent in the subtransaction map.
	if parent.IsValid() {
		m.subtrans.set(xid, parent)
	} else {
		m.xids[p.Number()].Store(uint32(xid))
	}
	m.nextXid.Store(uint32(xid + 1))
	m.xidGen.Release(p)
	return xid, nil
}

// WaitWrites returns once no background write of the next-xid bound is
// running. An immediate shutdown, which does not Close the Manager, calls
// it so that no write outlives the server (or the test's data directory).
func (m *Manager) WaitWrites() {
	m.xidGen.Acquire(nil, locks.LWExclusive)
	m.waitRefill()
	m.xidGen.Release(nil)
}

// waitRefill returns once no background write of the bound runs. Caller
// holds XidGenLock exclusive (as the nil proc); waitRefill releases it
// while it waits and holds it again when it returns.
func (m *Manager) waitRefill() {
	for m.refill != nil {
		done := m.refill
		m.xidGen.Release(nil)
		<-done
		m.xidGen.Acquire(nil, locks.LWExclusive)
	}
}

// startRefill writes limit as the next-xid bound in the background and
// then raises xidLimit to it. Caller holds XidGenLock exclusive. A failed
// write is logged and leaves xidLimit where it was, so the assignment
// that reaches it writes the bound itself and reports the error.
func (m *Manager) startRefill(limit Xid) {
	done := make(chan struct{})
	m.refill = done
	go func() {
		err := writeNextXid(m.fs, m.dir, limit)
		m.xidGen.Acquire(nil, locks.LWExclusive)
		if err != nil {
			m.logger.Warn("could not persist the next-xid bound", "next_xid", uint32(limit), "error", err)
		} else if Precedes(m.xidLimit, limit) {
			m.xidLimit = limit
		}
		m.refill = nil
		close(done)
		m.xidGen.Release(nil)
	}()
}

// Commit ends the transaction as committed (CommitTransaction's xact part):
// if it has an xid, its commit record goes to the log (and is flushed per
// the commit options, see xlog.go), then the commit log records it and the
// xids of all its subtransactions that were not rolled back committed, in
// one XactSLRU exclusive hold so that readers see the whole tree commit at
// once (TransactionIdCommitTree), and then the xid leaves the ProcArray
// (ProcArrayEndTransaction, possibly through a group clear). Open
// subtransactions are committed with it. Only then may the caller release the
// transaction's locks with locks.Manager.ReleaseTransactionLocks, which
// wakes WaitFor callers. A read-only transaction only withdraws its
// advertised xmin. Commit on a transaction that is not in progress does
// nothing. The error is nil: a failure to flush the log is a PANIC.
func (t *Txn) Commit() error {
	t.end(Committed)
	return nil
}

// Abort ends the transaction as aborted, with all its subtransactions;
// otherwise as Commit. It is safe to call on a transaction that has
// already ended (error clean-up paths).
func (t *Txn) Abort() { t.end(Aborted) }

func (t *Txn) end(st XidStatus) {
	if t.state != txnActive {
		return
	}
	if t.commitWritten && st != Committed {
		// The commit record is durable: the transaction committed.
		st = Committed
	}
	if t.xid != InvalidXid {
		if st == Committed {
			if !t.commitWritten {
				t.writeCommitRecord(nil, false)
			}
			t.m.clog.setTreeStatusLSN(t.p, t.xid, t.subXids, st, t.asyncLSN)
			if t.delayingCkpt {
				t.m.wal.EndDelayCheckpoint(t.p)
				t.delayingCkpt = false
			}
		} else {
			t.writeAbortRecord(t.xid, t.subXids, t.dropAtAbort)
			t.m.clog.setTreeStatus(t.p, t.xid, t.subXids, st)
		}
		t.m.endXid(t)
	} else {
		t.slot.xmin.Store(0)
	}
	if st == Committed {
		t.slot.stats.commits.Add(1)
	} else {
		t.slot.stats.aborts.Add(1)
	}
	if t.slot.oldestMulti.Load() != 0 {
		t.slot.oldestMulti.Store(0)
	}
	t.state = txnIdle
	t.haveSnap = false
	clear(t.held)
	t.held, t.heldXmin = t.held[:0], InvalidXid
	t.subs = t.subs[:0]
	t.subXids = t.subXids[:0]
	t.resetLog()
}

// xactLockRetryDelay is how long WaitFor sleeps before re-locking an xid
// that is still running although its lock was free (XactLockTableWait's
// 1 ms pg_usleep).
const xactLockRetryDelay = time.Millisecond

// WaitFor waits until transaction xid has ended (XactLockTableWait): it
// takes ShareLock on TransactionTag(xid) — which blocks while xid runs, so
// the session shows wait event Lock/transactionid and pg_locks shows the
// request — and releases it at once. If xid still counts as running after
// that, it is a subtransaction that was released into a parent still
// running (or a transaction between publishing its xid and taking its
// lock): WaitFor then waits for the topmost parent the same way, the
// second time round after a millisecond's sleep, as PostgreSQL does.
// Waiting for one of the transaction's own xids, or a special xid, returns
// nil at once.
//
// Errors are the lock manager's: 40P01 deadlock detected, 55P03 lock
// timeout (lockTimeout > 0), or context.Cause(ctx).
func (t *Txn) WaitFor(ctx context.Context, xid Xid, lockTimeout time.Duration) error {
	return t.WaitForOptions(ctx, xid, locks.LockOptions{LockTimeout: lockTimeout})
}

// WaitForOptions is WaitFor with the session's lock options (lock_timeout
// and deadlock_timeout). NoWait and Session are ignored.
func (t *Txn) WaitForOptions(ctx context.Context, xid Xid, opt locks.LockOptions) error {
	if !xid.IsNormal() || t.isCurrent(xid) {
		return nil
	}
	opt.NoWait, opt.Session = false, false
	for first := true; ; first = false {
		tag := locks.TransactionTag(uint32(xid))
		err := t.m.locks.Lock(ctx, t.p, tag, locks.ShareLock, opt)
		if err != nil {
			return err
		}
		t.m.locks.Unlock(t.p, tag, locks.ShareLock, false)
		if !t.m.isRunning(t.p, xid) {
			return nil
		}
		if !first {
			timer := time.NewTimer(xactLockRetryDelay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return context.Cause(ctx)
			case <-timer.C:
			}
		}
		xid = t.m.subtrans.topmost(xid)
	}
}
