package storage

import (
	"encoding/binary"
	"fmt"

	"lockd/locks"
	"lockd/txn"
	"lockd/wal"
)

// Write-ahead logging of the store's changes, and their replay.
//
// Every change to a heap page is logged while the page is locked
// exclusively and after the buffer was marked dirty; the page then gets
// the record's end as its LSN (pd_lsn, the first 8 bytes of the page
// header). A dirty page is written out only after the log is flushed up to
// its LSN (flushBuffer). The first change of a page after a checkpoint's
// redo point carries a full-page image (full_page_writes), so recovery
// rebuilds a page torn by a crash during its write from the image and the
// records after it.
//
// Records (PostgreSQL's rmgr ids; the payloads are lockd's):
//
//	Heap INSERT (0x00)        block 0 + tuple bytes; main: offset
//	Heap DELETE (0x10)        block 0; main: offset + the tuple's new header
//	Heap UPDATE (0x20)        block 0 (new version's page) + tuple bytes,
//	                          block 1 (old page, unless the same); main:
//	                          old offset + old tuple's new header, new offset
//	Heap CONFIRM (0x50)       speculative insertion confirmed (header)
//	Heap LOCK (0x60)          row lock (header)
//	Heap INPLACE (0x70)       other header changes: a speculative insertion
//	                          killed, a tuple moved to another partition
//	  | INIT_PAGE (0x80)      on INSERT and UPDATE: the tuple is the page's
//	                          first, redo starts from an empty page (and no
//	                          image is taken)
//	                          (replay of INSERT, DELETE, UPDATE and INPLACE
//	                          also clears the pages' visibility map bits)
//	Heap2 VISIBLE (0x40)      VACUUM found a page all-visible (relation,
//	                          block; vismap.go)
//	Heap2 MULTI_INSERT (0x50) block 0 + the tuples' bytes; main: count,
//	                          then each tuple's offset and length (multiinsert.go)
//	  | INIT_PAGE (0x80)      the batch starts the page
//	Heap2 PRUNE (0x10)        a page pruned (VACUUM's first pass, or a
//	                          reader on its way: prune.go): main: count and
//	                          offsets that become LP_DEAD, count and
//	                          (root, target) pairs that become redirects,
//	                          count and offsets that become LP_UNUSED (a
//	                          record from before HOT has the first list
//	                          only); the page is compacted (pruneExecute)
//	Heap2 VACUUM (0x20)       VACUUM's third pass: main: count, then the
//	                          LP_DEAD offsets that become LP_UNUSED
//	                          (reapItems)
//	XLOG FPI (0xB0)           a page image only: VACUUM's other page
//	                          changes (a new page formatted, multixacts
//	                          resolved)
//	Storage CREATE (0x10)     a relation or index file is created
//	Storage TRUNCATE (0x20)   it is emptied in place
//	Btree INSERT_LEAF (0x00)  an index entry (index, tid, key)
//	Btree DELETE (0x70)       an index entry removed
//	Btree VACUUM (0xC0)       VACUUM's removal of the entries of dead TIDs
//	Btree NEWROOT (0xA0)      entries of an index build, in bulk
//
// A header change logs the whole new tuple header rather than the
// operation: replay copies it over the tuple, which is the same whatever
// hint bits the page on disk has. Hint bits it may bring along were true
// when logged (a commit's hint is set only once its commit record is
// flushed, see txn), and stay true.
//
// Indexes are logged as entries, not pages: they are in-memory B-trees,
// saved whole at checkpoints. Replaying an entry's insertion or removal is
// idempotent (set semantics), so a checkpoint's saved image may be newer
// than its redo point: replay from there ends with the same index.
//
// Relation extension is not logged (as in PostgreSQL): the new pages are
// zeroes, and replay of a change to a page past the end of a file extends
// the file first.

// Heap record types (the high nibble of xl_info).
const (
	xlogHeapInsert   uint8 = 0x00
	xlogHeapDelete   uint8 = 0x10
	xlogHeapUpdate   uint8 = 0x20
	xlogHeapConfirm  uint8 = 0x50
	xlogHeapLock     uint8 = 0x60
	xlogHeapInplace  uint8 = 0x70
	xlogHeapInitPage uint8 = 0x80
	xlogHeapOpMask   uint8 = 0x70

	xlogSmgrCreate   uint8 = 0x10
	xlogSmgrTruncate uint8 = 0x20

	xlogBtreeInsert  uint8 = 0x00
	xlogBtreeDelete  uint8 = 0x70
	xlogBtreeVacuum  uint8 = 0xC0
	xlogBtreeNewroot uint8 = 0xA0

	smgrHeap  uint8 = 0
	smgrIndex uint8 = 1

	// headerImageSize is what a header record carries: the tuple header
	// without its data length.
	headerImageSize = thDataLen
)

