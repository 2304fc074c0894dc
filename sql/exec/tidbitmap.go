package exec

import (
	"math/bits"
	"slices"

	"lockd/storage"
)

// A tidBitmap is the set of heap tuple ids a bitmap index scan finds, as
// PostgreSQL's tidbitmap.c keeps it: per heap page either the exact
// offsets (a bit per line pointer) or, once the set outgrows its memory
// budget (work_mem), a lossy entry that says only "some tuples of this
// page", whose tuples the heap scan must recheck against the index
// conditions. Lossy pages are grouped in chunks of bmChunkPages pages,
// one entry per chunk, so turning pages lossy frees entries.
//
// The budget is counted in entries, as PostgreSQL counts them: maxEntries
// is work_mem over the size of one hash table entry. When an insertion
// takes the set past it, exact pages are turned lossy (lossify) until half
// the budget is free; if that cannot be done the budget doubles.
//
// A tidBitmap belongs to one scan and is not safe for concurrent use. Its
// zero value is not usable (newTIDBitmap); reset empties it for the next
// loop of a rescanned scan, keeping its memory.
type tidBitmap struct {
	// entries holds pages and chunks; index maps a page's block (a
	// chunk's first block) to its position. Removed entries are marked
	// dead and skipped; reset reclaims them.
	entries []bmEntry
	index   map[uint32]int32
	// chunks maps a chunk's first block to its entry, for pages of the
	// chunk that were turned lossy
	chunks map[uint32]int32

	live       int // entries not dead: pages plus chunks
	maxEntries int
	lossified  bool // some page is lossy

	iter []int32 // iteration order, sorted by block
}

// bmEntry is an exact page (offsets set in words) or a lossy chunk (the
// chunk's pages set in words, counted from its first block).
type bmEntry struct {
	blk     uint32
	chunk   bool
	dead    bool
	recheck bool // an exact page whose tuples need the recheck anyway
	words   [bmWords]uint64
}

const (
	// bmMaxOffsets is MaxHeapTuplesPerPage for 8 kB pages
	bmMaxOffsets = 291
	bmWords      = (bmMaxOffsets + 1 + 63) / 64
	// bmChunkPages is PAGES_PER_CHUNK: BLCKSZ / 32
	bmChunkPages = storage.PageSize / 32
	// bmEntryBytes is what one page table entry costs PostgreSQL: a
	// PagetableEntry (block, status, flags, bitmap words) and the
	// simplehash slot's two pointers (tbm_calculate_entries)
	bmEntryBytes = 8 + bmWords*8 + 2*8
)

// bitmapMaxEntries is tbm_calculate_entries: how many entries workMem
// bytes hold, at least 16.
func bitmapMaxEntries(workMem int64) int {
	n := workMem / bmEntryBytes
	if n < 16 {
		n = 16
	}
	if n > 1<<30 {
		n = 1 << 30
	}
	return int(n)
}

func newTIDBitmap(maxEntries int) *tidBitmap {
	return &tidBitmap{index: map[uint32]int32{}, chunks: map[uint32]int32{}, maxEntries: maxEntries}
}

// reset empties the set, keeping its memory, with a new budget.
func (b *tidBitmap) reset(maxEntries int) {
	b.entries = b.entries[:0]
	clear(b.index)
	clear(b.chunks)
	b.live, b.maxEntries, b.lossified = 0, maxEntries, false
	b.iter = b.iter[:0]
}

func chunkStart(blk uint32) uint32 { return blk - blk%bmChunkPages }

// pageLossy reports whether blk is in a lossy chunk.
func (b *tidBitmap) pageLossy(blk uint32) bool {
	if !b.lossified {
		return false
	}
	i, ok := b.chunks[chunkStart(blk)]
	if !ok {
		return false
	}
	bit := blk - chunkStart(blk)
	return b.entries[i].words[bit/64]&(1<<(bit%64)) != 0
}

// add adds one tuple id.
func (b *tidBitmap) add(tid storage.TID) {
	if b.pageLossy(tid.Block) {
		return
	}
	i, ok := b.index[tid.Block]
	if !ok {
		i = b.newEntry(tid.Block, false)
	}
	off := uint(tid.Offset)
	b.entries[i].words[off/64] |= 1 << (off % 64)
	if b.live > b.maxEntries {
		b.lossify()
	}
}

func (b *tidBitmap) newEntry(blk uint32, chunk bool) int32 {
	i := int32(len(b.entries))
	b.entries = append(b.entries, bmEntry{blk: blk, chunk: chunk})
	if chunk {
		b.chunks[blk] = i
	} else {
		b.index[blk] = i
	}
	b.live++
	return i
}

// markLossy makes page blk lossy (tbm_mark_page_lossy): its exact entry,
// if any, goes, and its bit is set in its chunk's entry.
func (b *tidBitmap) markLossy(blk uint32) {
	b.lossified = true
	if i, ok := b.index[blk]; ok {
		b.entries[i].dead = true
		delete(b.index, blk)
		b.live--
	}
	start := chunkStart(blk)
	i, ok := b.chunks[start]
	if !ok {
		i = b.newEntry(start, true)
	}
	bit := blk - start
	b.entries[i].words[bit/64] |= 1 << (bit % 64)
}

// lossify turns exact pages lossy until half the budget is free, in
// block order; if that is not enough the budget doubles (tbm_lossify).
func (b *tidBitmap) lossify() {
	order := b.sortedLive()
	for _, i := range order {
		e := &b.entries[i]
		if e.chunk || e.dead {
			continue
		}
		b.markLossy(e.blk)
		if b.live <= b.maxEntries/2 {
			break
		}
	}
	if b.live > b.maxEntries/2 {
		b.maxEntries = 2 * b.live
	}
	b.compact()
}

