package storage

import (
	"lockd/locks"
	"lockd/txn"
)

// Heap-only tuples (PostgreSQL's HOT, src/backend/access/heap/README.HOT).
//
// An UPDATE that changes no indexed column, and whose new version fits on
// the old version's page, makes the new version a heap-only tuple
// (txn.HeapOnly) and marks the old one HOT-updated (txn.HotUpdated): no
// index gets an entry for it, and nothing about indexes is logged. The
// versions of a row on one page then form a chain: the root — the
// version the index entries name — and the heap-only versions after it,
// linked by ctid and by each one's xmin being the update xid of the one
// before. An index entry's TID is the root's; a fetch through an index
// walks the chain to the version its snapshot sees (hotSearch,
// heap_hot_search_buffer).
//
// Pruning (prune.go) removes the chain's dead versions without an index
// pass: a dead heap-only tuple's line pointer becomes unused at once, and
// a root whose version is dead while later ones live becomes a redirect
// (LP_REDIRECT) to the first of them, so the index entries still lead
// there. A chain dead from end to end leaves an LP_DEAD root for VACUUM to
// remove from the indexes, as a dead tuple of a non-HOT update does.

// hotFollows reports whether the chain goes on after the version with
// header h (HeapTupleHeaderIsHotUpdated): it was HOT-updated by an update
// that did not abort, and its own inserter did not abort.
func hotFollows(h *txn.TupleHeader) bool {
	return h.Flags2&txn.HotUpdated != 0 && h.Flags&txn.XmaxInvalid == 0 && h.Flags&txn.XminFrozen != txn.XminInvalid
}

// chainNext returns where the chain goes on after tup (header h) on
// block blk, and the xid the next version's xmin must be; ok is false at
// the chain's end.
func (s *Store) chainNext(blk uint32, tup []byte, h *txn.TupleHeader) (next uint16, prior txn.Xid, ok bool) {
	if !hotFollows(h) {
		return 0, 0, false
	}
	c := tupleCtid(tup)
	if c.Block != blk || c.Offset == 0 {
		return 0, 0, false
	}
	return c.Offset, s.tm.UpdateXid(h), true
}

// chainMember returns the tuple at off if it can be the next member of a
// chain: a normal line pointer, heap-only unless it starts the chain, and
// inserted by prior (when prior is valid). h receives its header.
func chainMember(pg page, off uint16, first bool, prior txn.Xid, h *txn.TupleHeader) []byte {
	if off == 0 || int(off) > pg.maxOffset() {
		return nil
	}
	o, f, l := pg.itemID(int(off))
	if f != lpNormal || l < tupleHeaderSize {
		return nil
	}
	tup := pg[o : o+l]
	readHeader(tup, h)
	if !first && h.Flags2&txn.HeapOnly == 0 {
		return nil
	}
	if prior.IsValid() && h.Xmin != prior {
		return nil
	}
	return tup
}

// chainStart resolves a root line pointer: a redirect leads to its
// target, which is no longer the chain's start.
func chainStart(pg page, root uint16) (off uint16, first bool) {
	if root == 0 || int(root) > pg.maxOffset() {
		return 0, false
	}
	if o, f, _ := pg.itemID(int(root)); f == lpRedirect {
		return uint16(o), false
	}
	return root, true
}

// hotSearch walks the chain from the index-named line pointer root of
// page pg (block blk, content lock held, shared is enough) to the version
// visible to t, which it returns with its offset; h receives its header.
// With judge, allDead reports — when no version is visible — whether
// every version of the chain is dead to every transaction (against
// horizon), or the chain is gone: the index entry may then be removed
// (heap_hot_search_buffer's all_dead).
func (s *Store) hotSearch(d *bufferDesc, pg page, blk uint32, root uint16, t *txn.Txn, h *txn.TupleHeader, judge bool, horizon txn.Xid) (off uint16, tup []byte, visible, allDead bool) {
	allDead = judge
	off, first := chainStart(pg, root)
	var prior txn.Xid
	for n := 0; n < MaxTuplesPerPage; n++ {
		tup = chainMember(pg, off, first, prior, h)
		if tup == nil {
			break
		}
		before := h.Flags
		if t.Visible(h) {
			writeHints(d, tup, before, h.Flags)
			return off, tup, true, false
		}
		if allDead {
			allDead = s.tm.SatisfiesVacuum(h, horizon) == txn.HeapTupleDead
		}
		writeHints(d, tup, before, h.Flags)
		var ok bool
		if off, prior, ok = s.chainNext(blk, tup, h); !ok {
			break
		}
		first = false
	}
	return 0, nil, false, allDead
}

// chainVersion is one version of a chain, for FetchVersions.
type chainVersion struct {
	at   TID
	h    txn.TupleHeader
	ctid TID
	tup  []byte
}