func (s *Store) rnode(rel RelID) wal.RelFileNode {
	return wal.RelFileNode{Spc: wal.DefaultTablespace, DB: s.cfg.DatabaseOID, Rel: uint32(rel)}
}

// logging reports whether changes are logged.
func (s *Store) logging() bool { return s.wal != nil }

// logHeapInsert logs tuple off of page pg (block blk of r), just placed by
// a transaction with xid, and sets the page's LSN. The caller holds the
// page exclusively and has marked the buffer dirty.
func (s *Store) logHeapInsert(p *locks.Proc, r *relation, blk uint32, pg page, off int, xid txn.Xid) {
	info := xlogHeapInsert
	flags := wal.RegStandard
	if off == 1 && pg.maxOffset() == 1 {
		info |= xlogHeapInitPage
		flags = wal.RegWillInit
	}
	b := s.wal.Begin(p, wal.RmgrHeap, info)
	b.SetXid(uint32(xid))
	b.RegisterBlock(0, s.rnode(r.id), blk, pg, flags)
	b.BlockData(0, pg.tuple(off))
	b.SetMain(binary.LittleEndian.AppendUint16(b.Main(), uint16(off)))
	wal.SetPageLSN(pg, b.Insert())
}

// logHeapHeader logs the new header of tuple off on page pg (DELETE, LOCK,
// CONFIRM or INPLACE) and sets the page's LSN.
func (s *Store) logHeapHeader(p *locks.Proc, info uint8, r *relation, blk uint32, pg page, off int, xid txn.Xid) {
	b := s.wal.Begin(p, wal.RmgrHeap, info)
	b.SetXid(uint32(xid))
	b.RegisterBlock(0, s.rnode(r.id), blk, pg, wal.RegStandard)
	main := binary.LittleEndian.AppendUint16(b.Main(), uint16(off))
	b.SetMain(append(main, pg.tuple(off)[:headerImageSize]...))
	wal.SetPageLSN(pg, b.Insert())
}

// logHeapUpdate logs an update: the old version oldOff on oldPg (block
// oldBlk) got its new header, the new version newOff went on newPg (block
// newBlk, which may be oldBlk with newPg == oldPg). Both pages are locked
// exclusively and their buffers dirty; both get the record's LSN.
func (s *Store) logHeapUpdate(p *locks.Proc, r *relation, oldBlk uint32, oldPg page, oldOff int, newBlk uint32, newPg page, newOff int, xid txn.Xid) {
	info := xlogHeapUpdate
	flags := wal.RegStandard
	if newBlk != oldBlk && newOff == 1 && newPg.maxOffset() == 1 {
		info |= xlogHeapInitPage
		flags = wal.RegWillInit
	}
	b := s.wal.Begin(p, wal.RmgrHeap, info)
	b.SetXid(uint32(xid))
	b.RegisterBlock(0, s.rnode(r.id), newBlk, newPg, flags)
	b.BlockData(0, newPg.tuple(newOff))
	if newBlk != oldBlk {
		b.RegisterBlock(1, s.rnode(r.id), oldBlk, oldPg, wal.RegStandard)
	}
	main := binary.LittleEndian.AppendUint16(b.Main(), uint16(oldOff))
	main = binary.LittleEndian.AppendUint16(main, uint16(newOff))
	b.SetMain(append(main, oldPg.tuple(oldOff)[:headerImageSize]...))
	lsn := b.Insert()
	wal.SetPageLSN(newPg, lsn)
	if newBlk != oldBlk {
		wal.SetPageLSN(oldPg, lsn)
	}
}

// logPageImage logs page pg (block blk of r) whole (log_newpage_buffer,
// XLOG_FPI), for VACUUM's changes, and sets its LSN.
func (s *Store) logPageImage(p *locks.Proc, r *relation, blk uint32, pg page) {
	b := s.wal.Begin(p, wal.RmgrXLOG, wal.InfoFPI)
	b.RegisterBlock(0, s.rnode(r.id), blk, pg, wal.RegForceImage|wal.RegStandard)
	wal.SetPageLSN(pg, b.Insert())
}

