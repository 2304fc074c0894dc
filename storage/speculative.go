package storage

import (
	"context"

	"lockd/locks"
	"lockd/txn"
)

// Speculative insertion: the heap half of INSERT ... ON CONFLICT
// (heap_insert with HEAP_INSERT_SPECULATIVE, heap_finish_speculative,
// heap_abort_speculative).
//
// An inserter that found no conflicting row in the arbiter unique indexes
// takes ExclusiveLock on a speculative insertion token
// (locks.SpeculativeTokenTag(xid, token); the SQL layer does that) and
// inserts its tuple with InsertSpeculative, which stores the token in the
// tuple's ctid: block = token, offset = SpecTokenOffset. Another backend
// that meets the tuple in a unique index while its inserter runs finds the
// token there (FetchAny passes the ctid) and waits for the token lock —
// for the insertion to be decided — rather than for the whole inserting
// transaction. The inserter then adds its index entries, checking the
// arbiter indexes and inserting into them as one step
// (IndexInsertUnchanged),
// and either
//
//   - finds no conflict: FinishSpeculative puts the tuple's own TID back
//     in its ctid, and from then on it is the ordinary new tuple of a
//     running transaction (others wait for that transaction's xid); or
//   - meets a conflicting entry: AbortSpeculative "super-deletes" the
//     tuple — its xmin becomes InvalidXid, so it is dead to everyone at
//     once, its index entries point at a dead tuple that VACUUM removes —
//     and the inserter starts over, this time waiting for the conflicting
//     inserter or updating its row;
//
// and releases the token lock.

// SpecTokenOffset is the ctid offset that marks a speculative insertion
// token in the block field (PostgreSQL's SpecTokenOffsetNumber).
const SpecTokenOffset uint16 = 0xfffe

// SpeculativeToken reports the token a tuple's ctid holds while its
// insertion is speculative.
func SpeculativeToken(ctid TID) (token uint32, ok bool) {
	if ctid.Offset == SpecTokenOffset {
		return ctid.Block, true
	}
	return 0, false
}

// InsertSpeculative is Insert for a tuple whose insertion may still be
// undone: its ctid holds token (see the comment above) until
// FinishSpeculative or AbortSpeculative.
func (s *Store) InsertSpeculative(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, data []byte, fillfactor int, token uint32) (TID, error) {
	return s.insert(ctx, p, t, rel, data, fillfactor, TID{Block: token, Offset: SpecTokenOffset})
}

// FinishSpeculative confirms the speculative insertion at tid: the ctid
// points at the tuple itself again (heap_finish_speculative).
func (s *Store) FinishSpeculative(p *locks.Proc, rel RelID, tid TID) error {
	return s.changeTuple(p, rel, tid, xlogHeapConfirm, func(tup []byte) bool {
		if _, ok := SpeculativeToken(tupleCtid(tup)); ok {
			setTupleCtid(tup, tid)
			return true
		}
		return false
	})
}

// AbortSpeculative kills the speculative insertion at tid made by t's
// current (sub)transaction (heap_abort_speculative): xmin = InvalidXid,
// which every visibility check reads as "never inserted" and VACUUM as
// dead, and the ctid points at the tuple itself.
func (s *Store) AbortSpeculative(p *locks.Proc, t *txn.Txn, rel RelID, tid TID) error {
	xid := t.CurrentXid()
	return s.changeTuple(p, rel, tid, xlogHeapInplace, func(tup []byte) bool {
		if txn.Xid(ne.Uint32(tup[thXmin:])) != xid {
			return false // not ours: leave it alone
		}
		ne.PutUint32(tup[thXmin:], uint32(txn.InvalidXid))
		flagsWord(tup).Or(uint32(txn.XminInvalid))
		setTupleCtid(tup, tid)
		return true
	})
}

// changeTuple runs fn on the tuple at tid under its page's exclusive
// content lock and, if fn reports a change, marks the buffer dirty and
// logs the tuple's new header as a record of type info; a missing tuple
// is skipped.
func (s *Store) changeTuple(p *locks.Proc, rel RelID, tid TID, info uint8, fn func(tup []byte) bool) error {
	r, err := s.relation(rel)
	if err != nil {
		return err
	}
	if tid.Block >= r.nblocks.Load() {
		return nil
	}
	b, _ := s.backend(p)
	id, err := s.readBuffer(p, &b.stats, r, tid.Block)
	if err != nil {
		return err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	d.content.Acquire(p, locks.LWExclusive)
	defer d.content.Release(p)
	pg := s.pool.page(id)
	if tup := pg.tuple(int(tid.Offset)); tup != nil && fn(tup) {
		d.setFlags(bmDirty)
		if info == xlogHeapInplace {
			r.clearAllVisible(tid.Block) // a killed insertion: replay clears it too
		}
		if s.logging() {
			s.logHeapHeader(p, info, r, tid.Block, pg, int(tid.Offset), txn.Xid(ne.Uint32(tup[thXmax:])))
		}
	}
	return nil
}
