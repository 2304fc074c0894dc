package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"lockd/vfs"
)

// The free space map (PostgreSQL's freespace.c, fsmpage.c), kept in memory.
//
// One byte per heap page holds its free space in 32-byte categories
// (FSM_CATEGORIES = 256), packed four to an atomic word so that updates
// need no lock. Pages are grouped in chunks of fsmChunkPages; each chunk
// has a hint word holding (an upper bound of) the largest category in it
// plus a version, playing the part of PostgreSQL's upper FSM levels: a
// search skips chunks whose hint is too small. A search that scans a whole
// chunk without success lowers its hint, unless a raise happened meanwhile
// (the version changed), so a raise is never lost. Like PostgreSQL's, the
// map is only a hint: the inserter checks the page's real free space under
// its content lock and records the truth when it differs.
//
// The chunk directory is copy-on-write: it grows (under mu) when the
// relation is extended, after the new pages are in the file, so the map
// never names a page past the end of the file.
//
// Persistence: Checkpoint writes DataDir/base/<rel>_fsm; Open reads it and
// rebuilds the part it does not cover by scanning pages.
const (
	fsmChunkPages = 4096
	fsmChunkWords = fsmChunkPages / 4
	fsmCatStep    = PageSize / 256 // 32
	// maxFSMRequest is MaxFSMRequestSize: a page with this much room gets
	// the top category.
	maxFSMRequest = MaxTupleSize
	fsmFileMagic  = "LKDFSM01"
)

type fsmChunk struct {
	words [fsmChunkWords]atomic.Uint32
	hint  atomic.Uint32 // bits 0..7 max category (upper bound), 8..31 version
}

type fsm struct {
	mu     sync.Mutex                  // serialises growth and reset
	chunks atomic.Pointer[[]*fsmChunk] // copy-on-write directory
	npages atomic.Uint32               // pages covered
	next   atomic.Uint32               // where the next search starts (fp_next_slot)
}

// spaceToCat is fsm_space_avail_to_cat.
func spaceToCat(avail int) uint8 {
	if avail >= maxFSMRequest {
		return 255
	}
	c := avail / fsmCatStep
	if c > 254 {
		c = 254
	}
	return uint8(c)
}

// neededToCat is fsm_space_needed_to_cat.
func neededToCat(needed int) uint8 {
	if needed <= 0 {
		return 1
	}
	c := (needed + fsmCatStep - 1) / fsmCatStep
	if c > 255 {
		c = 255
	}
	return uint8(c)
}

func (f *fsm) dir() []*fsmChunk {
	if d := f.chunks.Load(); d != nil {
		return *d
	}
	return nil
}

// grow makes the map cover n pages (new ones at category 0).
func (f *fsm) grow(n uint32) {
	if n <= f.npages.Load() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.dir()
	need := int((uint64(n) + fsmChunkPages - 1) / fsmChunkPages)
	if need > len(old) {
		d := make([]*fsmChunk, need)
		copy(d, old)
		for i := len(old); i < need; i++ {
			d[i] = new(fsmChunk)
		}
		f.chunks.Store(&d)
	}
	if n > f.npages.Load() {
		f.npages.Store(n)
	}
}

// reset empties the map (truncate). No concurrent users.
func (f *fsm) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.npages.Store(0)
	f.chunks.Store(nil)
	f.next.Store(0)
}

// get returns blk's category.
func (f *fsm) get(blk uint32) uint8 {
	d := f.dir()
	if blk >= f.npages.Load() || int(blk/fsmChunkPages) >= len(d) {
		return 0
	}
	c := d[blk/fsmChunkPages]
	i := blk % fsmChunkPages
	return uint8(c.words[i/4].Load() >> (8 * (i % 4)))
}

// set records blk's category (RecordPageWithFreeSpace); blocks outside the
// map are ignored.
func (f *fsm) set(blk uint32, cat uint8) {
	d := f.dir()
	if blk >= f.npages.Load() || int(blk/fsmChunkPages) >= len(d) {
		return
	}
	c := d[blk/fsmChunkPages]
	i := blk % fsmChunkPages
	w := &c.words[i/4]
	shift := 8 * (i % 4)
	for {
		old := w.Load()
		prev := uint8(old >> shift)
		if prev == cat {
			return
		}
		nu := old&^(0xff<<shift) | uint32(cat)<<shift
		if w.CompareAndSwap(old, nu) {
			if cat > prev {
				c.raise(cat)
			}
			return
		}
	}
}

