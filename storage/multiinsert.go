package storage

import (
	"context"
	"encoding/binary"
	"fmt"

	"lockd/locks"
	"lockd/txn"
	"lockd/wal"
)

// Multi-insert (PostgreSQL's heap_multi_insert): COPY hands the heap a
// batch of tuples, which go onto pages a page at a time — one buffer
// lock, one free-space lookup and one WAL record per page instead of per
// tuple. A page the batch starts empty is logged with INIT_PAGE, so redo
// formats it afresh and no full-page image is taken for it.
//
// The record (Heap2 MULTI_INSERT, 0x50 as in PostgreSQL): block 0 with
// the tuples' bytes one after another; main data: the tuple count, then
// each tuple's line pointer and length (uint16 each), then — only when
// set — a flags byte.
//
// COPY FREEZE (frozen) writes its tuples with their inserter's commit
// already hinted as frozen, and a page it fills from empty gets its
// visibility map bit at once (PostgreSQL's XLH_INSERT_ALL_FROZEN_SET):
// the bit is set after the record is inserted, and the record's flag sets
// it again in redo. That is sound only because no other transaction can
// read the relation's storage before the inserting one commits (COPY
// FREEZE requires storage created in the same subtransaction), and if it
// aborts the storage goes with it.

const (
	xlogHeap2Prune       uint8 = 0x10 // XLOG_HEAP2_PRUNE
	xlogHeap2Vacuum      uint8 = 0x20 // XLOG_HEAP2_VACUUM
	xlogHeap2MultiInsert uint8 = 0x50
	multiInsertAllFrozen uint8 = 0x20 // XLH_INSERT_ALL_FROZEN_SET
)

// MultiInsert stores each of tuples as a new tuple of rel with xmin =
// t.CurrentXid() (assigned if t has none) and cmin = t.CommandID(), and
// writes their TIDs to tids (len(tids) must be len(tuples)). Pages are
// filled to fillfactor percent (0 means 100), as Insert fills them.
// frozen is COPY FREEZE's mode (see above); the caller has checked that
// rel's storage was made by t's current subtransaction.
func (s *Store) MultiInsert(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, tuples [][]byte, fillfactor int, tids []TID, frozen bool) error {
	for _, data := range tuples {
		if len(data) > MaxTupleData {
			return errRowTooBig(len(data))
		}
	}
	r, err := s.relation(rel)
	if err != nil {
		return err
	}
	xid, err := xidOf(t)
	if err != nil {
		return err
	}
	if fillfactor <= 0 || fillfactor > 100 {
		fillfactor = 100
	}
	save := PageSize * (100 - fillfactor) / 100
	h := txn.TupleHeader{Xmin: xid, Cmin: t.CommandID(), Flags: txn.XmaxInvalid}
	if frozen {
		h.Flags |= txn.XminFrozen
	}
	b, shared := s.backend(p)
	for i := 0; i < len(tuples); {
		id, blk, err := s.getBufferForTuple(ctx, p, b, shared, r, tupleSpace(len(tuples[i])), fillfactor)
		if err != nil {
			return err
		}
		d := s.pool.desc(id)
		pg := s.pool.page(id)
		wasEmpty := pg.isNew() || pg.maxOffset() == 0
		if wasEmpty {
			// formatted afresh, as redo of an INIT_PAGE record formats it
			initPage(pg)
		}
		first := i
		// The first tuple fits (getBufferForTuple found room for it); the
		// rest go on while the page keeps fillfactor's reserve free.
		for i < len(tuples) && (i == first || pg.freeSpace()-save >= tupleSpace(len(tuples[i]))) {
			off := pg.addTuple(&h, true, TID{Block: blk}, tuples[i])
			if off == 0 {
				if i == first {
					panic("storage: tuple did not fit a page with enough free space")
				}
				break
			}
			tids[i] = TID{Block: blk, Offset: uint16(off)}
			i++
		}
		d.setFlags(bmDirty)
		r.clearAllVisible(blk)
		allFrozen := frozen && wasEmpty
		if s.logging() {
			s.logHeapMultiInsert(p, r, blk, pg, tids[first:i], wasEmpty, allFrozen, xid)
		}
		if allFrozen {
			r.vm.set(blk)
		}
		d.content.Release(p)
		d.unpin()
	}
	return nil
}

// logHeapMultiInsert logs the tuples at tids, just placed on page pg
// (block blk of r) by a transaction with xid, and sets the page's LSN.
// The caller holds the page exclusively and has marked the buffer dirty.
func (s *Store) logHeapMultiInsert(p *locks.Proc, r *relation, blk uint32, pg page, tids []TID, wasEmpty, allFrozen bool, xid txn.Xid) {
	info := xlogHeap2MultiInsert
	flags := wal.RegStandard
	if wasEmpty && tids[0].Offset == 1 && pg.maxOffset() == len(tids) {
		info |= xlogHeapInitPage
		flags = wal.RegWillInit
	}
	b := s.wal.Begin(p, wal.RmgrHeap2, info)
	b.SetXid(uint32(xid))
	b.RegisterBlock(0, s.rnode(r.id), blk, pg, flags)
	main := binary.LittleEndian.AppendUint16(b.Main(), uint16(len(tids)))
	for _, tid := range tids {
		tup := pg.tuple(int(tid.Offset))
		b.BlockData(0, tup)
		main = binary.LittleEndian.AppendUint16(main, tid.Offset)
		main = binary.LittleEndian.AppendUint16(main, uint16(len(tup)))
	}
	if allFrozen {
		main = append(main, multiInsertAllFrozen)
	}
	b.SetMain(main)
	wal.SetPageLSN(pg, b.Insert())
}

// redoHeap2 replays the Heap2 resource manager's records: VISIBLE
// (vismap.go) and MULTI_INSERT, which clears the page's visibility map
// bit as the insertion did — and sets it again after the page is
// rebuilt when COPY FREEZE filled the page.
func (s *Store) redoHeap2(rec *wal.Record) error {
	switch rec.Info & xlogHeapOpMask {
	case xlogHeap2Prune:
		return s.redoPrune(rec)
	case xlogHeap2Vacuum:
		return s.redoItems(rec, reapItems)
	case xlogHeap2Visible:
		return s.redoHeap2Visible(rec)
	case xlogHeap2MultiInsert:
		s.redoClearAllVisible(rec)
		m := rec.Main
		if len(m) < 2 {
			return errShortRecord
		}
		n := int(binary.LittleEndian.Uint16(m))
		if len(m) < 2+4*n {
			return errShortRecord
		}
		allFrozen := len(m) > 2+4*n && m[2+4*n]&multiInsertAllFrozen != 0
		data := rec.Block(0).Data
		err := s.redoBlock(rec, 0, func(pg page) error {
			rest := data
			for i := 0; i < n; i++ {
				off := int(binary.LittleEndian.Uint16(m[2+4*i:]))
				l := int(binary.LittleEndian.Uint16(m[4+4*i:]))
				if len(rest) < l {
					return errShortRecord
				}
				if err := pg.placeTuple(off, rest[:l]); err != nil {
					return err
				}
				rest = rest[l:]
			}
			return nil
		})
		if err == nil && allFrozen {
			ref := rec.Block(0)
			if r := (*s.rels.Load())[RelID(ref.Rel.Rel)]; r != nil {
				r.vm.set(ref.Blk)
			}
		}
		return err
	}
	return fmt.Errorf("unknown heap2 record type %#x", rec.Info)
}