// logItems logs a VACUUM's change to the line pointers offs of page pg
// (block blk of r) — Heap2 VACUUM (reapItems) —
// and sets the page's LSN. Replay makes the same change to the same page,
// so the record holds the offsets only.
func (s *Store) logItems(p *locks.Proc, info uint8, r *relation, blk uint32, pg page, offs []uint16) {
	b := s.wal.Begin(p, wal.RmgrHeap2, info)
	b.RegisterBlock(0, s.rnode(r.id), blk, pg, wal.RegStandard)
	main := binary.LittleEndian.AppendUint16(b.Main(), uint16(len(offs)))
	for _, off := range offs {
		main = binary.LittleEndian.AppendUint16(main, off)
	}
	b.SetMain(main)
	wal.SetPageLSN(pg, b.Insert())
}

// redoItems replays logItems' record with apply.
func (s *Store) redoItems(rec *wal.Record, apply func(pg page, offs []uint16)) error {
	m := rec.Main
	if len(m) < 2 {
		return errShortRecord
	}
	n := int(binary.LittleEndian.Uint16(m))
	if len(m) < 2+2*n {
		return errShortRecord
	}
	offs := make([]uint16, n)
	for i := range offs {
		offs[i] = binary.LittleEndian.Uint16(m[2+2*i:])
	}
	return s.redoBlock(rec, 0, func(pg page) error {
		for _, off := range offs {
			if int(off) < 1 || int(off) > pg.maxOffset() {
				return fmt.Errorf("line pointer %d out of range on a page of %d", off, pg.maxOffset())
			}
		}
		apply(pg, offs)
		return nil
	})
}

// logStorage logs the creation or truncation of a relation's file and
// returns the record's end.
func (s *Store) logStorage(p *locks.Proc, info uint8, rel RelID, kind uint8) wal.LSN {
	if s.wal == nil {
		return 0
	}
	b := s.wal.Begin(p, wal.RmgrStorage, info)
	main := binary.LittleEndian.AppendUint32(b.Main(), uint32(rel))
	b.SetMain(append(main, kind))
	return b.Insert()
}

// logIndex logs one index entry's insertion or removal. The caller holds
// the index's lock exclusively (so an index image saved by a checkpoint
// never holds an entry whose record is not yet inserted).
func (s *Store) logIndex(p *locks.Proc, info uint8, ix *index, key []byte, tid TID) {
	b := s.wal.Begin(p, wal.RmgrBtree, info)
	main := binary.LittleEndian.AppendUint32(b.Main(), uint32(ix.id))
	main = binary.LittleEndian.AppendUint32(main, tid.Block)
	main = binary.LittleEndian.AppendUint16(main, tid.Offset)
	b.SetMain(append(main, key...))
	b.Insert()
}

// Redo is the redo function of the Heap, Heap2, Btree and Storage resource
// managers and of XLOG's full-page images (the server dispatches them
// here). It runs single-threaded before any session, logs nothing, and
// skips the records of relations that no longer exist: a later record
// (a commit's drop) is why.
func (s *Store) Redo(rec *wal.Record) error {
	switch rec.Rmid {
	case wal.RmgrHeap:
		return s.redoHeap(rec)
	case wal.RmgrHeap2:
		return s.redoHeap2(rec)
	case wal.RmgrBtree:
		return s.redoBtree(rec)
	case wal.RmgrStorage:
		return s.redoStorage(rec)
	case wal.RmgrXLOG:
		if rec.Info == wal.InfoFPI {
			return s.redoBlock(rec, 0, nil)
		}
	}
	return nil
}

