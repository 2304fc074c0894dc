package storage

import (
	"encoding/binary"
	"fmt"

	"lockd/locks"
	"lockd/txn"
	"lockd/wal"
)

// Pruning (PostgreSQL's heap_page_prune and heap_page_prune_opt).
//
// An UPDATE or DELETE leaves the old version on its page with an xmax,
// and notes the xid in the page header (pd_prune_xid, PageSetPrunable:
// the oldest such xid). Once that xid is older than every running
// transaction's horizon, the versions it ended are dead to everyone.
// Pruning removes them from the page without touching any index:
//
//   - a dead heap-only tuple's line pointer becomes LP_UNUSED at once (no
//     index entry names it);
//   - a chain's root whose version is dead while a later version is not
//     becomes an LP_REDIRECT to that version, so the index entries for
//     the root still lead to the row;
//   - a chain dead from end to end — a row deleted, or a non-HOT update's
//     old version — leaves an LP_DEAD root, which keeps its TID until
//     VACUUM has removed the index entries naming it;
//
// and the page is compacted (repairFragmentation). VACUUM's first pass
// prunes every page it reads (vacuum.go). Besides, a backend that reads a
// page — a sequential scan's page, an index scan's heap fetch — and finds
// it nearly full (less than a tenth free, or marked full by an UPDATE
// whose new version did not fit) prunes it on its way (pruneOpt), only if
// it can have the cleanup lock at once (the exclusive content lock, and no
// pin but its own), never waiting. So a page whose rows are updated over
// and over keeps making room for their next versions, and HOT chains stay
// short.

// pruneMinFree is heap_page_prune_opt's minfree at the default
// fillfactor: a page with less room than this is worth pruning.
const pruneMinFree = PageSize / 10

// setPrunable is PageSetPrunable: xid deleted or updated a tuple of pg.
func (pg page) setPrunable(xid txn.Xid) {
	cur := txn.Xid(pg.u32(pdPruneXid))
	if !cur.IsValid() || txn.Precedes(xid, cur) {
		pg.put32(pdPruneXid, uint32(xid))
	}
}

// setFull is PageSetFull: an UPDATE found no room for its new version
// here, so the next reader should try pruning.
func (pg page) setFull() { pg.put16(pdFlags, pg.u16(pdFlags)|pdPageFull) }

// pruneWanted tells, from what the caller read under the page's content
// lock, whether pruneOpt may find work: a prunable xid, and the page full
// or nearly so.
func pruneWanted(pg page) bool {
	return pg.u32(pdPruneXid) != 0 && (pg.u16(pdFlags)&pdPageFull != 0 || pg.freeSpace() < pruneMinFree)
}

// pruneOpt prunes page id (block blk of r) if it can at once, and tells
// the SetOnPrune function how many versions it removed. The caller
// holds one pin on it and no content lock, and no pointer into the page
// it still needs.
func (s *Store) pruneOpt(p *locks.Proc, r *relation, blk uint32, id int32) {
	pg := s.pool.page(id)
	d := s.pool.desc(id)
	horizon := s.tm.RecentOldestXmin()
	if !d.content.ConditionalAcquire(p, locks.LWExclusive) {
		return
	}
	pruneXid := txn.Xid(pg.u32(pdPruneXid))
	if d.state.Load()&bufRefMask != 1 || pg.isNew() || // someone else holds a pin: tuples must not move
		!pruneXid.IsValid() || !txn.Precedes(pruneXid, horizon) || !pruneWanted(pg) {
		d.content.Release(p)
		return
	}
	var ps pruneState
	s.planPrune(d, pg, blk, horizon, &ps)
	s.applyPrune(p, d, r, blk, pg, &ps)
	d.content.Release(p)
	// versions whose line pointer stays LP_DEAD still wait for VACUUM's
	// index pass, so they are not reported (heap_page_prune_opt reports
	// ndeleted - ndead)
	if fn := s.onPrune.Load(); ps.removed > len(ps.dead) && fn != nil {
		(*fn)(r.id, ps.removed-len(ps.dead))
	}
}

// SetOnPrune makes fn hear of every prune a reader makes on its way: the
// relation and how many row versions it removed for good, less the line
// pointers it left LP_DEAD for VACUUM (the SQL layer lowers n_dead_tup
// by them, as heap_page_prune_opt reports them). fn runs on
// the reader's goroutine, with the page pinned but unlocked.
func (s *Store) SetOnPrune(fn func(rel RelID, removed int)) { s.onPrune.Store(&fn) }