// raise lifts the chunk hint to at least cat and bumps its version.
func (c *fsmChunk) raise(cat uint8) {
	for {
		old := c.hint.Load()
		m := uint8(old)
		if cat > m {
			m = cat
		}
		nu := (old&^0xff + 0x100) | uint32(m)
		if c.hint.CompareAndSwap(old, nu) {
			return
		}
	}
}

// search returns a block with category ≥ minCat, or InvalidBlock
// (fsm_search), starting at the shared next pointer.
func (f *fsm) search(minCat uint8) uint32 {
	n := f.npages.Load()
	if n == 0 {
		return InvalidBlock
	}
	dir := f.dir()
	nchunks := min(int((uint64(n)+fsmChunkPages-1)/fsmChunkPages), len(dir))
	if nchunks == 0 {
		return InvalidBlock
	}
	start := f.next.Load()
	if start >= n {
		start = 0
	}
	sc := int(start / fsmChunkPages)
	sw := int(start%fsmChunkPages) / 4
	for step := 0; step <= nchunks; step++ {
		ci := (sc + step) % nchunks
		c := dir[ci]
		h := c.hint.Load()
		if uint8(h) < minCat {
			continue
		}
		from, to := 0, fsmChunkWords
		switch {
		case step == 0:
			from = sw
		case step == nchunks:
			to = sw
		}
		full := from == 0 && to == fsmChunkWords
		var best uint8
		for wi := from; wi < to; wi++ {
			w := c.words[wi].Load()
			if w == 0 {
				continue
			}
			for b := 0; b < 4; b++ {
				cat := uint8(w >> (8 * b))
				if cat >= minCat {
					blk := uint32(ci)*fsmChunkPages + uint32(wi*4+b)
					if blk < n {
						f.next.Store(blk)
						return blk
					}
				}
				if cat > best {
					best = cat
				}
			}
		}
		if full {
			// Nothing here: correct the hint unless it was raised meanwhile.
			c.hint.CompareAndSwap(h, h&^0xff|uint32(best))
		}
	}
	return InvalidBlock
}

// --- persistence ---

func (s *Store) fsmPath(rel RelID) string {
	return filepath.Join(s.base, strconv.FormatUint(uint64(rel), 10)+"_fsm")
}

// writeFSM persists r's map: magic, page count, one byte per page; written
// to a temporary file, synced and renamed into place.
func (s *Store) writeFSM(r *relation) error {
	// Hold the file open so a concurrent DropRelation cannot remove the
	// map file before this writes it back.
	r.ioMu.RLock()
	defer r.ioMu.RUnlock()
	if r.dropped {
		return nil
	}
	n := r.fsm.npages.Load()
	path := s.fsmPath(r.id)
	buf := make([]byte, 0, 12+n)
	buf = append(buf, fsmFileMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, n)
	for blk := uint32(0); blk < n; blk++ {
		buf = append(buf, r.fsm.get(blk))
	}
	// A hint: no directory sync (a lost rename leaves the old map, which
	// loadFSM completes from the pages).
	tmp := path + ".tmp"
	f, err := s.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	_, err = f.WriteAt(buf, 0)
	if err == nil {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = s.fs.Rename(tmp, path)
	}
	if err != nil {
		s.fs.Remove(tmp)
		return fmt.Errorf("storage: writing free space map: %w", err)
	}
	return nil
}

// loadFSM reads r's map file and rebuilds whatever it does not cover (all
// of it if the file is missing or unreadable) from the pages in the file.
func (s *Store) loadFSM(r *relation) error {
	nblocks := r.nblocks.Load()
	r.fsm.grow(nblocks)
	have := uint32(0)
	if data, err := vfs.ReadFile(s.fs, s.fsmPath(r.id)); err == nil && len(data) >= 12 && string(data[:8]) == fsmFileMagic {
		n := binary.LittleEndian.Uint32(data[8:12])
		cats := data[12:]
		if int(n) == len(cats) {
			have = min(n, nblocks)
			for blk := uint32(0); blk < have; blk++ {
				r.fsm.set(blk, cats[blk])
			}
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		s.logger.Warn("could not read free space map, rebuilding", "rel", r.id, "err", err)
	}
	if have == nblocks {
		return nil
	}
	buf := make([]byte, PageSize)
	for blk := have; blk < nblocks; blk++ {
		n, err := r.file.ReadAt(buf, int64(blk)*PageSize)
		if err != nil && !(err == io.EOF && n == PageSize) {
			return fmt.Errorf("storage: rebuilding free space map of %d: %w", r.id, err)
		}
		r.fsm.set(blk, spaceToCat(page(buf).freeSpace()))
	}
	return nil
}
