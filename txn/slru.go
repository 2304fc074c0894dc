package txn

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"lockd/vfs"
)

// slru is an in-memory array of 8 kB pages persisted as PostgreSQL-style
// segment files of 32 pages (named by segment number in four hex digits),
// for the multixact offsets and members. Pages below base were truncated.
// The owner's lock guards pages and base; page contents are read and
// written under it too. Dirty flags are atomic so Checkpoint can clear them
// under the lock held shared, as the commit log does.
type slru struct {
	fs    vfs.FS
	dir   string // segment directory; "" = not persistent
	base  int    // page number of pages[0]
	pages []*slruPage
}

const slruPageSize = 8192

type slruPage struct {
	dirty atomic.Bool
	data  [slruPageSize]byte
}

// page returns page n, creating it (zeroed, dirty) and every page before
// it that is missing when create is set; nil if it does not exist (or was
// truncated) and create is not set. Caller holds the owner's lock,
// exclusive when create is set.
func (s *slru) page(n int, create bool) *slruPage {
	if n < s.base {
		return nil
	}
	for create && n-s.base >= len(s.pages) {
		pg := new(slruPage)
		pg.dirty.Store(true)
		s.pages = append(s.pages, pg)
	}
	if n-s.base >= len(s.pages) {
		return nil
	}
	return s.pages[n-s.base]
}

// load reads the segment files of s.dir. Missing trailing pages read as
// absent; a hole between present segments is corruption.
func (s *slru) load() error {
	if err := s.fs.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("txn: %w", err)
	}
	ents, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return err
	}
	minSeg, maxSeg := -1, -1
	present := map[int]bool{}
	for _, e := range ents {
		name := e.Name()
		if len(name) != 4 || !e.Type().IsRegular() {
			continue
		}
		seg, err := strconv.ParseUint(name, 16, 16)
		if err != nil {
			continue
		}
		present[int(seg)] = true
		if minSeg < 0 || int(seg) < minSeg {
			minSeg = int(seg)
		}
		maxSeg = max(maxSeg, int(seg))
	}
	if maxSeg < 0 {
		return nil
	}
	s.base = minSeg * clogPagesPerSegment
	for seg := minSeg; seg <= maxSeg; seg++ {
		name := filepath.Join(s.dir, fmt.Sprintf("%04X", seg))
		if !present[seg] {
			return fmt.Errorf("txn: segment %s is missing", name)
		}
		data, err := vfs.ReadFile(s.fs, name)
		if err != nil {
			return err
		}
		if len(data)%slruPageSize != 0 || len(data) > clogPagesPerSegment*slruPageSize ||
			seg < maxSeg && len(data) != clogPagesPerSegment*slruPageSize {
			return fmt.Errorf("txn: segment %s has invalid size %d", name, len(data))
		}
		for off := 0; off < len(data); off += slruPageSize {
			pg := new(slruPage)
			copy(pg.data[:], data[off:])
			s.pages = append(s.pages, pg)
		}
	}
	return nil
}

// checkpoint writes every segment with a dirty page (temp file, fsync,
// rename) and removes segment files wholly below base. lockShared and
// unlock bracket each segment's copy.
func (s *slru) checkpoint(lockShared, unlock func()) error {
	if s.dir == "" {
		return nil
	}
	buf := make([]byte, 0, clogPagesPerSegment*slruPageSize)
	wrote := false
	lockShared()
	firstSeg := s.base / clogPagesPerSegment
	unlock()
	for seg := firstSeg; ; seg++ {
		lockShared()
		first := max(seg*clogPagesPerSegment, s.base)
		end := s.base + len(s.pages)
		if first >= end {
			unlock()
			break
		}
		last := min(end, (seg+1)*clogPagesPerSegment)
		dirty := false
		pages := s.pages[first-s.base : last-s.base : last-s.base]
		for _, pg := range pages {
			if pg.dirty.Swap(false) {
				dirty = true
			}
		}
		buf = buf[:0]
		if dirty {
			// A truncated head of the segment is written as zeros.
			buf = append(buf, make([]byte, (first-seg*clogPagesPerSegment)*slruPageSize)...)
			for _, pg := range pages {
				buf = append(buf, pg.data[:]...)
			}
		}
		unlock()
		if !dirty {
			continue
		}
		if err := writeFileAtomic(s.fs, s.dir, fmt.Sprintf("%04X", seg), buf); err != nil {
			for _, pg := range pages {
				pg.dirty.Store(true)
			}
			return err
		}
		wrote = true
	}
	ents, err := s.fs.ReadDir(s.dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range ents {
		if seg, err := strconv.ParseUint(e.Name(), 16, 16); err == nil && len(e.Name()) == 4 && int(seg) < firstSeg {
			if err := s.fs.Remove(filepath.Join(s.dir, e.Name())); err != nil && !os.IsNotExist(err) {
				return err
			}
			wrote = true
		}
	}
	if wrote {
		return s.fs.SyncDir(s.dir)
	}
	return nil
}

// truncate forgets the pages below page n. Caller holds the owner's lock
// exclusive. The segment files go at the next checkpoint.
func (s *slru) truncate(n int) {
	if n <= s.base {
		return
	}
	cut := min(n-s.base, len(s.pages))
	clear(s.pages[:cut])
	s.pages = s.pages[cut:]
	s.base = n
}