// redoBlock brings block ref id of rec up to date (XLogReadBufferForRedo):
// an image is restored; a page initialised by the record is formatted and
// apply runs; a page already as new as the record (pd_lsn at or past its
// end) is left alone; otherwise apply runs. The page gets the record's end
// as its LSN and its free space goes to the free space map.
func (s *Store) redoBlock(rec *wal.Record, id int, apply func(pg page) error) error {
	ref := rec.Block(id)
	if ref == nil {
		return fmt.Errorf("block reference %d missing", id)
	}
	r := (*s.rels.Load())[RelID(ref.Rel.Rel)]
	if r == nil {
		return nil // dropped later in the log
	}
	if ref.Blk >= r.nblocks.Load() {
		if err := s.redoExtend(r, ref.Blk+1); err != nil {
			return err
		}
	}
	b, _ := s.backend(nil)
	bid, err := s.readBuffer(nil, &b.stats, r, ref.Blk)
	if err != nil {
		return err
	}
	d := s.pool.desc(bid)
	defer d.unpin()
	d.content.Acquire(nil, locks.LWExclusive)
	defer d.content.Release(nil)
	pg := s.pool.page(bid)
	switch {
	case ref.HasImage:
		copy(pg, ref.Image)
	case ref.WillInit:
		initPage(pg)
		fallthrough
	default:
		if !ref.WillInit && wal.PageLSN(pg) >= rec.EndLSN {
			return nil
		}
		if apply != nil {
			if pg.isNew() {
				initPage(pg)
			}
			if err := apply(pg); err != nil {
				return fmt.Errorf("block %d of relation %d: %w", ref.Blk, ref.Rel.Rel, err)
			}
		}
	}
	if !pg.isNew() {
		wal.SetPageLSN(pg, rec.EndLSN)
	}
	d.setFlags(bmDirty)
	r.fsm.set(ref.Blk, spaceToCat(pg.freeSpace()))
	return nil
}

// redoExtend makes r n pages long, as the extensions of the logged run
// did (zero pages; XLogReadBufferExtended).
func (s *Store) redoExtend(r *relation, n uint32) error {
	first := r.nblocks.Load()
	if err := s.zeroExtend(r, first, n-first, s.policy().fallocateThreshold); err != nil {
		return err
	}
	r.fsm.grow(n)
	r.nblocks.Store(n)
	for b := first; b < n; b++ {
		r.fsm.set(b, emptyPageCat)
	}
	return nil
}

func (s *Store) redoHeap(rec *wal.Record) error {
	m := rec.Main
	switch rec.Info & xlogHeapOpMask {
	case xlogHeapInsert, xlogHeapDelete, xlogHeapUpdate, xlogHeapInplace:
		s.redoClearAllVisible(rec) // vismap.go
	}
	switch rec.Info & xlogHeapOpMask {
	case xlogHeapInsert:
		if len(m) < 2 {
			return errShortRecord
		}
		off := int(binary.LittleEndian.Uint16(m))
		data := rec.Block(0).Data
		return s.redoBlock(rec, 0, func(pg page) error { return pg.placeTuple(off, data) })
	case xlogHeapDelete, xlogHeapConfirm, xlogHeapLock, xlogHeapInplace:
		if len(m) < 2+headerImageSize {
			return errShortRecord
		}
		off := int(binary.LittleEndian.Uint16(m))
		del := rec.Info&xlogHeapOpMask == xlogHeapDelete
		return s.redoBlock(rec, 0, func(pg page) error {
			if del {
				pg.setPrunable(txn.Xid(rec.Xid))
			}
			return pg.setHeader(off, m[2:2+headerImageSize])
		})
	case xlogHeapUpdate:
		if len(m) < 4+headerImageSize {
			return errShortRecord
		}
		oldOff := int(binary.LittleEndian.Uint16(m))
		newOff := int(binary.LittleEndian.Uint16(m[2:]))
		hdr := m[4 : 4+headerImageSize]
		data := rec.Block(0).Data
		samePage := rec.Block(1) == nil
		err := s.redoBlock(rec, 0, func(pg page) error {
			if samePage {
				pg.setPrunable(txn.Xid(rec.Xid))
				if err := pg.setHeader(oldOff, hdr); err != nil {
					return err
				}
			}
			return pg.placeTuple(newOff, data)
		})
		if err != nil || samePage {
			return err
		}
		return s.redoBlock(rec, 1, func(pg page) error {
			pg.setPrunable(txn.Xid(rec.Xid))
			return pg.setHeader(oldOff, hdr)
		})
	}
	return fmt.Errorf("unknown heap record type %#x", rec.Info)
}

var errShortRecord = fmt.Errorf("record too short")

func (s *Store) redoStorage(rec *wal.Record) error {
	if len(rec.Main) < 5 {
		return errShortRecord
	}
	rel := RelID(binary.LittleEndian.Uint32(rec.Main))
	kind := rec.Main[4]
	switch rec.Info {
	case xlogSmgrCreate:
		if s.exists(rel) {
			return nil
		}
		if kind == smgrIndex {
			return s.createIndex(nil, rel, false)
		}
		return s.createRelation(nil, rel, false)
	case xlogSmgrTruncate:
		if kind == smgrIndex {
			if ix := (*s.idxs.Load())[rel]; ix != nil {
				s.truncateIndex(nil, ix)
			}
			return nil
		}
		if r := (*s.rels.Load())[rel]; r != nil {
			return s.truncateRelation(r)
		}
		return nil
	}
	return fmt.Errorf("unknown storage record type %#x", rec.Info)
}