// judgeVacuum reads tup's header into h and judges it against horizon
// (HeapTupleSatisfiesVacuum), writing back the hint bits it set. The
// caller holds the page's content lock.
func (s *Store) judgeVacuum(d *bufferDesc, tup []byte, h *txn.TupleHeader, horizon txn.Xid) txn.VacuumResult {
	readHeader(tup, h)
	before := h.Flags
	res := s.tm.SatisfiesVacuum(h, horizon)
	writeHints(d, tup, before, h.Flags)
	return res
}

// pruneState is what pruning does to one page (heap_page_prune's
// PruneState).
type pruneState struct {
	// res is each normal tuple's SatisfiesVacuum result (+1, 0 for
	// none), kept for VACUUM's counts.
	res      [MaxTuplesPerPage + 1]uint8
	marked   [MaxTuplesPerPage + 1]bool // already dealt with
	redirect []uint16                   // pairs: root, target
	dead     []uint16                   // roots that become LP_DEAD
	unused   []uint16                   // heap-only tuples that become LP_UNUSED
	next     txn.Xid                    // the new pd_prune_xid
	removed  int                        // tuples removed
}

func (ps *pruneState) noteNext(x txn.Xid) {
	if x.IsNormal() && (!ps.next.IsValid() || txn.Precedes(x, ps.next)) {
		ps.next = x
	}
}

func (ps *pruneState) changes() bool {
	return len(ps.redirect)+len(ps.dead)+len(ps.unused) > 0
}

// planPrune decides what pruning page pg (block blk, cleanup lock held)
// against horizon does, into ps; it writes hint bits, nothing else.
func (s *Store) planPrune(d *bufferDesc, pg page, blk uint32, horizon txn.Xid, ps *pruneState) {
	nline := pg.maxOffset()
	var h txn.TupleHeader
	for off := 1; off <= nline; off++ {
		o, f, l := pg.itemID(off)
		if f != lpNormal {
			continue
		}
		res := s.judgeVacuum(d, pg[o:o+l], &h, horizon)
		ps.res[off] = uint8(res) + 1
		if res == txn.HeapTupleRecentlyDead || res == txn.HeapTupleDeleteInProgress {
			ps.noteNext(s.tm.UpdateXid(&h))
		}
	}
	var chain [MaxTuplesPerPage]uint16
	for root := 1; root <= nline; root++ {
		if ps.marked[root] {
			continue
		}
		_, f, _ := pg.itemID(root)
		switch {
		case f == lpRedirect:
		case f == lpNormal && pg.tuple(root) != nil:
			if readHeader(pg.tuple(root), &h); h.Flags2&txn.HeapOnly != 0 {
				continue // reached from its root, or an orphan (below)
			}
		default:
			continue
		}
		// heap_prune_chain: chain[0] is the root line pointer
		n := 0
		chain[n] = uint16(root)
		n++
		off, first := chainStart(pg, uint16(root))
		var prior txn.Xid
		latestDead := -1 // index in chain of the latest dead version
		for n < len(chain) {
			tup := chainMember(pg, off, first, prior, &h)
			if tup == nil || ps.marked[off] {
				break
			}
			if off != uint16(root) {
				chain[n] = off
				n++
			}
			res := txn.VacuumResult(ps.res[off] - 1)
			if res == txn.HeapTupleDead {
				latestDead = n - 1
			} else if res != txn.HeapTupleRecentlyDead {
				break
			}
			var ok bool
			if off, prior, ok = s.chainNext(blk, tup, &h); !ok {
				break
			}
			first = false
		}
		switch {
		case latestDead >= 0:
			// the versions up to the latest dead one go; the root leads
			// to the next one, or is dead with the whole chain
			for i := 1; i <= latestDead; i++ {
				ps.unused = append(ps.unused, chain[i])
				ps.marked[chain[i]] = true
			}
			ps.removed += latestDead
			if f == lpNormal {
				ps.removed++
			}
			if latestDead+1 < n {
				ps.redirect = append(ps.redirect, uint16(root), chain[latestDead+1])
			} else {
				ps.dead = append(ps.dead, uint16(root))
			}
			ps.marked[root] = true
		case f == lpRedirect && n < 2:
			// a redirect whose chain is gone
			ps.dead = append(ps.dead, uint16(root))
			ps.marked[root] = true
		}
	}
	// Heap-only tuples no chain reaches — an aborted HOT update's new
	// version — go once dead (the orphans of heap_prune_chain).
	for off := 1; off <= nline; off++ {
		if ps.marked[off] || ps.res[off] != uint8(txn.HeapTupleDead)+1 {
			continue
		}
		if readHeader(pg.tuple(off), &h); h.Flags2&txn.HeapOnly != 0 && !hotFollows(&h) {
			ps.unused = append(ps.unused, uint16(off))
			ps.marked[off] = true
			ps.removed++
		}
	}
}

