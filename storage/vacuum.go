package storage

import (
	"context"
	"slices"
	"time"

	"lockd/locks"
	"lockd/txn"
)

// VacuumStats reports what one Vacuum did.
type VacuumStats struct {
	PagesScanned        uint32        // heap pages examined
	PagesSkipped        uint32        // pages whose cleanup lock stayed unavailable (left for the next vacuum)
	PagesAllVisible     uint32        // all-visible pages not read (runs of at least skipPagesThreshold)
	TuplesRemoved       uint64        // dead tuple versions removed
	TuplesRemaining     uint64        // live, recently dead and in-progress versions kept
	TuplesLive          uint64        // of those, live ones (and ones being deleted): lazy_scan_prune's live_tuples
	TuplesRecentlyDead  uint64        // of those, dead ones some snapshot may still see
	IndexEntriesRemoved uint64        // index entries pointing at removed tuples
	MultisResolved      uint64        // multixact xmaxes replaced by their updater or cleared
	PagesSetAllVisible  uint32        // pages whose visibility map bit this vacuum set
	CostDelays          uint32        // naps of the cost-based delay (vacuumdelay.go)
	CostSlept           time.Duration // their length in all
}

// truncateMultis forgets the multixacts below every relation's floor
// (vac_truncate_clog's multixact part): none of their tuples names one.
func (s *Store) truncateMultis() {
	floor := uint32(s.tm.MultiTruncationLimit())
	for _, r := range *s.rels.Load() {
		f := r.multiFloor.Load()
		if f == multiFloorUnknown {
			return
		}
		floor = min(floor, f)
	}
	s.tm.TruncateMultis(txn.MultiXactID(floor))
}

// cleanupLockTries bounds how long Vacuum waits for another backend to drop
// its pin on a page before skipping it, as lazy vacuum skips pages whose
// cleanup lock is unavailable (ConditionalLockBufferForCleanup).
const cleanupLockTries = 20

// Vacuum is lazy VACUUM of one heap relation (lazy_scan_heap,
// lazy_vacuum_heap_rel): remove tuple versions that SatisfiesVacuum calls
// DEAD for oldestXmin, the entries of the given indexes pointing at them,
// and record each page's free space in the free space map. It takes no
// heavyweight lock (the caller holds ShareUpdateExclusiveLock on rel).
//
// Three passes, as PostgreSQL's: (1) for each page, under a cleanup lock
// (exclusive content lock and the only pin), mark dead tuples LP_DEAD and
// compact the page; (2) delete index entries pointing at those TIDs; (3)
// for each such page, under the exclusive content lock, turn the LP_DEAD
// line pointers into LP_UNUSED so inserts may reuse them. The TIDs stay
// reserved until their index entries are gone, so an index never points at
// a different row. There is no truncation of empty trailing pages.
//
// A page left with every tuple visible to all transactions (older than
// oldestXmin) and no LP_DEAD line pointer gets its visibility map bit
// (vismap.go): in pass 1, or in pass 3 once its dead line pointers are
// free. Vacuum reads every page; VacuumSkipping may pass over all-visible
// ones.
func (s *Store) Vacuum(ctx context.Context, p *locks.Proc, rel RelID, oldestXmin txn.Xid, indexes []RelID) (VacuumStats, error) {
	return s.VacuumSkipping(ctx, p, rel, oldestXmin, indexes, 0, VacuumCost{})
}

// VacuumPageHook, when set (tests), runs before VACUUM reads each page.
var VacuumPageHook func()

// skipPagesThreshold is the shortest run of all-visible pages VACUUM
// passes over (SKIP_PAGES_THRESHOLD): a shorter one is read, since
// skipping a few pages defeats the kernel's read-ahead.
const skipPagesThreshold = 32

