package txn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"lockd/locks"
	"lockd/vfs"
	"lockd/wal"
)

// Commit log layout, as PostgreSQL's clog.c: two status bits per xid, four
// xids per byte, 8 kB pages, 32 pages per segment file named by its
// segment number in four hex digits (pg_xact/0000, pg_xact/0001, ...).
const (
	clogBitsPerXid      = 2
	clogXidsPerByte     = 4
	clogPageSize        = 8192
	clogXidsPerPage     = clogPageSize * clogXidsPerByte // 32768
	clogPagesPerSegment = 32                             // SLRU_PAGES_PER_SEGMENT
	clogStatusMask      = 1<<clogBitsPerXid - 1
)

// nextXidFile is the file in pg_xact holding an upper bound of every xid
// ever assigned: 4 bytes little-endian xid, 4 bytes CRC-32 of them.
const nextXidFile = "nextxid"

// clogXidsPerLSNGroup is how many xids share one async-commit LSN
// (CLOG_XACTS_PER_LSN_GROUP).
const clogXidsPerLSNGroup = 32

// clogPage is one 8 kB commit log page.
type clogPage struct {
	dirty atomic.Bool // set under the XactSLRU lock exclusive, cleared by Checkpoint under it shared
	data  [clogPageSize]byte
	// lsns holds, per group of 32 xids, the newest asynchronous commit
	// record among them (0: none): until the log is flushed past it, their
	// commits may not be hinted on tuples (xlog.go). Memory only: after a
	// restart every record is flushed.
	lsns *[clogXidsPerPage / clogXidsPerLSNGroup]atomic.Uint64
}

// commitLog is the in-memory commit log (PostgreSQL's CLOG SLRU, with every
// page resident: 8 kB per 32768 xids, 64 MB for 2^28 xids). lock is the
// XactSLRU LWLock: shared to read a status, exclusive to set one or add a
// page. Its zero value is an empty log of TrancheOther; Open inits lock.
type commitLog struct {
	lock   locks.LWLock
	pages  []*clogPage // guarded by lock; index is the page number
	npages int         // len(pages), guarded by the XidGen lock (extend's fast path)
}

func clogPos(xid Xid) (page, byteIdx int, shift uint) {
	return int(xid / clogXidsPerPage), int(xid%clogXidsPerPage) / clogXidsPerByte,
		uint(xid%clogXidsPerByte) * clogBitsPerXid
}

// status returns the commit log entry of xid (TransactionLogFetch): special
// xids are answered without the log, xids beyond the log read InProgress.
func (c *commitLog) status(p *locks.Proc, xid Xid) XidStatus {
	if !xid.IsNormal() {
		if xid == InvalidXid {
			return Aborted
		}
		return Committed // BootstrapXid, FrozenXid
	}
	page, idx, shift := clogPos(xid)
	st := InProgress
	c.lock.Acquire(p, locks.LWShared)
	if page < len(c.pages) {
		st = XidStatus(c.pages[page].data[idx]>>shift) & clogStatusMask
	}
	c.lock.Release(p)
	return st
}

// setTreeStatus records the final status of a transaction and its
// subtransactions (TransactionIdSetTreeStatus): all under one XactSLRU
// exclusive hold, so a reader (who takes the lock shared) sees either none
// or all of them changed, even across pages. PostgreSQL needs the
// sub-committed state to get the same effect page by page. The pages
// exist: extend made them when the xids were assigned.
func (c *commitLog) setTreeStatus(p *locks.Proc, xid Xid, subs []Xid, st XidStatus) {
	c.setTreeStatusLSN(p, xid, subs, st, 0)
}

// setTreeStatusLSN is setTreeStatus for a commit whose record at lsn is
// not flushed yet (0: it is), remembered per group of xids
// (TransactionIdSetTreeStatus with a valid lsn).
func (c *commitLog) setTreeStatusLSN(p *locks.Proc, xid Xid, subs []Xid, st XidStatus, lsn wal.LSN) {
	c.lock.Acquire(p, locks.LWExclusive)
	if xid.IsValid() {
		c.setLocked(xid, st, lsn)
	}
	for _, x := range subs {
		c.setLocked(x, st, lsn)
	}
	c.lock.Release(p)
}