// applyPrune carries out ps on page pg (cleanup lock held) and logs it
// as Heap2 PRUNE; the page's pd_prune_xid becomes ps.next and it is no
// longer marked full.
func (s *Store) applyPrune(p *locks.Proc, d *bufferDesc, r *relation, blk uint32, pg page, ps *pruneState) {
	pg.put32(pdPruneXid, uint32(ps.next))
	pg.put16(pdFlags, pg.u16(pdFlags)&^pdPageFull)
	d.setFlags(bmDirty)
	if !ps.changes() {
		return
	}
	var scratch [PageSize]byte
	pruneExecute(pg, ps.redirect, ps.dead, ps.unused, scratch[:])
	if s.logging() {
		s.logPrune(p, r, blk, pg, ps)
	}
}

// pruneExecute is pruning's change to a page, on the primary and in redo
// (heap_page_prune_execute): the redirects (root, target pairs), the
// LP_DEAD roots and the LP_UNUSED heap-only line pointers are set, and
// the page is compacted.
func pruneExecute(pg page, redirect, dead, unused []uint16, scratch []byte) {
	for i := 0; i+1 < len(redirect); i += 2 {
		pg.setItemID(int(redirect[i]), int(redirect[i+1]), lpRedirect, 0)
	}
	for _, off := range dead {
		pg.setItemID(int(off), 0, lpDead, 0)
	}
	for _, off := range unused {
		pg.setItemID(int(off), 0, lpUnused, 0)
	}
	pg.repairFragmentation(scratch)
}

// logPrune logs a prune of page pg: the LP_DEAD offsets with their count
// first (the record's layout before HOT, which redo still reads), then
// the redirect pairs and the unused offsets, each list after its count.
func (s *Store) logPrune(p *locks.Proc, r *relation, blk uint32, pg page, ps *pruneState) {
	b := s.wal.Begin(p, wal.RmgrHeap2, xlogHeap2Prune)
	b.RegisterBlock(0, s.rnode(r.id), blk, pg, wal.RegStandard)
	main := b.Main()
	put := func(n int, list []uint16) {
		main = binary.LittleEndian.AppendUint16(main, uint16(n))
		for _, off := range list {
			main = binary.LittleEndian.AppendUint16(main, off)
		}
	}
	put(len(ps.dead), ps.dead)
	put(len(ps.redirect)/2, ps.redirect)
	put(len(ps.unused), ps.unused)
	b.SetMain(main)
	wal.SetPageLSN(pg, b.Insert())
}

// redoPrune replays logPrune's record (and a prune record from before
// HOT, which has the dead offsets only).
func (s *Store) redoPrune(rec *wal.Record) error {
	m := rec.Main
	var lists [3][]uint16
	for i := range lists {
		if len(m) == 0 && i > 0 {
			break
		}
		if len(m) < 2 {
			return errShortRecord
		}
		n := int(binary.LittleEndian.Uint16(m))
		if i == 1 {
			n *= 2
		}
		m = m[2:]
		if len(m) < 2*n {
			return errShortRecord
		}
		lists[i] = make([]uint16, n)
		for j := range lists[i] {
			lists[i][j] = binary.LittleEndian.Uint16(m[2*j:])
		}
		m = m[2*n:]
	}
	dead, redirect, unused := lists[0], lists[1], lists[2]
	scratch := make([]byte, PageSize)
	return s.redoBlock(rec, 0, func(pg page) error {
		for _, list := range lists {
			for _, off := range list {
				if int(off) < 1 || int(off) > pg.maxOffset() {
					return fmt.Errorf("line pointer %d out of range on a page of %d", off, pg.maxOffset())
				}
			}
		}
		pg.put16(pdFlags, pg.u16(pdFlags)&^pdPageFull)
		pruneExecute(pg, redirect, dead, unused, scratch)
		return nil
	})
}
