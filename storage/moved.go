package storage

import (
	"lockd/locks"
	"lockd/txn"
)

// MovedPartitions is the ctid PostgreSQL 11+ gives a tuple that an UPDATE
// of its partition key deleted from one partition and inserted into
// another (ItemPointerSetMovedPartitions: block InvalidBlockNumber,
// offset MovedPartitionsOffsetNumber). A transaction that waited for the
// mover and then finds this ctid on the row it meant to change cannot
// follow the row to its new partition: it fails with 40001.
var MovedPartitions = TID{Block: InvalidBlock, Offset: 0xfffd}

// MarkMovedPartitions points the ctid of the tuple at tid, which the
// caller's transaction has just deleted, at MovedPartitions. Others only
// look at the ctid of a deleted tuple once its deleter has finished, and
// the caller marks it before it commits, so the mark and the deletion are
// seen together.
func (s *Store) MarkMovedPartitions(p *locks.Proc, t *txn.Txn, rel RelID, tid TID) error {
	r, err := s.relation(rel)
	if err != nil {
		return err
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
	tup := s.pool.page(id).tuple(int(tid.Offset))
	if tup == nil || txn.Xid(ne.Uint32(tup[thXmax:])) != t.Xid() {
		return nil // not the caller's deletion: leave it alone
	}
	setTupleCtid(tup, MovedPartitions)
	d.setFlags(bmDirty)
	r.clearAllVisible(tid.Block)
	if s.logging() {
		s.logHeapHeader(p, xlogHeapInplace, r, tid.Block, s.pool.page(id), int(tid.Offset), t.Xid())
	}
	return nil
}