// VacuumSkipping is Vacuum as PostgreSQL's non-aggressive lazy VACUUM
// runs it: runs of at least skipPagesThreshold all-visible pages are not
// read (nothing on them is dead; the last page is always read). A
// skipping pass cannot raise the relation's multixact floor — an
// all-visible page may hold a row lock's multixact (a row lock leaves the
// bit set) — so the pass reads every page instead (it is aggressive) when
// the floor is unknown (after a restart) or more than multiAge multixacts
// older than the next one (vacuum_multixact_freeze_table_age); multiAge
// 0 reads every page always (DISABLE_PAGE_SKIPPING, FREEZE). lockd has
// no all-frozen bit, so this is the only aggressive rule. cost paces the
// heap passes (vacuumdelay.go).
func (s *Store) VacuumSkipping(ctx context.Context, p *locks.Proc, rel RelID, oldestXmin txn.Xid, indexes []RelID, multiAge uint32, cost VacuumCost) (vs VacuumStats, err error) {
	r, err := s.relation(rel)
	if err != nil {
		return vs, err
	}
	ixs := make([]*index, 0, len(indexes))
	for _, id := range indexes {
		ix, err := s.index(id)
		if err != nil {
			return vs, err
		}
		ixs = append(ixs, ix)
	}
	b, _ := s.backend(p)
	st := &b.stats
	vd := newVacuumDelay(cost, st)
	defer func() { vs.CostDelays, vs.CostSlept = uint32(vd.naps), vd.slept }()
	scratch := make([]byte, PageSize)
	var dead []TID
	var deadPages []uint32
	// Multixacts made before this point and still named by a tuple after
	// the pass bound the relation's multixact floor from below (newer
	// ones are all at or above it).
	r.multiNoted.Store(multiFloorNone)
	mxCut := uint32(s.tm.NextMultiXactID())
	mxLeft := multiFloorNone
	skipped := false
	n := r.nblocks.Load()
	aggressive := multiAge == 0
	if f := r.multiFloor.Load(); f == multiFloorUnknown || f != multiFloorNone && mxCut-f > multiAge {
		aggressive = true
	}
	nextUnskippable := uint32(0) // the first page at or after blk that must be read
	for blk := uint32(0); blk < n; blk++ {
		if err := ctx.Err(); err != nil {
			return vs, context.Cause(ctx)
		}
		if !aggressive && blk >= nextUnskippable {
			next := blk
			for next < n-1 && r.vm.allVisible(next) {
				next++
			}
			if next-blk >= skipPagesThreshold {
				vs.PagesAllVisible += next - blk
				skipped = true
				blk = next
			}
			nextUnskippable = next
		}
		if VacuumPageHook != nil {
			VacuumPageHook()
		}
		before := len(dead)
		ok, err := s.prunePage(p, st, vd, r, blk, oldestXmin, scratch, &dead, &vs, &mxLeft)
		if err != nil {
			return vs, err
		}
		vd.charge(false)
		if err := vd.point(ctx, p); err != nil {
			return vs, err
		}
		if !ok {
			vs.PagesSkipped++
			skipped = true
			continue
		}
		vs.PagesScanned++
		if len(dead) > before {
			deadPages = append(deadPages, blk)
		}
	}
	if !skipped {
		for {
			cur := r.multiFloor.Load()
			if r.multiFloor.CompareAndSwap(cur, min(mxLeft, mxCut, r.multiNoted.Load())) {
				break
			}
		}
		s.truncateMultis()
	}
	if len(dead) == 0 {
		return vs, nil
	}
	// dead is in TID order: blocks ascending, offsets ascending per block.
	for _, ix := range ixs {
		vs.IndexEntriesRemoved += s.bulkDelete(p, ix, dead)
	}
	// Only the line pointers whose index entries went are freed: a page
	// pruned since pass 1 may hold newer LP_DEAD ones, whose entries are
	// still there.
	rest := dead
	for _, blk := range deadPages {
		for len(rest) > 0 && rest[0].Block < blk {
			rest = rest[1:]
		}
		var offs []uint16
		for len(rest) > 0 && rest[0].Block == blk {
			offs = append(offs, rest[0].Offset)
			rest = rest[1:]
		}
		if err := s.reapPage(p, st, vd, r, blk, offs, oldestXmin, &vs); err != nil {
			return vs, err
		}
		if err := vd.point(ctx, p); err != nil {
			return vs, err
		}
	}
	return vs, nil
}

