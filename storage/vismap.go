package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"lockd/locks"
	"lockd/txn"
	"lockd/vfs"
	"lockd/wal"
)

// The visibility map (PostgreSQL's visibilitymap.c): one bit per heap
// page, set when every tuple on the page is visible to every transaction,
// present and future. An index-only scan answers from the index entry
// alone for a tuple on such a page; VACUUM and ANALYZE count the set bits
// (pg_class.relallvisible), which the planner's index-only scan costs use.
// lockd does not freeze tuples, so there is no all-frozen bit.
//
// # The rules that keep a set bit true
//
//   - VACUUM sets a page's bit under the page's exclusive content lock
//     (its cleanup lock), having found every tuple on it live, its
//     inserter's commit hinted (so the commit record is on disk: the hint
//     waits for it) and older than the oldest xmin of every running
//     transaction, and no LP_DEAD line pointer left. It inserts the
//     Heap2 VISIBLE record first, then sets the bit.
//   - COPY FREEZE sets the bit of a page it fills from empty right after
//     its MULTI_INSERT record (multiinsert.go): its tuples are frozen,
//     and no other transaction can read the relation's new storage before
//     the inserting one commits.
//   - Every change that can make a tuple of the page invisible to someone
//     — an insert, the old and the new page of an update, a delete, and
//     the in-place header changes (a speculative insertion killed, a row
//     moved to another partition) — clears the bit under the same
//     exclusive content lock, before its record is inserted (and before
//     the caller adds index entries for a new tuple). Replay of those
//     records clears the bit again, whether or not the page itself needed
//     the record (PostgreSQL clears the bit from the same record too). A
//     row lock does not clear it: a locker changes no one's view of the
//     tuple (PostgreSQL 15 clears only the all-frozen bit there).
//   - Clearing reads the bit first and writes only if it is set, so the
//     insert path adds no shared-memory store for a page that is not
//     all-visible.
//
// # Readers
//
// An index-only scan reads the bit with no page lock, after reading the
// index entry (under the index's lock). An inserter clears the bit
// before it inserts the index entry of the new tuple (also under the
// index's lock), so a scan that sees the entry sees the bit cleared and
// fetches the heap tuple. A scan that reads a set bit of a page whose
// tuple is being deleted by a transaction that has not cleared it yet
// returns the tuple, which is right: the deleter has not committed, nor
// will it commit before it clears the bit.
//
// # Durability
//
// The map lives in memory, as atomic words in fixed chunks behind a
// copy-on-write directory (like the free space map), and in the file
// DataDir/base/<rel>_vm, which a checkpoint writes (SaveMaps) when the map
// changed: the bits are copied, then the log is flushed up to its insert
// position — past the VISIBLE record of every set bit the copy holds,
// since a bit is set only after its record is inserted — and the file is
// replaced atomically. Recovery starts from that image and replays the log
// from the checkpoint's redo point: VISIBLE sets, heap changes clear. A
// bit the image holds stayed right if no record after the redo point
// touched it; one a record touched ends as the last such record leaves
// it, and that is what the page holds after replay too. A bit cleared
// after the copy was taken has its clearing record after the redo point
// (the clear precedes the record). A missing or unreadable file is an
// empty map: a clear bit is never wrong, only slower.
const (
	vmChunkPages = 1 << 15 // heap pages per chunk (256 MB of heap)
	vmChunkWords = vmChunkPages / 64
	vmFileMagic  = "LKDVM001"
)

// xlogHeap2Visible is XLOG_HEAP2_VISIBLE: VACUUM set a page's bit.
const xlogHeap2Visible uint8 = 0x40

type vmChunk struct {
	words [vmChunkWords]atomic.Uint64
}

// visibilityMap is one heap relation's map. The zero value is an empty
// map; it must not be copied. Bits are read and written with atomics;
// growth and reset are serialised by mu.
type visibilityMap struct {
	mu     sync.Mutex                 // serialises growth and reset
	chunks atomic.Pointer[[]*vmChunk] // copy-on-write directory
	// dirty is set after a bit changes; a checkpoint saves the map when it
	// finds it set (clearing it before taking its copy).
	dirty atomic.Bool
}

func (v *visibilityMap) dir() []*vmChunk {
	if d := v.chunks.Load(); d != nil {
		return *d
	}
	return nil
}

// word returns the word holding blk's bit and the bit, or nil if the map
// does not reach blk (its bit is clear).
func (v *visibilityMap) word(blk uint32) (*atomic.Uint64, uint64) {
	d := v.dir()
	ci := int(blk / vmChunkPages)
	if ci >= len(d) {
		return nil, 0
	}
	i := blk % vmChunkPages
	return &d[ci].words[i/64], 1 << (i % 64)
}

// allVisible reports blk's bit.
func (v *visibilityMap) allVisible(blk uint32) bool {
	w, bit := v.word(blk)
	return w != nil && w.Load()&bit != 0
}