func (c *commitLog) setLocked(xid Xid, st XidStatus, lsn wal.LSN) {
	page, idx, shift := clogPos(xid)
	pg := c.pages[page]
	pg.data[idx] = pg.data[idx]&^(clogStatusMask<<shift) | byte(st)<<shift
	pg.dirty.Store(true)
	if lsn != 0 {
		if pg.lsns == nil {
			pg.lsns = new([clogXidsPerPage / clogXidsPerLSNGroup]atomic.Uint64)
		}
		g := &pg.lsns[int(xid%clogXidsPerPage)/clogXidsPerLSNGroup]
		if wal.LSN(g.Load()) < lsn {
			g.Store(uint64(lsn))
		}
	}
}

// statusLSN is status plus the async-commit LSN of xid's group (0 if
// none).
func (c *commitLog) statusLSN(p *locks.Proc, xid Xid) (XidStatus, wal.LSN) {
	if !xid.IsNormal() {
		return c.status(p, xid), 0
	}
	page, idx, shift := clogPos(xid)
	st, lsn := InProgress, wal.LSN(0)
	c.lock.Acquire(p, locks.LWShared)
	if page < len(c.pages) {
		pg := c.pages[page]
		st = XidStatus(pg.data[idx]>>shift) & clogStatusMask
		if pg.lsns != nil {
			lsn = wal.LSN(pg.lsns[int(xid%clogXidsPerPage)/clogXidsPerLSNGroup].Load())
		}
	}
	c.lock.Release(p)
	return st, lsn
}

// extend makes sure the page holding xid exists (ExtendCLOG: a new page is
// zeroed, i.e. all in progress). Caller holds the XidGen lock exclusive.
func (c *commitLog) extend(p *locks.Proc, xid Xid) {
	page := int(xid / clogXidsPerPage)
	if page < c.npages {
		return
	}
	c.lock.Acquire(p, locks.LWExclusive)
	c.growLocked(page)
	c.lock.Release(p)
}

// growLocked appends zeroed pages up to and including page. Caller holds
// lock exclusive (or has the log to itself, in Open).
func (c *commitLog) growLocked(page int) {
	for len(c.pages) <= page {
		pg := new(clogPage)
		pg.dirty.Store(true)
		c.pages = append(c.pages, pg)
	}
	c.npages = len(c.pages)
}

// abortInProgress marks every xid in [FirstNormalXid, next) that the log
// still shows in progress as aborted: at start-up no transaction runs, so
// those were cut short by the last shutdown or crash (PostgreSQL reaches
// the same state because TransactionIdDidCommit is false for them and
// recovery writes abort records). The caller has the log to itself.
func (c *commitLog) abortInProgress(next Xid) int {
	if next > FirstNormalXid {
		c.growLocked(int((next - 1) / clogXidsPerPage))
	}
	n := 0
	for x := FirstNormalXid; x < next; {
		page, idx, shift := clogPos(x)
		pg := c.pages[page]
		if shift == 0 && x+clogXidsPerByte <= next {
			if b := pg.data[idx]; (b|b>>1)&0x55 == 0x55 { // no in-progress pair
				x += clogXidsPerByte
				continue
			}
		}
		if XidStatus(pg.data[idx]>>shift)&clogStatusMask == InProgress {
			pg.data[idx] |= byte(Aborted) << shift
			pg.dirty.Store(true)
			n++
		}
		x++
	}
	return n
}

