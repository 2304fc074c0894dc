package storage

import (
	"context"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/txn"
)

// Heap access (PostgreSQL's heapam.c): insert, fetch, sequential scan,
// update and delete of tuples carrying xmin/xmax/cmin/cmax and a ctid.
//
// Locking follows PostgreSQL: a page is read under its buffer content lock
// in shared mode and changed under it in exclusive mode; visibility hint
// bits found while reading are written back under the shared lock (see
// flagsWord) and the buffer is marked dirty. Callbacks (Fetch, Scan) run
// with the page pinned but NOT locked, as PostgreSQL's page-at-a-time scans
// return tuples: the data slice stays valid until the callback returns,
// because tuples are moved only under a cleanup lock, which a pin blocks.
// A callback may therefore call back into the Store, even for the same
// page (e.g. Update the tuple it was handed), but must not retain data.

// UpdateOutcome reports what Update, Delete or LockTuple did.
type UpdateOutcome struct {
	// Result is txn.TMOk when the tuple was changed or locked. Otherwise
	// nothing was changed, and the caller acts as heap_update's callers
	// do: on TMUpdated a READ COMMITTED caller follows NextTID (checking
	// that the version there has xmin == WaitXid) and a REPEATABLE READ
	// caller fails with 40001; TMDeleted: the row is gone; TMSelfModified
	// and TMInvisible: skip the row. TMBeingModified (Update, Delete) and
	// TMWouldBlock (LockTuple) come only with RowWait.Policy WaitSkip or
	// WaitError: a conflicting transaction holds the row.
	Result txn.UpdateResult
	// NewTID is the new version's TID (Update with TMOk).
	NewTID TID
	// HOT says the new version is a heap-only tuple (Update with TMOk):
	// the caller adds no index entries for it.
	HOT bool
	// WaitXid is the transaction in the way (TMBeingModified,
	// TMWouldBlock; a MultiXactID's value when WaitMulti is set) or the
	// one that updated or deleted the tuple (TMUpdated, TMDeleted,
	// TMSelfModified).
	WaitXid txn.Xid
	// WaitMulti and WaitMembers name the multixact in the way and its
	// members (TMBeingModified, TMWouldBlock with a multixact xmax).
	WaitMulti   txn.MultiXactID
	WaitMembers []txn.MultiMember
	// NextTID is the tuple's ctid: the next version for TMUpdated, the
	// tuple itself for TMDeleted.
	NextTID TID
}

func errRowTooBig(n int) error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "row is too big: size %d, maximum size %d",
		n+tupleHeaderSize, MaxTupleSize)
}

func errRelationTooLarge(r *relation) error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "cannot extend relation %d beyond %d blocks", r.id, InvalidBlock)
}

// xidOf returns the xid of t's current (sub)transaction, assigning one if
// it has none yet (GetCurrentTransactionId).
func xidOf(t *txn.Txn) (txn.Xid, error) {
	if x := t.CurrentXid(); x.IsValid() {
		return x, nil
	}
	return t.AssignXid()
}

// Insert stores data as a new tuple of rel (heap_insert) with xmin =
// t.CurrentXid() (assigned if t has none) and cmin = t.CommandID(). It finds a
// page with room through the free space map, filling pages only to
// fillfactor percent (0 means 100), or extends the relation.
func (s *Store) Insert(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, data []byte, fillfactor int) (TID, error) {
	return s.insert(ctx, p, t, rel, data, fillfactor, TID{})
}

// insert is Insert; a valid spec (InsertSpeculative) is stored as the new
// tuple's ctid instead of the tuple's own TID.
func (s *Store) insert(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, data []byte, fillfactor int, spec TID) (TID, error) {
	if len(data) > MaxTupleData {
		return TID{}, errRowTooBig(len(data))
	}
	r, err := s.relation(rel)
	if err != nil {
		return TID{}, err
	}
	xid, err := xidOf(t)
	if err != nil {
		return TID{}, err
	}
	b, shared := s.backend(p)
	id, blk, err := s.getBufferForTuple(ctx, p, b, shared, r, tupleSpace(len(data)), fillfactor)
	if err != nil {
		return TID{}, err
	}
	d := s.pool.desc(id)
	h := txn.TupleHeader{Xmin: xid, Cmin: t.CommandID(), Flags: txn.XmaxInvalid}
	pg := s.pool.page(id)
	off := pg.addTuple(&h, true, TID{Block: blk}, data)
	if off != 0 && spec.Offset != 0 {
		setTupleCtid(pg.tuple(off), spec)
	}
	d.setFlags(bmDirty)
	if off != 0 {
		r.clearAllVisible(blk)
	}
	if off != 0 && s.logging() {
		s.logHeapInsert(p, r, blk, pg, off, xid)
	}
	d.content.Release(p)
	d.unpin()
	if off == 0 {
		panic("storage: tuple did not fit a page with enough free space")
	}
	return TID{Block: blk, Offset: uint16(off)}, nil
}