// set sets blk's bit, growing the map to reach it; it reports whether
// the bit was clear.
func (v *visibilityMap) set(blk uint32) bool {
	w, bit := v.word(blk)
	if w == nil {
		v.grow(blk)
		w, bit = v.word(blk)
	}
	if w.Load()&bit != 0 {
		return false
	}
	w.Or(bit)
	v.dirty.Store(true)
	return true
}

// clear clears blk's bit if it is set, and reports whether it was. A bit
// that is already clear costs one atomic load: no store.
func (v *visibilityMap) clear(blk uint32) bool {
	w, bit := v.word(blk)
	if w == nil || w.Load()&bit == 0 {
		return false
	}
	w.And(^bit)
	v.dirty.Store(true)
	return true
}

// grow makes the map reach blk.
func (v *visibilityMap) grow(blk uint32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	old := v.dir()
	need := int(blk/vmChunkPages) + 1
	if need <= len(old) {
		return
	}
	d := make([]*vmChunk, need)
	copy(d, old)
	for i := len(old); i < need; i++ {
		d[i] = new(vmChunk)
	}
	v.chunks.Store(&d)
}

// reset clears every bit (the relation was emptied).
func (v *visibilityMap) reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.chunks.Store(nil)
	v.dirty.Store(true)
}

// count returns how many of the first n pages have their bit set
// (visibilitymap_count).
func (v *visibilityMap) count(n uint32) uint32 {
	total := 0
	for ci, c := range v.dir() {
		first := uint32(ci) * vmChunkPages
		if first >= n {
			break
		}
		words := vmChunkWords
		if n-first < vmChunkPages {
			words = int((n - first + 63) / 64)
		}
		for wi := 0; wi < words; wi++ {
			w := c.words[wi].Load()
			if end := first + uint32(wi+1)*64; end > n {
				w &= 1<<(64-(end-n)) - 1
			}
			total += bits.OnesCount64(w)
		}
	}
	return uint32(total)
}

// --- the Store's part ---

// PageAllVisible reports whether block blk of rel is all-visible: every
// tuple on it is visible to every transaction (VM_ALL_VISIBLE). It takes
// no lock; see the design comment above for why an index-only scan may
// trust the answer.
func (s *Store) PageAllVisible(rel RelID, blk uint32) bool {
	r := (*s.rels.Load())[rel]
	return r != nil && r.vm.allVisible(blk)
}

// VisibilityMap is a handle on one relation's visibility map, for a scan
// that asks about many pages (an index-only scan): PageAllVisible without
// the relation lookup. The zero value (an unknown relation) calls no page
// all-visible.
type VisibilityMap struct{ r *relation }

// VisibilityMap returns rel's map.
func (s *Store) VisibilityMap(rel RelID) VisibilityMap {
	return VisibilityMap{(*s.rels.Load())[rel]}
}

// AllVisible is PageAllVisible of block blk.
func (v VisibilityMap) AllVisible(blk uint32) bool { return v.r != nil && v.r.vm.allVisible(blk) }

// AllVisiblePages returns how many pages of rel are all-visible
// (visibilitymap_count), for pg_class.relallvisible.
func (s *Store) AllVisiblePages(rel RelID) (uint32, error) {
	r, err := s.relation(rel)
	if err != nil {
		return 0, err
	}
	return r.vm.count(r.nblocks.Load()), nil
}

// clearAllVisible clears block blk's bit because a tuple of the page is
// changing. The caller holds the page's content lock exclusively and has
// not yet inserted the change's record.
func (r *relation) clearAllVisible(blk uint32) { r.vm.clear(blk) }

// setAllVisible marks block blk of r all-visible (visibilitymap_set):
// logs the VISIBLE record, then sets the bit. The caller holds the page's
// content lock exclusively and has checked every tuple on it. It reports
// whether the bit was clear.
func (s *Store) setAllVisible(p *locks.Proc, r *relation, blk uint32) bool {
	if r.vm.allVisible(blk) {
		return false
	}
	if s.logging() {
		b := s.wal.Begin(p, wal.RmgrHeap2, xlogHeap2Visible)
		main := binary.LittleEndian.AppendUint32(b.Main(), uint32(r.id))
		b.SetMain(binary.LittleEndian.AppendUint32(main, blk))
		b.Insert()
	}
	return r.vm.set(blk)
}

// tupleAllVisible reports whether a tuple SatisfiesVacuum called res is
// visible to every transaction now and later, given the oldest xmin of
// the running ones (the test of lazy_scan_prune and
// heap_page_is_all_visible): live, its inserter's commit hinted — the
// hint waits until an asynchronous commit's record is flushed — and older
// than oldestXmin.
func tupleAllVisible(h *txn.TupleHeader, res txn.VacuumResult, oldestXmin txn.Xid) bool {
	if res != txn.HeapTupleLive {
		return false
	}
	committed := h.Flags&txn.XminCommitted != 0 || !h.Xmin.IsNormal() && h.Xmin.IsValid()
	return committed && txn.Precedes(h.Xmin, oldestXmin)
}