// loadCLOG reads the segment files of dir. Trailing segments may be
// missing (their xids were never checkpointed and read as in progress,
// hence aborted); a hole below the last segment is corruption.
func loadCLOG(fsys vfs.FS, dir string) ([]*clogPage, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	present := map[int]bool{}
	maxSeg := -1
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
		maxSeg = max(maxSeg, int(seg))
	}
	var pages []*clogPage
	for seg := 0; seg <= maxSeg; seg++ {
		if !present[seg] {
			return nil, fmt.Errorf("txn: commit log segment %s/%04X is missing", dir, seg)
		}
		name := filepath.Join(dir, fmt.Sprintf("%04X", seg))
		data, err := vfs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if len(data)%clogPageSize != 0 || len(data) > clogPagesPerSegment*clogPageSize {
			return nil, fmt.Errorf("txn: commit log segment %s has invalid size %d", name, len(data))
		}
		if seg < maxSeg && len(data) != clogPagesPerSegment*clogPageSize {
			return nil, fmt.Errorf("txn: commit log segment %s is short (%d bytes)", name, len(data))
		}
		for off := 0; off < len(data); off += clogPageSize {
			pg := new(clogPage)
			copy(pg.data[:], data[off:])
			pages = append(pages, pg)
		}
	}
	return pages, nil
}

// checkpoint writes every segment that has a dirty page, each as a whole
// file (temp file, fsync, rename), then fsyncs dir. Pages are copied under
// the XactSLRU lock shared, one segment at a time, and written outside it,
// after flush (the log up to every commit the copy shows:
// SlruPhysicalWritePage's XLogFlush). On failure the pages of the failed
// segment are marked dirty again.
func (c *commitLog) checkpoint(fsys vfs.FS, dir string, flush func()) error {
	buf := make([]byte, 0, clogPagesPerSegment*clogPageSize)
	wrote := false
	for seg := 0; ; seg++ {
		first := seg * clogPagesPerSegment
		c.lock.Acquire(nil, locks.LWShared)
		n := len(c.pages)
		if first >= n {
			c.lock.Release(nil)
			break
		}
		last := min(n, first+clogPagesPerSegment)
		dirty := false
		for _, pg := range c.pages[first:last] {
			if pg.dirty.Swap(false) {
				dirty = true
			}
		}
		buf = buf[:0]
		if dirty {
			for _, pg := range c.pages[first:last] {
				buf = append(buf, pg.data[:]...)
			}
		}
		pages := c.pages[first:last:last]
		c.lock.Release(nil)
		if !dirty {
			continue
		}
		flush()
		if err := writeFileAtomic(fsys, dir, fmt.Sprintf("%04X", seg), buf); err != nil {
			for _, pg := range pages {
				pg.dirty.Store(true)
			}
			return err
		}
		wrote = true
	}
	if wrote {
		return fsys.SyncDir(dir)
	}
	return nil
}

// writeFileAtomic replaces dir/name with data: write a temp file, fsync
// it, rename it over the old one. The caller fsyncs dir.
func writeFileAtomic(fsys vfs.FS, dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("txn: writing %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// readNextXid reads pg_xact/nextxid; ok is false if it does not exist.
func readNextXid(fsys vfs.FS, dir string) (next Xid, ok bool, err error) {
	name := filepath.Join(dir, nextXidFile)
	b, err := vfs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if len(b) != 8 || crc32.ChecksumIEEE(b[:4]) != binary.LittleEndian.Uint32(b[4:]) {
		return 0, false, fmt.Errorf("txn: %s is corrupt", name)
	}
	next = Xid(binary.LittleEndian.Uint32(b))
	if !next.IsNormal() {
		return 0, false, fmt.Errorf("txn: %s holds invalid next xid %d", name, next)
	}
	return next, true, nil
}

// writeNextXid durably replaces pg_xact/nextxid with next.
func writeNextXid(fsys vfs.FS, dir string, next Xid) error {
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:4], uint32(next))
	binary.LittleEndian.PutUint32(b[4:], crc32.ChecksumIEEE(b[:4]))
	if err := writeFileAtomic(fsys, dir, nextXidFile, b[:]); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}
