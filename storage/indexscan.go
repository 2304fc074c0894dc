package storage

import (
	"bytes"

	"lockd/locks"
)

// IndexEntry is one entry of an index: its key and the heap tuple it
// points to. An index scan returns them (the key valid until the scan's
// next batch); IndexBulkInsert takes them.
type IndexEntry struct {
	Key []byte
	TID TID
	// AllVisible (index-only scans, WithVisibility): the visibility map
	// called the tuple's heap page all-visible while the entry was read.
	AllVisible bool
}

// IndexScan reads the entries of an index between two bounds, in key then
// TID order or backwards, a batch at a time (btgettuple's loop): each
// batch is read under the index's lock and the caller fetches heap tuples
// after the lock is released, so a scan never holds an index lock while
// the rows it found are processed. A scan resumes after the last entry it
// returned, so entries inserted or removed between batches are met or
// missed as a concurrent B-tree scan would.
//
// An IndexScan belongs to one goroutine; the zero value is not usable
// (Store.IndexScan makes one).
type IndexScan struct {
	s              *Store
	idx            RelID
	lo, hi         []byte // nil: unbounded
	loIncl, hiIncl bool
	backward       bool
	lastTID        TID // the last entry returned (its key is lastKey)
	lastKey        []byte
	started, done  bool
	entries        []IndexEntry
	keys           []byte
	starts         []int         // where each entry's key starts in keys
	vm             VisibilityMap // set by WithVisibility
	noKeys         bool          // set by WithoutKeys
}

// IndexScan starts a scan of idx over lo ≤ key ≤ hi (a bound is
// exclusive when its incl flag is false; nil is unbounded), forward or
// backward.
func (s *Store) IndexScan(idx RelID, lo, hi []byte, loIncl, hiIncl, backward bool) *IndexScan {
	return &IndexScan{s: s, idx: idx, lo: lo, hi: hi, loIncl: loIncl, hiIncl: hiIncl, backward: backward}
}

// WithVisibility makes the scan an index-only one over heap relation
// heap: each entry's AllVisible says whether the visibility map called
// its heap page all-visible, read while the entries are read, under the
// index's lock. That lock is the interlock PostgreSQL gets by keeping
// an index-only scan's leaf page pinned: VACUUM removes the entries of
// dead tuples (under the lock, exclusive) before it frees their line
// pointers and marks their pages all-visible, so an entry read with the
// lock held whose page is all-visible points at a tuple every snapshot
// sees — never at a dead one whose entry VACUUM was about to remove, or
// at its line pointer reused. (An entry whose page is not all-visible
// needs its heap tuple fetched: if the line pointer was freed and reused
// since, the tuple there is too new for the scan's snapshot, which was
// taken before the entry was read.)
func (sc *IndexScan) WithVisibility(heap RelID) *IndexScan {
	sc.vm = sc.s.VisibilityMap(heap)
	return sc
}

// WithoutKeys makes the scan return entries without their keys (an
// index-only scan that reads no column: count(*)), which saves copying
// them.
func (sc *IndexScan) WithoutKeys() *IndexScan {
	sc.noKeys = true
	return sc
}

// maxTID is the largest TID: (key, maxTID) follows every entry of key.
var maxTID = TID{Block: ^uint32(0), Offset: ^uint16(0)}

// Next returns the next batch of at most max entries; an empty batch
// ends the scan. The entries are valid until the next call.
func (sc *IndexScan) Next(p *locks.Proc, max int) ([]IndexEntry, error) {
	sc.entries, sc.keys = sc.entries[:0], sc.keys[:0]
	if sc.done {
		return nil, nil
	}
	ix, err := sc.s.index(sc.idx)
	if err != nil {
		return nil, err
	}
	if cap(sc.entries) < max {
		sc.entries = make([]IndexEntry, 0, max)
		sc.starts = make([]int, 0, max)
	}
	starts := sc.starts[:0]
	resume := sc.started // the walk starts at the previous batch's last entry
	var last []byte      // the last entry's key (WithoutKeys)
	take := func(e *btEntry) bool {
		if resume {
			resume = false
			if e.tid == sc.lastTID && bytes.Equal(e.key, sc.lastKey) {
				return true // where the previous batch ended
			}
		}
		if !sc.inBounds(e.key) {
			if sc.pastEnd(e.key) {
				sc.done = true
				return false
			}
			return true // below the start bound: only before the first entry
		}
		if len(sc.entries) == max {
			return false
		}
		if sc.noKeys {
			last = e.key
			sc.entries = append(sc.entries, IndexEntry{TID: e.tid})
			return true
		}
		starts = append(starts, len(sc.keys))
		sc.keys = append(sc.keys, e.key...)
		sc.entries = append(sc.entries, IndexEntry{TID: e.tid})
		return true
	}
	var visited int
	ix.lock.Acquire(p, locks.LWShared)
	switch {
	case sc.backward && sc.started:
		visited = ix.tree.descend(sc.lastKey, sc.lastTID, take)
	case sc.backward && sc.hi != nil:
		visited = ix.tree.descend(sc.hi, maxTID, take)
	case sc.backward:
		visited = ix.tree.descend(nil, TID{}, take)
	case sc.started:
		visited = ix.tree.ascend(sc.lastKey, sc.lastTID, take)
	default:
		visited = ix.tree.ascend(sc.lo, TID{}, take)
	}
	if sc.vm.r != nil {
		blk, vis := InvalidBlock, false
		for i := range sc.entries {
			if b := sc.entries[i].TID.Block; b != blk {
				blk, vis = b, sc.vm.AllVisible(b)
			}
			sc.entries[i].AllVisible = vis
		}
	}
	if sc.noKeys && last != nil {
		sc.lastKey = append(sc.lastKey[:0], last...)
	}
	ix.lock.Release(p)
	sc.starts = starts
	b, shared := sc.s.backend(p)
	sc.s.countIndexIO(b, shared, sc.idx, visited)
	if len(sc.entries) < max {
		sc.done = true
	}
	if sc.noKeys {
		if n := len(sc.entries); n > 0 {
			sc.started = true
			sc.lastTID = sc.entries[n-1].TID
		}
		return sc.entries, nil
	}
	for i := range sc.entries {
		end := len(sc.keys)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		sc.entries[i].Key = sc.keys[starts[i]:end:end]
	}
	if n := len(sc.entries); n > 0 {
		sc.started = true
		sc.lastKey = append(sc.lastKey[:0], sc.entries[n-1].Key...)
		sc.lastTID = sc.entries[n-1].TID
	}
	return sc.entries, nil
}

// inBounds reports whether key lies within the scan's bounds.
func (sc *IndexScan) inBounds(key []byte) bool {
	if sc.lo != nil {
		if c := bytes.Compare(key, sc.lo); c < 0 || c == 0 && !sc.loIncl {
			return false
		}
	}
	if sc.hi != nil {
		if c := bytes.Compare(key, sc.hi); c > 0 || c == 0 && !sc.hiIncl {
			return false
		}
	}
	return true
}

// pastEnd reports whether key lies beyond the bound the scan moves
// toward (the upper one forward, the lower one backward).
func (sc *IndexScan) pastEnd(key []byte) bool {
	if sc.backward {
		if sc.lo == nil {
			return false
		}
		c := bytes.Compare(key, sc.lo)
		return c < 0 || c == 0 && !sc.loIncl
	}
	if sc.hi == nil {
		return false
	}
	c := bytes.Compare(key, sc.hi)
	return c > 0 || c == 0 && !sc.hiIncl
}