// writeHints ORs hint bits found by a visibility check back into the page
// and marks the buffer dirty (SetHintBits + MarkBufferDirtyHint). Safe under
// a shared content lock.
func writeHints(d *bufferDesc, tup []byte, before, after uint16) {
	if after&^before != 0 {
		flagsWord(tup).Or(uint32(after &^ before))
		d.setFlags(bmDirty)
	}
}

// Fetch looks up the row version an index entry names (heap_hot_search
// through index_fetch_heap): tid is a chain's root, and the version
// visible to t's current snapshot — tid's own, or a heap-only one after
// it (hot.go) — is passed to fn with its header (a copy) and data, and
// Fetch returns true. fn runs with the page pinned, unlocked; data is
// valid only during fn. A TID past the end of the relation, or naming no
// tuple, is simply not visible.
func (s *Store) Fetch(p *locks.Proc, t *txn.Txn, rel RelID, tid TID, fn func(h *txn.TupleHeader, data []byte)) (visible bool, err error) {
	_, visible, _, err = s.fetch(p, rel, tid, t, true, nil, false, 0, fn)
	return visible, err
}

// FetchJudged is Fetch that also returns the TID of the version found
// (the row's ctid, which an UPDATE or a row lock must name) and, with a
// horizon (an OldestXmin; 0 for none) when no version is visible, tells
// whether the whole chain is dead to every transaction, judged under the
// same page lock: an index scan's kill_prior_tuple without a second
// visit to the page.
func (s *Store) FetchJudged(p *locks.Proc, t *txn.Txn, rel RelID, tid TID, horizon txn.Xid, fn func(h *txn.TupleHeader, data []byte)) (at TID, visible, dead bool, err error) {
	return s.fetch(p, rel, tid, t, true, nil, horizon != 0, horizon, fn)
}

// FetchAny calls fn for the tuple at tid whatever its visibility (for
// following update chains version by version); it returns false if tid
// names no tuple. Unlike Fetch it does not walk a HOT chain: tid is the
// version wanted.
func (s *Store) FetchAny(p *locks.Proc, rel RelID, tid TID, fn func(h *txn.TupleHeader, ctid TID, data []byte)) (bool, error) {
	var ctid TID
	_, found, _, err := s.fetch(p, rel, tid, nil, false, &ctid, false, 0, func(h *txn.TupleHeader, data []byte) { fn(h, ctid, data) })
	return found, err
}