// FetchVersions calls fn for each version of the chain whose root the
// index entry tid names, in chain order, whatever their visibility, until
// fn returns false — a unique check's look at every version of a key
// (SnapshotDirty through heap_hot_search_buffer). fn runs with the page
// pinned but unlocked, with a copy of the header. It returns false if the
// chain has no version left; gone then says whether its root is an
// LP_DEAD line pointer (or a redirect to nothing): every version was
// pruned, and only index entries still name it.
func (s *Store) FetchVersions(p *locks.Proc, rel RelID, tid TID, fn func(at TID, h *txn.TupleHeader, ctid TID, data []byte) bool) (found, gone bool, err error) {
	r, err := s.relation(rel)
	if err != nil {
		return false, false, err
	}
	if tid.Block >= r.nblocks.Load() || tid.Offset == 0 {
		return false, false, nil
	}
	b, _ := s.backend(p)
	id, err := s.readBuffer(p, &b.stats, r, tid.Block)
	if err != nil {
		return false, false, err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	pg := s.pool.page(id)
	var buf [4]chainVersion
	vs := buf[:0]
	d.content.Acquire(p, locks.LWShared)
	if int(tid.Offset) <= pg.maxOffset() {
		_, f, _ := pg.itemID(int(tid.Offset))
		gone = f == lpDead || f == lpRedirect
	}
	off, first := chainStart(pg, tid.Offset)
	var prior txn.Xid
	var h txn.TupleHeader
	for n := 0; n < MaxTuplesPerPage; n++ {
		tup := chainMember(pg, off, first, prior, &h)
		if tup == nil {
			break
		}
		vs = append(vs, chainVersion{at: TID{tid.Block, off}, h: h, ctid: tupleCtid(tup), tup: tup})
		var ok bool
		if off, prior, ok = s.chainNext(tid.Block, tup, &h); !ok {
			break
		}
		first = false
	}
	d.content.Release(p)
	if len(vs) == 0 {
		return false, gone, nil
	}
	for i := range vs {
		v := &vs[i]
		if !fn(v.at, &v.h, v.ctid, tupleData(v.tup)) {
			break
		}
	}
	return true, false, nil
}

// rootOffsets fills roots[off] with the root line pointer of the chain
// that holds the heap-only tuple at off, for every chain of page pg
// (heap_get_root_tuples); 0 where off is not a reachable heap-only tuple.
// older[off] says an older version of the chain is still on the page
// before it. The caller holds the content lock.
func (s *Store) rootOffsets(pg page, blk uint32, roots *[MaxTuplesPerPage + 1]uint16, older *[MaxTuplesPerPage + 1]bool) {
	clear(roots[:])
	clear(older[:])
	var h txn.TupleHeader
	for root := 1; root <= pg.maxOffset(); root++ {
		_, f, _ := pg.itemID(root)
		switch f {
		case lpRedirect:
		case lpNormal:
			if t := pg.tuple(root); t == nil || flagsWord(t).Load()>>16&uint32(txn.HeapOnly) != 0 {
				continue
			}
		default:
			continue
		}
		off, first := chainStart(pg, uint16(root))
		var prior txn.Xid
		for n := 0; n < MaxTuplesPerPage; n++ {
			tup := chainMember(pg, off, first, prior, &h)
			if tup == nil {
				break
			}
			if off != uint16(root) {
				roots[off] = uint16(root)
				older[off] = n > 0
			}
			var ok bool
			if off, prior, ok = s.chainNext(blk, tup, &h); !ok {
				break
			}
			first = false
		}
	}
}

// RootTIDs replaces each TID of tids that names a heap-only tuple of rel
// by the TID of its chain's root, which is what an index entry for it
// must name (an index build meets the version its snapshot sees, not
// necessarily the root). tids must be in TID order. broken reports that
// some chain still holds a version older than the one tids named, which
// an older snapshot may see and whose key for a new index may differ
// (PostgreSQL's broken HOT chain, which sets indcheckxmin).
func (s *Store) RootTIDs(p *locks.Proc, rel RelID, tids []TID) (broken bool, err error) {
	r, err := s.relation(rel)
	if err != nil {
		return false, err
	}
	b, _ := s.backend(p)
	var roots [MaxTuplesPerPage + 1]uint16
	var older [MaxTuplesPerPage + 1]bool
	for i := 0; i < len(tids); {
		blk := tids[i].Block
		j := i
		for j < len(tids) && tids[j].Block == blk {
			j++
		}
		id, err := s.readBuffer(p, &b.stats, r, blk)
		if err != nil {
			return false, err
		}
		d := s.pool.desc(id)
		d.content.Acquire(p, locks.LWShared)
		s.rootOffsets(s.pool.page(id), blk, &roots, &older)
		d.content.Release(p)
		d.unpin()
		for ; i < j; i++ {
			if o := tids[i].Offset; int(o) < len(roots) && roots[o] != 0 {
				broken = broken || older[o]
				tids[i].Offset = roots[o]
			}
		}
	}
	return broken, nil
}

// HotUpdated reports whether the version with header h has a later
// version of its row in a HOT chain (HeapTupleHeaderIsHotUpdated): a
// fetch through an index built over a broken chain then checks its key.
func HotUpdated(h *txn.TupleHeader) bool { return hotFollows(h) }