// pageAllVisible reports whether every tuple of pg is visible to every
// transaction and no line pointer is LP_DEAD (heap_page_is_all_visible).
// Hint bits it learns are written to the page. The caller holds the
// page's content lock exclusively.
func (s *Store) pageAllVisible(d *bufferDesc, pg page, oldestXmin txn.Xid) bool {
	if pg.isNew() {
		return false // never formatted: PostgreSQL leaves such pages out of the map
	}
	var h txn.TupleHeader
	for off := 1; off <= pg.maxOffset(); off++ {
		o, f, l := pg.itemID(off)
		switch f {
		case lpDead:
			return false
		case lpNormal:
		default:
			continue
		}
		res := s.judgeVacuum(d, pg[o:o+l], &h, oldestXmin)
		if !tupleAllVisible(&h, res, oldestXmin) {
			return false
		}
	}
	return true
}

// redoHeap2Visible replays VISIBLE: it sets a page's bit. It runs
// whatever the page's LSN says — the heap page is not touched — as
// heap_xlog_visible updates the map even when the heap page is newer.
func (s *Store) redoHeap2Visible(rec *wal.Record) error {
	if len(rec.Main) < 8 {
		return errShortRecord
	}
	if r := (*s.rels.Load())[RelID(binary.LittleEndian.Uint32(rec.Main))]; r != nil {
		r.vm.set(binary.LittleEndian.Uint32(rec.Main[4:]))
	}
	return nil
}

// redoClearAllVisible clears the bits of the pages a heap record changes
// tuples of, before the pages themselves are brought up to date (and
// whether or not they need the record).
func (s *Store) redoClearAllVisible(rec *wal.Record) {
	for id := 0; id < 2; id++ {
		ref := rec.Block(id)
		if ref == nil {
			continue
		}
		if r := (*s.rels.Load())[RelID(ref.Rel.Rel)]; r != nil {
			r.vm.clear(ref.Blk)
		}
	}
}

// --- persistence ---

func (s *Store) vmPath(rel RelID) string {
	return filepath.Join(s.base, strconv.FormatUint(uint64(rel), 10)+"_vm")
}

// saveVM writes r's map to its file if it changed since the last save:
// magic, page count (u32), then the bits as little-endian 64-bit words.
// The log is flushed up to its insert position after the bits are copied
// and before the file is written, so every set bit in the file has its
// VISIBLE record on disk (WAL before data).
func (s *Store) saveVM(p *locks.Proc, r *relation) error {
	if !r.vm.dirty.Swap(false) {
		return nil
	}
	d := r.vm.dir()
	buf := make([]byte, 0, 12+len(d)*vmChunkWords*8)
	buf = append(buf, vmFileMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(d))*vmChunkPages)
	for _, c := range d {
		for i := range c.words {
			buf = binary.LittleEndian.AppendUint64(buf, c.words[i].Load())
		}
	}
	if s.wal != nil {
		s.wal.Flush(p, s.wal.InsertPosition())
	}
	// Hold the file open so a concurrent DropRelation cannot remove the
	// map file before this writes it back.
	r.ioMu.RLock()
	defer r.ioMu.RUnlock()
	if r.dropped {
		return nil
	}
	if err := vfs.WriteFileAtomic(s.fs, s.vmPath(r.id), buf); err != nil {
		r.vm.dirty.Store(true)
		return fmt.Errorf("storage: writing visibility map of %d: %w", r.id, err)
	}
	return nil
}

// loadVM reads r's map file; a missing, short or unreadable one leaves
// the map empty (every page's bit clear, which is always safe).
func (s *Store) loadVM(r *relation) {
	data, err := vfs.ReadFile(s.fs, s.vmPath(r.id))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.logger.Warn("could not read visibility map, starting it empty", "rel", r.id, "err", err)
		}
		return
	}
	if len(data) < 12 || string(data[:8]) != vmFileMagic {
		s.logger.Warn("invalid visibility map file, starting it empty", "rel", r.id)
		return
	}
	n := binary.LittleEndian.Uint32(data[8:12])
	words := data[12:]
	if n%vmChunkPages != 0 || len(words) != int(n/64)*8 {
		s.logger.Warn("invalid visibility map file, starting it empty", "rel", r.id)
		return
	}
	if n == 0 {
		return
	}
	r.vm.grow(n - 1)
	d := r.vm.dir()
	for i := 0; i < int(n/64); i++ {
		d[i/vmChunkWords].words[i%vmChunkWords].Store(binary.LittleEndian.Uint64(words[8*i:]))
	}
}