// fetch reads tid: with hot, the version of its chain visible to t
// (judged for deadness against horizon with judge); without, the tuple at
// tid itself, visible to t or, with t nil, whatever its visibility.
func (s *Store) fetch(p *locks.Proc, rel RelID, tid TID, t *txn.Txn, hot bool, ctid *TID, judge bool, horizon txn.Xid, fn func(h *txn.TupleHeader, data []byte)) (at TID, vis, dead bool, err error) {
	r, err := s.relation(rel)
	if err != nil {
		return tid, false, false, err
	}
	if tid.Block >= r.nblocks.Load() || tid.Offset == 0 {
		return tid, false, false, nil
	}
	b, shared := s.backend(p)
	id, err := s.readBuffer(p, &b.stats, r, tid.Block)
	if err != nil {
		return tid, false, false, err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	var h *txn.TupleHeader
	if !shared && b.hdrDepth < len(b.hdrs) {
		h = &b.hdrs[b.hdrDepth]
		b.hdrDepth++
		defer func() { b.hdrDepth-- }()
	} else {
		h = new(txn.TupleHeader)
	}
	pg := s.pool.page(id)
	d.content.Acquire(p, locks.LWShared)
	var tup []byte
	at = tid
	if hot {
		var off uint16
		off, tup, vis, dead = s.hotSearch(d, pg, tid.Block, tid.Offset, t, h, judge, horizon)
		if vis {
			at.Offset = off
		}
	} else {
		tup = pg.tuple(int(tid.Offset))
		if tup == nil {
			d.content.Release(p)
			return tid, false, false, nil
		}
		readHeader(tup, h)
		before := h.Flags
		vis = t == nil || t.Visible(h)
		writeHints(d, tup, before, h.Flags)
		if ctid != nil {
			*ctid = tupleCtid(tup)
		}
	}
	prune := pruneWanted(pg)
	d.content.Release(p)
	if vis && fn != nil {
		fn(h, tupleData(tup))
	}
	if prune {
		s.pruneOpt(p, r, tid.Block, id)
	}
	return at, vis, dead, nil
}

// visibleItem is a tuple a scan found visible on the current page.
type visibleItem struct {
	off, start, length uint16
}

// Scan calls fn for every tuple of rel visible to t (a sequential scan,
// heapgetpage page-at-a-time mode), in TID order. Pages are those that
// existed when the scan started. Each page is read under its content lock
// (shared), then fn is called for its visible tuples with the page pinned
// but unlocked: data is valid only during fn and must be copied to be
// kept; fn may call back into the Store. An error from fn stops the scan
// and is returned; ctx is checked at every page.
func (s *Store) Scan(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, fn func(tid TID, data []byte) error) error {
	r, err := s.relation(rel)
	if err != nil {
		return err
	}
	b, _ := s.backend(p)
	n := r.nblocks.Load()
	for blk := uint32(0); blk < n; blk++ {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if err := s.scanPage(p, &b.stats, t, r, blk, nil, fn); err != nil {
			return err
		}
	}
	return nil
}

// ScanBlock calls fn for the tuples of page blk of rel visible to t, in
// offset order: those at offsets (ascending), or all of the page's when
// offsets is nil (a bitmap heap scan's exact and lossy pages,
// heapam_scan_bitmap_next_block). The page is read as Scan reads it; a
// block past the end of the relation has no tuples.
func (s *Store) ScanBlock(p *locks.Proc, t *txn.Txn, rel RelID, blk uint32, offsets []uint16, fn func(tid TID, data []byte) error) error {
	r, err := s.relation(rel)
	if err != nil {
		return err
	}
	if blk >= r.nblocks.Load() {
		return nil
	}
	b, _ := s.backend(p)
	if offsets == nil {
		return s.scanPage(p, &b.stats, t, r, blk, nil, fn)
	}
	if len(offsets) == 0 {
		return nil
	}
	return s.scanPage(p, &b.stats, t, r, blk, offsets, fn)
}

// scanPage reads page blk's visible tuples: all of them, or with offs
// set only those at offs (ascending).
func (s *Store) scanPage(p *locks.Proc, st *backendStats, t *txn.Txn, r *relation, blk uint32, offs []uint16, fn func(tid TID, data []byte) error) error {
	id, err := s.readBuffer(p, st, r, blk)
	if err != nil {
		return err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	pg := s.pool.page(id)
	var items [MaxTuplesPerPage]visibleItem
	n := 0
	d.content.Acquire(p, locks.LWShared)
	// An all-visible page's tuples need no visibility check (heapgetpage's
	// all_visible): its bit is cleared only under the exclusive lock.
	allVisible := r.vm.allVisible(blk)
	nline := pg.maxOffset()
	var h txn.TupleHeader
	if offs != nil {
		// index entries' TIDs: each names a chain's root
		for _, root := range offs {
			if int(root) > nline {
				break
			}
			if off, _, vis, _ := s.hotSearch(d, pg, blk, root, t, &h, false, 0); vis {
				o, _, l := pg.itemID(int(off))
				items[n] = visibleItem{off, uint16(o), uint16(l)}
				n++
			}
		}
		nline = 0 // the loop below has nothing left to do
	}
	for off := 1; off <= nline; off++ {
		o, f, l := pg.itemID(off)
		if f != lpNormal {
			continue
		}
		if allVisible {
			items[n] = visibleItem{uint16(off), uint16(o), uint16(l)}
			n++
			continue
		}
		tup := pg[o : o+l]
		readHeader(tup, &h)
		before := h.Flags
		if t.Visible(&h) {
			items[n] = visibleItem{uint16(off), uint16(o), uint16(l)}
			n++
		}
		writeHints(d, tup, before, h.Flags)
	}
	prune := pruneWanted(pg)
	d.content.Release(p)
	for _, it := range items[:n] {
		tup := pg[it.start : it.start+it.length]
		if err := fn(TID{Block: blk, Offset: it.off}, tupleData(tup)); err != nil {
			return err
		}
	}
	if prune {
		s.pruneOpt(p, r, blk, id)
	}
	return nil
}
