package txn

import (
	"slices"

	"lockd/locks"
)

// Subtransactions (PostgreSQL's xact.c subtransaction states, subtrans.c
// and the parts of procarray.c that know about subxids).
//
// A subtransaction (SAVEPOINT) is a nest level above the top-level
// transaction. It gets its own xid lazily, at its first write, after its
// parents got theirs (AssignXid); tuples it writes carry that xid. The xid
// is recorded with its parent in the subtransaction map (subtrans.go) but
// not in the ProcArray: snapshots list top-level xids only, and a subxid is
// mapped to its topmost parent before it is looked up in a snapshot's Xip
// or the ProcArray — what PostgreSQL does once a backend's subxid cache has
// overflowed, here always. So to every other backend a subxid runs while
// its top-level transaction runs, unless it was rolled back.
//
// Ending a subtransaction:
//
//   - CommitSub (RELEASE) only pops the level: its xid — and those of
//     subtransactions released into it — now belong to the parent. Its
//     ExclusiveLock on its TransactionTag stays until the top-level
//     transaction ends (PostgreSQL moves it to the parent's resource
//     owner); the commit log is written when the top level commits, with
//     the whole tree at once.
//   - AbortSub (ROLLBACK TO) marks the level's xids aborted in the commit
//     log at once — their tuples are then invisible to everybody, this
//     transaction included — and releases their transaction locks, which
//     wakes anyone waiting for them. Other heavyweight locks taken in the
//     subtransaction are the caller's to release (locks.Manager.ReleaseSince),
//     after AbortSub, as PostgreSQL releases locks after recording the abort.
//
// The command counter is not reset: PostgreSQL's command ids count the
// statements of the whole top-level transaction.

// subState is one open subtransaction.
type subState struct {
	xid       Xid  // InvalidXid until its first write
	xidLocked bool // holds ExclusiveLock on TransactionTag(xid)
	first     int  // len(Txn.subXids) when the level began
}

// BeginSub starts a subtransaction (StartSubTransaction) one level above
// the current one. No xid is assigned yet. It panics outside a
// transaction. No allocation once the Txn has been used at this depth.
func (t *Txn) BeginSub() {
	if t.state != txnActive {
		panic("txn: BeginSub outside a transaction")
	}
	t.subs = append(t.subs, subState{first: len(t.subXids)})
}

// NestLevel is the current transaction nesting level
// (GetCurrentTransactionNestLevel): 1 for the top level, 2 in the first
// subtransaction, and so on; 0 outside a transaction.
func (t *Txn) NestLevel() int {
	if t.state != txnActive {
		return 0
	}
	return 1 + len(t.subs)
}

// CommitSub ends the innermost subtransaction as committed into its parent
// (CommitSubTransaction). Its xids stay the transaction's own, its xid lock
// stays held, and its changes become visible to others when the top level
// commits. It panics if no subtransaction is open.
func (t *Txn) CommitSub() {
	if len(t.subs) == 0 {
		panic("txn: CommitSub without a subtransaction")
	}
	t.subs = t.subs[:len(t.subs)-1]
	t.slot.stats.subCommits.Add(1)
}

// AbortSub ends the innermost subtransaction as aborted
// (AbortSubTransaction): its xid and those of the subtransactions released
// into it are marked aborted in the commit log under one XactSLRU
// exclusive hold, stop being the transaction's own, and their
// ExclusiveLocks on their TransactionTags are released. It panics if no
// subtransaction is open.
func (t *Txn) AbortSub() {
	n := len(t.subs)
	if n == 0 {
		panic("txn: AbortSub without a subtransaction")
	}
	sub := t.subs[n-1]
	t.subs = t.subs[:n-1]
	t.slot.stats.subAborts.Add(1)
	xids := t.subXids[sub.first:]
	if len(xids) == 0 {
		return
	}
	// RecordTransactionAbort for a subtransaction: the record names the
	// level's xid (or, if it never got one, its first released child's)
	// and the others as its children.
	t.writeAbortRecord(xids[0], xids[1:], nil)
	t.m.clog.setTreeStatus(t.p, InvalidXid, xids, Aborted)
	for i, x := range xids {
		// Every released child locked its xid at assignment; only the
		// level itself may have failed to (AssignXid's error path).
		if i > 0 || sub.xidLocked {
			t.m.locks.Unlock(t.p, locks.TransactionTag(uint32(x)), locks.ExclusiveLock, false)
		}
	}
	t.subXids = t.subXids[:sub.first]
}

// isCurrent is TransactionIdIsCurrentTransactionId: xid is the top-level
// xid or a subtransaction xid of this transaction that was not rolled
// back.
func (t *Txn) isCurrent(xid Xid) bool {
	if xid == InvalidXid {
		return false
	}
	if xid == t.xid {
		return true
	}
	if len(t.subXids) == 0 {
		return false
	}
	_, found := slices.BinarySearch(t.subXids, xid)
	return found
}

// IsCurrent reports whether xid is one of the transaction's own xids
// (TransactionIdIsCurrentTransactionId): the top-level xid or that of a
// subtransaction that is open or was released, not rolled back.
func (t *Txn) IsCurrent(xid Xid) bool { return t.isCurrent(xid) }

// TopmostXid maps a subtransaction xid to its top-level transaction's xid
// (SubTransGetTopmostTransaction); other xids map to themselves. Xids of
// subtransactions whose top level ended long ago (below every running
// transaction and snapshot, see Checkpoint) map to themselves too.
func (m *Manager) TopmostXid(xid Xid) Xid { return m.subtrans.topmost(xid) }