func (s *Store) redoBtree(rec *wal.Record) error {
	m := rec.Main
	if len(m) < 4 {
		return errShortRecord
	}
	ix := (*s.idxs.Load())[RelID(binary.LittleEndian.Uint32(m))]
	if ix == nil {
		return nil // dropped later in the log
	}
	ix.lock.Acquire(nil, locks.LWExclusive)
	defer ix.lock.Release(nil)
	switch rec.Info {
	case xlogBtreeInsert, xlogBtreeDelete:
		if len(m) < 10 {
			return errShortRecord
		}
		tid := TID{Block: binary.LittleEndian.Uint32(m[4:]), Offset: binary.LittleEndian.Uint16(m[8:])}
		key := append([]byte(nil), m[10:]...)
		if rec.Info == xlogBtreeInsert {
			ix.tree.insert(key, tid)
		} else {
			ix.tree.delete(key, tid)
		}
	case xlogBtreeVacuum:
		dead, err := decodeTIDs(m[4:])
		if err != nil {
			return err
		}
		ix.removeTIDs(dead)
	case xlogBtreeNewroot:
		rest := m[4:]
		for len(rest) > 0 {
			if len(rest) < 8 {
				return errShortRecord
			}
			kl := int(binary.LittleEndian.Uint16(rest[6:]))
			if len(rest) < 8+kl {
				return errShortRecord
			}
			tid := TID{Block: binary.LittleEndian.Uint32(rest), Offset: binary.LittleEndian.Uint16(rest[4:])}
			ix.tree.insert(append([]byte(nil), rest[8:8+kl]...), tid)
			rest = rest[8+kl:]
		}
	default:
		return fmt.Errorf("unknown btree record type %#x", rec.Info)
	}
	ix.changes++
	return nil
}

func encodeTIDs(buf []byte, tids []TID) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(tids)))
	for _, t := range tids {
		buf = binary.LittleEndian.AppendUint32(buf, t.Block)
		buf = binary.LittleEndian.AppendUint16(buf, t.Offset)
	}
	return buf
}

func decodeTIDs(b []byte) ([]TID, error) {
	if len(b) < 4 {
		return nil, errShortRecord
	}
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if len(b) < 6*n {
		return nil, errShortRecord
	}
	tids := make([]TID, n)
	for i := range tids {
		tids[i] = TID{Block: binary.LittleEndian.Uint32(b[6*i:]), Offset: binary.LittleEndian.Uint16(b[6*i+4:])}
	}
	return tids, nil
}

// placeTuple puts the tuple bytes data (header and data, as logged) at
// line pointer off (redo of an insertion): off must be the next line
// pointer, or a free one, and the tuple must fit where addTuple put it.
func (pg page) placeTuple(off int, data []byte) error {
	if len(data) < tupleHeaderSize {
		return errShortRecord
	}
	nline := pg.maxOffset()
	lower := pg.lower()
	switch {
	case off == nline+1:
		lower += itemIDSize
		// addTuple appends only after a search for a free line pointer
		// found none, and then clears the hint.
		pg.put16(pdFlags, pg.u16(pdFlags)&^pdHasFreeLines)
	case off >= 1 && off <= nline:
		if _, f, l := pg.itemID(off); f != lpUnused || l != 0 {
			return fmt.Errorf("line pointer %d is in use", off)
		}
	default:
		return fmt.Errorf("invalid line pointer %d (page has %d)", off, nline)
	}
	upper := pg.upper() - maxAligned(len(data))
	if upper < lower {
		return fmt.Errorf("tuple of %d bytes does not fit", len(data))
	}
	copy(pg[upper:], data)
	clear(pg[upper+len(data) : upper+maxAligned(len(data))])
	pg.setItemID(off, upper, lpNormal, len(data))
	pg.put16(pdLower, uint16(lower))
	pg.put16(pdUpper, uint16(upper))
	return nil
}

// setHeader copies a logged header over tuple off's.
func (pg page) setHeader(off int, hdr []byte) error {
	t := pg.tuple(off)
	if t == nil {
		return fmt.Errorf("no tuple at line pointer %d", off)
	}
	copy(t[:headerImageSize], hdr)
	return nil
}
