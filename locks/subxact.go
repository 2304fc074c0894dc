package locks

// Subtransactions (PostgreSQL's per-subtransaction resource owners).
//
// PostgreSQL remembers, for every lock a backend holds, how many times each
// resource owner holds it: a subtransaction's owner collects what it
// acquires, AbortSubTransaction releases exactly those counts, and
// CommitSubTransaction hands them to the parent's owner. lockd keeps the
// same information as an acquisition log per backend: while at least one
// subtransaction is open (Mark was called and not yet closed), every
// transaction-level count that Lock grants is appended to p.lockLog, and an
// Unlock of such a count removes its entry. A LockMark is a position in the
// log plus the nesting depth it was taken at, so
//
//   - ReleaseSince(p, mark) gives back the counts logged after the mark
//     (ROLLBACK TO: a lock taken both before and after the savepoint is held
//     once more afterwards, one taken only after it is released) and closes
//     every level opened since;
//   - KeepSince(p, mark) closes those levels keeping the counts (RELEASE):
//     they stay in the log, so rolling back an enclosing savepoint still
//     releases them, as the parent's owner then holds them.
//
// Session-level locks and locks taken with LockOptions.Unlogged are never
// logged: PostgreSQL's session locks belong to no transaction, and txn takes
// its xid locks unlogged because it assigns a parent's xid while a child
// runs (AssignTransactionId switches to the parent's owner) and releases a
// subtransaction's xid lock itself when it aborts.
//
// Cost: with no subtransaction open the log is off, and Lock and Unlock pay
// one owner-only integer test. With one open, a grant is an append to a
// slice the Proc reuses, and Unlock usually removes the last entry (locks
// taken and given back at once — transaction-id waits, extension locks —
// are last in the log).

// LockMark is a position in a backend's lock acquisition log, returned by
// Mark. The zero value is the mark of an empty log at depth 0. It is
// meaningful only for the Proc and transaction it was taken in.
type LockMark struct {
	pos   int32 // len(p.lockLog) at Mark
	depth int32 // p.marks before Mark
	prev  int32 // p.markPos before Mark
}

// Mark opens a subtransaction level for p (StartSubTransaction's new
// resource owner): from now on every transaction-level lock count p is
// granted is logged until the level is closed by ReleaseSince or
// KeepSince with the returned mark (or the transaction ends).
func (m *Manager) Mark(p *Proc) LockMark {
	mk := LockMark{pos: int32(len(p.lockLog)), depth: p.marks, prev: p.markPos}
	p.marks++
	p.markPos = mk.pos
	return mk
}

// ReleaseSince releases every transaction-level lock count p was granted
// since mark and closes the levels opened since (AbortSubTransaction's
// ResourceOwnerRelease). Counts taken before mark stay, so a lock held
// before and after the mark keeps one count less than it had. Locks whose
// last count goes are released from the fast-path slots or the shared
// table, waking waiters. Unlogged and session-level counts are untouched.
func (m *Manager) ReleaseSince(p *Proc, mark LockMark) {
	if int(mark.pos) > len(p.lockLog) || mark.depth >= p.marks {
		panic("locks: ReleaseSince with a mark of a closed level or another transaction")
	}
	for i := len(p.lockLog) - 1; i >= int(mark.pos); i-- {
		ll := p.lockLog[i]
		if ll == nil {
			continue // given back by Unlock
		}
		p.lockLog[i] = nil
		if ll.nTx <= 0 {
			panic("locks: logged lock " + ll.tag.Describe() + " has no transaction-level count")
		}
		ll.nTx--
		if ll.nTx+ll.nSession > 0 {
			continue
		}
		p.local.remove(ll)
		m.release(p, ll)
		p.freeLocalLock(ll)
	}
	p.lockLog = p.lockLog[:mark.pos]
	p.marks, p.markPos = mark.depth, mark.prev
	if p.marks == 0 {
		clear(p.lockLog)
		p.lockLog = p.lockLog[:0]
	}
}

// KeepSince closes the levels opened since mark keeping their locks
// (CommitSubTransaction's transfer to the parent's resource owner): the
// counts stay logged, and an enclosing level's ReleaseSince releases them.
// Closing the outermost level stops logging.
func (m *Manager) KeepSince(p *Proc, mark LockMark) {
	if mark.depth >= p.marks {
		panic("locks: KeepSince with a mark of a closed level")
	}
	p.marks, p.markPos = mark.depth, mark.prev
	if p.marks == 0 {
		clear(p.lockLog)
		p.lockLog = p.lockLog[:0]
	}
}

// logGrant records a transaction-level count just granted, when a
// subtransaction is open.
func (p *Proc) logGrant(ll *localLock) {
	p.lockLog = append(p.lockLog, ll)
}

// unlogGrant forgets the newest log entry of ll after an Unlock of one of
// its transaction-level counts. The last entry of the innermost level is
// dropped; any other becomes a nil tombstone, because shifting entries would
// move them across the positions of open marks. A count taken before every
// open mark has no entry; then nothing changes.
func (p *Proc) unlogGrant(ll *localLock) {
	last := len(p.lockLog) - 1
	for i := last; i >= 0; i-- {
		if p.lockLog[i] != ll {
			continue
		}
		p.lockLog[i] = nil
		if i == last && i >= int(p.markPos) {
			p.lockLog = p.lockLog[:last]
		}
		return
	}
}

// resetLog forgets the log at transaction end.
func (p *Proc) resetLog() {
	if p.marks == 0 && len(p.lockLog) == 0 {
		return
	}
	clear(p.lockLog)
	p.lockLog = p.lockLog[:0]
	p.marks, p.markPos = 0, 0
}
