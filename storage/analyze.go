package storage

import (
	"lockd/locks"
	"lockd/txn"
)

// AnalyzeBlock reads block blk of rel as ANALYZE's sampling does
// (heapam_scan_analyze_next_block and _next_tuple): every tuple is judged
// by SatisfiesVacuum against oldestXmin. Live tuples, tuples t itself is
// inserting, and tuples another transaction is deleting are counted live
// and passed to fn; dead and recently dead tuples, dead line pointers and
// tuples t itself is deleting are counted dead; tuples another
// transaction is inserting are not counted at all. The page is read
// under its content lock (shared); fn runs after, with the page pinned
// but unlocked, and data is valid only during fn. A block past the end
// of the relation (it shrank) has no tuples.
func (s *Store) AnalyzeBlock(p *locks.Proc, t *txn.Txn, rel RelID, blk uint32, oldestXmin txn.Xid, fn func(tid TID, data []byte)) (live, dead int, err error) {
	r, err := s.relation(rel)
	if err != nil {
		return 0, 0, err
	}
	if blk >= r.nblocks.Load() {
		return 0, 0, nil
	}
	b, _ := s.backend(p)
	id, err := s.readBuffer(p, &b.stats, r, blk)
	if err != nil {
		return 0, 0, err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	pg := s.pool.page(id)
	var items [MaxTuplesPerPage]visibleItem
	n := 0
	d.content.Acquire(p, locks.LWShared)
	var h txn.TupleHeader
	for off := 1; off <= pg.maxOffset(); off++ {
		o, f, l := pg.itemID(off)
		if f == lpDead {
			dead++
			continue
		}
		if f != lpNormal {
			continue
		}
		tup := pg[o : o+l]
		readHeader(tup, &h)
		before := h.Flags
		sample := false
		switch s.tm.SatisfiesVacuum(&h, oldestXmin) {
		case txn.HeapTupleLive:
			sample = true
		case txn.HeapTupleDead, txn.HeapTupleRecentlyDead:
			dead++
		case txn.HeapTupleInsertInProgress:
			sample = t.IsCurrent(h.Xmin)
		case txn.HeapTupleDeleteInProgress:
			if t.IsCurrent(s.tm.UpdateXid(&h)) {
				dead++
			} else {
				sample = true
			}
		}
		writeHints(d, tup, before, h.Flags)
		if sample {
			live++
			items[n] = visibleItem{uint16(off), uint16(o), uint16(l)}
			n++
		}
	}
	d.content.Release(p)
	for _, it := range items[:n] {
		fn(TID{Block: blk, Offset: it.off}, tupleData(pg[it.start:it.start+it.length]))
	}
	return live, dead, nil
}