// compact drops dead entries when they are most of the slice.
func (b *tidBitmap) compact() {
	if len(b.entries) < 2*b.live+64 {
		return
	}
	out := b.entries[:0]
	for _, e := range b.entries {
		if !e.dead {
			out = append(out, e)
		}
	}
	b.entries = out
	clear(b.index)
	clear(b.chunks)
	for i := range b.entries {
		if b.entries[i].chunk {
			b.chunks[b.entries[i].blk] = int32(i)
		} else {
			b.index[b.entries[i].blk] = int32(i)
		}
	}
}

// sortedLive returns the live entries' positions by block, a chunk
// before the exact page of its first block.
func (b *tidBitmap) sortedLive() []int32 {
	order := b.iter[:0]
	for i := range b.entries {
		if !b.entries[i].dead {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(x, y int32) int {
		ex, ey := &b.entries[x], &b.entries[y]
		switch {
		case ex.blk < ey.blk:
			return -1
		case ex.blk > ey.blk:
			return 1
		case ex.chunk && !ey.chunk:
			return -1
		case !ex.chunk && ey.chunk:
			return 1
		}
		return 0
	})
	b.iter = order
	return order
}

// intersect keeps only the tuples also in o (tbm_intersect): an exact
// page meeting a lossy one stays exact but needs the recheck; a lossy
// page stays lossy where o has the page in any form.
func (b *tidBitmap) intersect(o *tidBitmap) {
	for i := range b.entries {
		e := &b.entries[i]
		if e.dead {
			continue
		}
		if e.chunk {
			for w := range e.words {
				for word := e.words[w]; word != 0; word &= word - 1 {
					bit := uint32(w*64 + bits.TrailingZeros64(word))
					blk := e.blk + bit
					if _, ok := o.index[blk]; !ok && !o.pageLossy(blk) {
						e.words[w] &^= 1 << (bit % 64)
					}
				}
			}
			if e.empty() {
				e.dead = true
				delete(b.chunks, e.blk)
				b.live--
			}
			continue
		}
		if o.pageLossy(e.blk) {
			e.recheck = true
			continue
		}
		j, ok := o.index[e.blk]
		if ok {
			oe := &o.entries[j]
			for w := range e.words {
				e.words[w] &= oe.words[w]
			}
			e.recheck = e.recheck || oe.recheck
		}
		if !ok || e.empty() {
			e.dead = true
			delete(b.index, e.blk)
			b.live--
		}
	}
}

// union adds o's tuples (tbm_union): o's lossy pages are lossy here.
func (b *tidBitmap) union(o *tidBitmap) {
	for j := range o.entries {
		oe := &o.entries[j]
		if oe.dead {
			continue
		}
		if oe.chunk {
			for w := range oe.words {
				for word := oe.words[w]; word != 0; word &= word - 1 {
					b.markLossy(oe.blk + uint32(w*64+bits.TrailingZeros64(word)))
				}
			}
			continue
		}
		if b.pageLossy(oe.blk) {
			continue
		}
		i, ok := b.index[oe.blk]
		if !ok {
			i = b.newEntry(oe.blk, false)
		}
		e := &b.entries[i]
		for w := range e.words {
			e.words[w] |= oe.words[w]
		}
		e.recheck = e.recheck || oe.recheck
	}
	if b.live > b.maxEntries {
		b.lossify()
	}
}

func (e *bmEntry) empty() bool {
	for _, w := range e.words {
		if w != 0 {
			return false
		}
	}
	return true
}

// bmPage is one heap page of the iteration: its block and, for an exact
// page, its offsets in ascending order (nil for a lossy page: every
// tuple, rechecked).
type bmPage struct {
	blk     uint32
	offsets []uint16
	lossy   bool
	recheck bool
}

// bmIterator walks a bitmap's pages in block order (tbm_iterate),
// the pages of lossy chunks merged with the exact ones.
type bmIterator struct {
	b     *tidBitmap
	pages []bmRef
	pos   int
	offs  [bmMaxOffsets + 1]uint16
}

// bmRef is a page to visit: an exact page's entry, or -1 for a lossy one.
type bmRef struct {
	blk   uint32
	entry int32
}

// begin starts an iteration; the bitmap must not change during it.
func (it *bmIterator) begin(b *tidBitmap) {
	it.b, it.pos = b, 0
	pages := it.pages[:0]
	for i := range b.entries {
		e := &b.entries[i]
		switch {
		case e.dead:
		case e.chunk:
			for w := range e.words {
				for word := e.words[w]; word != 0; word &= word - 1 {
					pages = append(pages, bmRef{blk: e.blk + uint32(w*64+bits.TrailingZeros64(word)), entry: -1})
				}
			}
		default:
			pages = append(pages, bmRef{blk: e.blk, entry: int32(i)})
		}
	}
	slices.SortFunc(pages, func(x, y bmRef) int {
		switch {
		case x.blk < y.blk:
			return -1
		case x.blk > y.blk:
			return 1
		}
		return 0
	})
	it.pages = pages
}

// next returns the next page, false at the end. The page's offsets are
// valid until the next call.
func (it *bmIterator) next() (bmPage, bool) {
	if it.pos >= len(it.pages) {
		return bmPage{}, false
	}
	r := it.pages[it.pos]
	it.pos++
	if r.entry < 0 {
		return bmPage{blk: r.blk, lossy: true, recheck: true}, true
	}
	e := &it.b.entries[r.entry]
	n := 0
	for w := range e.words {
		for word := e.words[w]; word != 0; word &= word - 1 {
			it.offs[n] = uint16(w*64 + bits.TrailingZeros64(word))
			n++
		}
	}
	return bmPage{blk: e.blk, offsets: it.offs[:n], recheck: e.recheck}, true
}
