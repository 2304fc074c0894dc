package txn

import (
	"context"
	"fmt"
	"time"

	"lockd/locks"
	"lockd/pgerr"
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

	snap     Snapshot
	haveSnap bool // snap belongs to the current transaction
	snapOK   bool // snap holds some earlier snapshot (candidate for reuse)
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
}

// InProgress reports whether t is between Begin and Commit/Abort.
func (t *Txn) InProgress() bool { return t.state == txnActive }

// Isolation returns the transaction's isolation level.
func (t *Txn) Isolation() Isolation { return t.iso }

// Proc returns the backend the transaction runs in.
func (t *Txn) Proc() *locks.Proc { return t.p }

// Xid returns the transaction's xid, InvalidXid until the first write
// (GetTopTransactionIdIfAny). After Commit or Abort it still returns the
// xid of the transaction that ended, until the next Begin.
func (t *Txn) Xid() Xid { return t.xid }

// CommandID returns the current command id (GetCurrentCommandId).
func (t *Txn) CommandID() CommandID { return t.cid }

// CommandCounterIncrement advances the command id, so the next statement
// sees this one's writes. Call it after each statement that wrote (lockd
// does not track "command id used" itself). PostgreSQL's limit of 2^32-2
// commands per transaction is not checked.
func (t *Txn) CommandCounterIncrement() { t.cid++ }

// AssignXid gives the transaction an xid if it has none (AssignTransactionId)
// and returns it: the next xid is taken under XidGenLock exclusive and
// published in the ProcArray before the lock is released, so every later
// snapshot sees it running; then the transaction takes ExclusiveLock on its
// TransactionTag, which others wait on (WaitFor). Idempotent within a
// transaction.
//
// Errors: 54000 when xids are exhausted (lockd does not freeze tuples),
// an I/O error persisting the next-xid bound, or the lock manager's error
// (53200 out of shared memory). If the xid was assigned but the lock could
// not be taken, the xid stays assigned; the caller aborts the transaction.
func (t *Txn) AssignXid() (Xid, error) {
	if t.state != txnActive {
		panic("txn: AssignXid outside a transaction")
	}
	if t.xid == InvalidXid {
		xid, err := t.m.newXid(t.p)
		if err != nil {
			return InvalidXid, err
		}
		t.xid = xid
		t.slot.stats.xidsAssigned.Add(1)
	}
	if !t.xidLocked {
		// XactLockTableInsert: never waits, nobody else can hold it.
		err := t.m.locks.Lock(context.Background(), t.p, locks.TransactionTag(uint32(t.xid)),
			locks.ExclusiveLock, locks.LockOptions{})
		if err != nil {
			return InvalidXid, err
		}
		t.xidLocked = true
	}
	return t.xid, nil
}

// newXid is GetNewTransactionId: it takes the next xid, extends the commit
// log if the xid starts a page, and publishes the xid in p's ProcArray
// entry, all under XidGenLock exclusive.
func (m *Manager) newXid(p *locks.Proc) (Xid, error) {
	m.xidGen.Acquire(p, locks.LWExclusive)
	xid := Xid(m.nextXid.Load())
	if !Precedes(xid, xidStopLimit) {
		m.xidGen.Release(p)
		return InvalidXid, pgerr.New(pgerr.ProgramLimitExceeded,
			"database is not accepting commands that assign new transaction IDs to avoid wraparound data loss").
			WithHint("lockd does not freeze tuples; dump the data and initialize a new data directory.")
	}
	if m.dir != "" && !Precedes(xid, m.xidLimit) {
		limit := xid + xidReserve
		if err := writeNextXid(m.dir, limit); err != nil {
			m.xidGen.Release(p)
			return InvalidXid, err
		}
		m.xidLimit = limit
	}
	m.clog.extend(p, xid)
	// Publish before advancing nextXid: a snapshot that loads nextXid >
	// xid is then guaranteed to find xid in the array (or find it gone
	// because it already ended).
	m.xids[p.Number()].Store(uint32(xid))
	m.nextXid.Store(uint32(xid + 1))
	m.xidGen.Release(p)
	return xid, nil
}

// Commit ends the transaction as committed (CommitTransaction's xact part):
// if it has an xid, the commit log records it committed (XactSLRU
// exclusive) and then the xid leaves the ProcArray (ProcArrayEndTransaction,
// possibly through a group clear). Only then may the caller release the
// transaction's locks with locks.Manager.ReleaseTransactionLocks, which
// wakes WaitFor callers. A read-only transaction only withdraws its
// advertised xmin. Commit on a transaction that is not in progress does
// nothing. The error is reserved for a future write-ahead log; it is nil.
func (t *Txn) Commit() error {
	t.end(Committed)
	return nil
}

// Abort ends the transaction as aborted; otherwise as Commit. It is safe
// to call on a transaction that has already ended (error clean-up paths).
func (t *Txn) Abort() { t.end(Aborted) }

func (t *Txn) end(st XidStatus) {
	if t.state != txnActive {
		return
	}
	if t.xid != InvalidXid {
		t.m.clog.setStatus(t.p, t.xid, st)
		t.m.endXid(t)
	} else {
		t.slot.xmin.Store(0)
	}
	if st == Committed {
		t.slot.stats.commits.Add(1)
	} else {
		t.slot.stats.aborts.Add(1)
	}
	t.state = txnIdle
	t.haveSnap = false
}

// xactLockRetryDelay is how long WaitFor sleeps before re-locking an xid
// that is still running although its lock was free (XactLockTableWait's
// 1 ms pg_usleep).
const xactLockRetryDelay = time.Millisecond

// WaitFor waits until transaction xid has ended (XactLockTableWait): it
// takes ShareLock on TransactionTag(xid) — which blocks while xid runs, so
// the session shows wait event Lock/transactionid and pg_locks shows the
// request — and releases it at once. If xid still runs after that (it was
// between publishing its xid and taking its lock) it tries again after a
// millisecond. Waiting for the transaction's own xid, or a special xid,
// returns nil at once.
//
// Errors are the lock manager's: 40P01 deadlock detected, 55P03 lock
// timeout (lockTimeout > 0), or context.Cause(ctx).
func (t *Txn) WaitFor(ctx context.Context, xid Xid, lockTimeout time.Duration) error {
	return t.WaitForOptions(ctx, xid, locks.LockOptions{LockTimeout: lockTimeout})
}

// WaitForOptions is WaitFor with the session's lock options (lock_timeout
// and deadlock_timeout). NoWait and Session are ignored.
func (t *Txn) WaitForOptions(ctx context.Context, xid Xid, opt locks.LockOptions) error {
	if !xid.IsNormal() || xid == t.xid {
		return nil
	}
	opt.NoWait, opt.Session = false, false
	tag := locks.TransactionTag(uint32(xid))
	for {
		err := t.m.locks.Lock(ctx, t.p, tag, locks.ShareLock, opt)
		if err != nil {
			return err
		}
		t.m.locks.Unlock(t.p, tag, locks.ShareLock, false)
		if !t.m.isRunning(t.p, xid) {
			return nil
		}
		timer := time.NewTimer(xactLockRetryDelay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return context.Cause(ctx)
		case <-timer.C:
		}
	}
}
