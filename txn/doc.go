// Package txn owns transactions: transaction ids and their assignment, the
// ProcArray of running xids and the MVCC snapshots built from it, the commit
// log (pg_xact) and its persistence, subtransactions (SAVEPOINT) and their
// parent map (pg_subtrans, in memory), multixacts (pg_multixact) and the
// row-lock strengths they record, and tuple visibility
// (heapam_visibility.c for the cases lockd has: no speculative insertion).
// See subxact.go for how subtransaction xids are assigned, seen by others
// and ended, multixact.go for the multixact store and xmax.go for the
// xmax bits and what a new locker or updater makes of them.
//
// # What it must not do
//
// txn imports only the standard library, lockd/locks and lockd/pgerr. It
// knows nothing of pages, buffers, SQL or settings: storage/ keeps
// xmin/xmax/cmin/cmax in its tuples and hands txn a TupleHeader; settings
// reach it through setters (SetGroupUpdate). It does not release
// heavyweight locks — the caller calls locks.Manager.ReleaseTransactionLocks
// after Commit or Abort, as PostgreSQL's CommitTransaction releases locks
// after ProcArrayEndTransaction — and it does not log in steady state.
//
// # Concurrency contract
//
// A Manager is shared by all sessions; a Txn belongs to one session's
// goroutine and its *locks.Proc. The shared state is guarded as in
// PostgreSQL:
//
//   - XidGen (LWLock, exclusive): nextXid and the persisted next-xid bound.
//     An xid is published in the ProcArray under it, before nextXid moves.
//   - ProcArray (LWLock): shared to build a snapshot, test IsRunning or
//     compute OldestXmin; exclusive to remove an ending transaction's xid.
//     The running xids are a dense array indexed by proc number, so a
//     snapshot is one contiguous scan.
//   - XactSLRU (LWLock): shared to read a commit status, exclusive to set
//     one. Commit sets the status before it leaves the ProcArray, so anyone
//     who sees an xid as not running finds its final status in the log.
//     A transaction's xid and its subtransactions' are set in one
//     exclusive hold.
//   - The subtransaction map (xid → parent): written under XidGen
//     exclusive when a subtransaction gets its xid, read without a lock.
//   - MultiXactGen and MultiXactMemberSLRU (LWLocks, multixact.go):
//     creation of a multixact takes both, exclusive, in that order;
//     reading its members takes the second shared. They are taken while
//     the caller holds a buffer content lock, never the other way round.
//
// Every LWLock acquisition is made on behalf of the caller's Proc and so
// appears in its per-tranche LWLock stats and wait events. The counters of
// this package (Stats) are per proc number, padded and single-writer.
//
// # Group xid clearing
//
// At commit a transaction with an xid must clear it from the ProcArray
// under ProcArrayLock exclusive, while every snapshot takes the same lock
// shared: under pgbench with many clients that exclusive acquisition is
// the hottest lock wait in PostgreSQL up to 9.5. PostgreSQL 9.6 (commit
// 0e141c0fb, Amit Kapila and Robert Haas) made one backend clear many
// xids in one acquisition; lockd reproduces it behind
// procarray_group_update (SetGroupUpdate):
//
//  1. Try ConditionalAcquire(ProcArrayLock, exclusive). If it succeeds,
//     clear the own xid, release, done (Stats.ClearDirect).
//  2. With group update off, block in Acquire (Stats.ClearLocked) — the
//     pre-9.6 behaviour, for comparison.
//  3. Otherwise record the xid in the proc's slot, set groupMember, and
//     push the proc number on a lock-free list (Manager.groupFirst) with a
//     CAS loop; each slot's groupNext links to the previous head. Proc
//     numbers rather than pointers make the list immune to ABA: a proc
//     can be on the list at most once, because it does not return before
//     it has been taken off.
//  4. The proc that found the list empty is the leader. It blocks in
//     Acquire(ProcArrayLock, exclusive) — while it waits, others keep
//     joining — then swaps the head with "empty", taking the whole batch
//     atomically; later arrivals start the next group. It clears every
//     member's xid and xmin, releases the lock, and only then wakes the
//     members: for each it reads groupNext, resets it, clears groupMember
//     and sends one token on the member's channel. The read comes first
//     because a woken member may immediately commit again and re-link.
//  5. Every other member is a follower: it sleeps on its own one-slot
//     channel with wait event IPC/ProcArrayGroupUpdate. Exactly one token
//     is sent per membership, after the clearing, so the follower neither
//     misses a wake-up nor sees a stale one (PostgreSQL's semaphore is
//     shared with other waits, hence its loop and re-posted wake-ups; the
//     dedicated channel makes them unnecessary).
//
// The leader records the group size (Stats.GroupSizes); followers count
// Stats.GroupFollowers. As in PostgreSQL a commit returns only once its
// xid is gone from the ProcArray, so "committed and returned" implies
// "invisible as running to every later snapshot" in both modes.
//
// # Persistence
//
// A transaction with an xid ends with a commit or abort record in the
// write-ahead log (Config.WAL; xlog.go): the commit record is flushed per
// synchronous_commit before the commit log is set, and replay (RedoXact)
// sets it again after a crash. The commit log is kept whole in memory (2
// bits per xid) and written at Checkpoint (after the log is flushed past
// it) as PostgreSQL-style 32-page segment files in DataDir/pg_xact, each
// replaced atomically. The next-xid bound (pg_xact/nextxid) is written and
// fsynced before assignment passes it, 8192 xids at a time, so a crash
// never reuses an xid; the write runs in the background once half of the
// 8192 are used, outside XidGenLock. EndRecovery (Open itself, without a
// WAL) marks every xid below the bound that the log shows in progress as
// aborted. Multixacts are logged when made.
package txn