// prunePage is pass 1 for one page. It returns false if no cleanup lock
// could be had.
func (s *Store) prunePage(p *locks.Proc, st *backendStats, vd *vacuumDelay, r *relation, blk uint32, oldestXmin txn.Xid, scratch []byte, dead *[]TID, vs *VacuumStats, mxLeft *uint32) (bool, error) {
	id, err := s.readBuffer(p, st, r, blk)
	if err != nil {
		return false, err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	locked := false
	for try := 0; try < cleanupLockTries; try++ {
		d.content.Acquire(p, locks.LWExclusive)
		if d.state.Load()&bufRefMask == 1 {
			locked = true
			break
		}
		d.content.Release(p)
		time.Sleep(time.Millisecond)
	}
	if !locked {
		return false, nil
	}
	defer d.content.Release(p)
	clean := d.state.Load()&bmDirty == 0 // a clean buffer this pass dirties costs PageDirty
	defer func() { vd.charge(clean && d.state.Load()&bmDirty != 0) }()
	pg := s.pool.page(id)
	changed := false // beyond hint bits and pruning: logged as a page image
	wasNew := pg.isNew()
	if wasNew {
		initPage(pg)
		d.setFlags(bmDirty)
		changed = true
	}
	var ps pruneState
	s.planPrune(d, pg, blk, oldestXmin, &ps)
	vs.TuplesRemoved += uint64(ps.removed)
	allVisible := !wasNew // PostgreSQL leaves never-formatted pages out of the map
	var h txn.TupleHeader
	for off := 1; off <= pg.maxOffset(); off++ {
		o, f, l := pg.itemID(off)
		switch {
		case f == lpDead:
			*dead = append(*dead, TID{blk, uint16(off)})
			allVisible = false
			continue
		case f == lpNormal && !ps.marked[off]:
		default:
			continue
		}
		tup := pg[o : o+l]
		readHeader(tup, &h)
		res := txn.VacuumResult(ps.res[off] - 1)
		if res == txn.HeapTupleDead {
			// a heap-only version still linked from a live one, or a
			// tuple in a chain pruning could not walk: left for now
			allVisible = false
			vs.TuplesRemaining++
			continue
		}
		allVisible = allVisible && tupleAllVisible(&h, res, oldestXmin)
		vs.TuplesRemaining++
		switch res {
		case txn.HeapTupleLive, txn.HeapTupleDeleteInProgress:
			vs.TuplesLive++
		case txn.HeapTupleRecentlyDead:
			vs.TuplesRecentlyDead++
		}
		if h.XmaxIsMulti() && h.Flags&txn.XmaxInvalid == 0 {
			// Resolve a multixact whose members all ended, so no tuple
			// names one that TruncateMultis may forget.
			if xmax, f, f2, ok := s.tm.ResolveMulti(&h); ok {
				writeXmax(tup, &h, xmax, f, f2, 0, xmaxLock, TID{blk, uint16(off)}, TID{})
				d.setFlags(bmDirty)
				changed = true
				vs.MultisResolved++
			} else {
				*mxLeft = min(*mxLeft, uint32(h.Xmax))
			}
		} else if h.XmaxIsMulti() {
			// Hinted invalid: forget the multixact altogether.
			writeXmax(tup, &h, 0, txn.XmaxInvalid, 0, 0, xmaxLock, TID{blk, uint16(off)}, TID{})
			d.setFlags(bmDirty)
			changed = true
			vs.MultisResolved++
		}
	}
	// the roots pruning makes LP_DEAD wait for the index pass too
	for _, off := range ps.dead {
		*dead = append(*dead, TID{blk, off})
		allVisible = false
	}
	slices.SortFunc((*dead)[len(*dead)-countOnPage(*dead, blk):], tidCompare)
	pg.put32(pdPruneXid, uint32(ps.next))
	pg.put16(pdFlags, pg.u16(pdFlags)&^pdPageFull)
	if ps.changes() {
		pruneExecute(pg, ps.redirect, ps.dead, ps.unused, scratch)
		d.setFlags(bmDirty)
	}
	switch {
	case !s.logging():
	case changed:
		s.logPageImage(p, r, blk, pg)
	case ps.changes():
		s.logPrune(p, r, blk, pg, &ps)
	}
	if allVisible && s.setAllVisible(p, r, blk) {
		vs.PagesSetAllVisible++
	}
	r.fsm.set(blk, spaceToCat(pg.freeSpace()))
	return true, nil
}

// reapPage is pass 3: the LP_DEAD line pointers offs → LP_UNUSED
// (lazy_vacuum_heap_page), trim trailing unused line pointers, record
// free space, and mark the page all-visible if every tuple left is.
func (s *Store) reapPage(p *locks.Proc, st *backendStats, vd *vacuumDelay, r *relation, blk uint32, offs []uint16, oldestXmin txn.Xid, vs *VacuumStats) error {
	id, err := s.readBuffer(p, st, r, blk)
	if err != nil {
		return err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	d.content.Acquire(p, locks.LWExclusive)
	defer d.content.Release(p)
	clean := d.state.Load()&bmDirty == 0
	defer func() { vd.charge(clean && d.state.Load()&bmDirty != 0) }()
	pg := s.pool.page(id)
	var reaped []uint16
	for _, off := range offs {
		if int(off) <= pg.maxOffset() {
			if _, f, _ := pg.itemID(int(off)); f == lpDead {
				reaped = append(reaped, off)
			}
		}
	}
	if len(reaped) == 0 {
		return nil
	}
	reapItems(pg, reaped)
	d.setFlags(bmDirty)
	if s.logging() {
		s.logItems(p, xlogHeap2Vacuum, r, blk, pg, reaped)
	}
	if s.pageAllVisible(d, pg, oldestXmin) && s.setAllVisible(p, r, blk) {
		vs.PagesSetAllVisible++
	}
	r.fsm.set(blk, spaceToCat(pg.freeSpace()))
	return nil
}

// reapItems is pass 3's change to a page, on the primary and in redo
// (lazy_vacuum_heap_page): the LP_DEAD line pointers at offs become
// LP_UNUSED, trailing unused ones are cut off the array
// (PageTruncateLinePointerArray) and the page says whether it has free
// line pointers left.
func reapItems(pg page, offs []uint16) {
	for _, off := range offs {
		pg.setItemID(int(off), 0, lpUnused, 0)
	}
	nline := pg.maxOffset()
	for nline > 0 {
		if _, f, _ := pg.itemID(nline); f != lpUnused {
			break
		}
		nline--
	}
	pg.put16(pdLower, uint16(pageHeaderSize+nline*itemIDSize))
	hasFree := false
	for off := 1; off <= nline; off++ {
		if _, f, _ := pg.itemID(off); f == lpUnused {
			hasFree = true
			break
		}
	}
	flags := pg.u16(pdFlags) &^ pdHasFreeLines
	if hasFree {
		flags |= pdHasFreeLines
	}
	pg.put16(pdFlags, flags)
}

// tidLess orders TIDs by block, then offset.
func tidCompare(a, b TID) int {
	switch {
	case a.Block < b.Block:
		return -1
	case a.Block > b.Block:
		return 1
	case a.Offset < b.Offset:
		return -1
	case a.Offset > b.Offset:
		return 1
	}
	return 0
}

// countOnPage counts the TIDs at the end of tids that are on block blk.
func countOnPage(tids []TID, blk uint32) int {
	n := 0
	for i := len(tids) - 1; i >= 0 && tids[i].Block == blk; i-- {
		n++
	}
	return n
}

func containsTID(sorted []TID, t TID) bool {
	_, ok := slices.BinarySearchFunc(sorted, t, tidCompare)
	return ok
}
