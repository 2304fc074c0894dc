package wal

import (
	"encoding/binary"

	"lockd/locks"
)

// WAL buffers (PostgreSQL's XLogCtl->pages, xlblocks, GetXLogBuffer and
// AdvanceXLInsertBuffer).
//
// wal_buffers pages form a ring: the page of LSN l lives in slot
// (l / PageSize) % nbuf, and xlblocks[slot] holds the end LSN of the page
// the slot holds now, so a lookup is one atomic load and a compare. Pages
// are initialised ahead of insertion — zeroed, with their header written —
// under the WALBufMapping lock, by a backend that needs one or by the WAL
// writer in the background. A slot can take a new page only once its old
// page has been written out; if it has not, the backend that needs the
// slot writes it itself (WaitXLogInsertionsToFinish, then WALWrite, then
// XLogWrite), which pg_stat_wal counts as wal_buffers_full.
//
// Page header (XLogPageHeaderData), 24 bytes, host byte order:
//
//	0  xlp_magic    u16  PageMagic
//	2  xlp_info     u16  flags (XLP_*)
//	4  xlp_tli      u32  timeline (1)
//	8  xlp_pageaddr u64  the page's LSN
//	16 xlp_rem_len  u32  bytes of a record continued from the previous page
//	20 pad          4
//
// The first page of a segment has the long header: then xlp_sysid u64,
// xlp_seg_size u32, xlp_xlog_blcksz u32 (40 bytes).

// PageMagic is lockd's xlp_magic. It is not PostgreSQL 15's 0xD110: the
// records are lockd's own, and pg_waldump must not take them for
// PostgreSQL's.
const PageMagic = 0xD10C

const (
	xlpFirstIsContRecord = 0x0001
	xlpLongHeader        = 0x0002
)

// slot returns the buffer slot of the page holding l.
func (w *WAL) slot(l LSN) uint64 { return (uint64(l) / PageSize) % w.nbuf }

// bufPage returns slot i's page.
func (w *WAL) bufPage(i uint64) []byte { return w.pages[i*PageSize : (i+1)*PageSize] }

// getBuffer returns the WAL buffer bytes from ptr to the end of its page,
// initialising pages up to it first if needed (GetXLogBuffer). The caller
// holds insertion lock sl.held, with ptr the point its copying has reached.
func (w *WAL) getBuffer(p *locks.Proc, sl *procSlot, ptr LSN) []byte {
	pageStart := ptr - ptr%PageSize
	idx := w.slot(pageStart)
	if LSN(w.xlblocks[idx].Load()) != pageStart+PageSize {
		// Everything before this page's data is copied: say so before
		// possibly waiting, so that a backend that must write out the page
		// now in this slot does not wait for us.
		at := ptr
		switch {
		case uint64(ptr)%w.geo.segSize == longPageHeaderSize:
			at = pageStart
		case ptr%PageSize == shortPageHeaderSize:
			at = pageStart
		}
		w.updateInsertingAt(p, sl, at)
		w.advanceBuffers(p, ptr, false)
		if LSN(w.xlblocks[idx].Load()) != pageStart+PageSize {
			w.panicErr("could not find WAL buffer for %s", ptr)
		}
	}
	off := uint64(ptr % PageSize)
	return w.pages[idx*PageSize+off : (idx+1)*PageSize]
}

// advanceBuffers initialises buffer pages up to and including the one
// holding upto (AdvanceXLInsertBuffer). With opportunistic set it
// initialises as many free slots as it can without writing anything (the
// WAL writer's pre-initialisation) and upto is ignored.
func (w *WAL) advanceBuffers(p *locks.Proc, upto LSN, opportunistic bool) int {
	n := 0
	w.bufMapping.Acquire(p, locks.LWExclusive)
	for opportunistic || upto >= w.initializedUpTo {
		idx := w.slot(w.initializedUpTo)
		oldEnd := LSN(w.xlblocks[idx].Load())
		if LSN(w.logwrtWrite.Load()) < oldEnd {
			// The slot's old page is not written yet.
			if opportunistic {
				break
			}
			w.bufMapping.Release(p)
			w.waitInsertionsToFinish(p, oldEnd)
			w.writeLock.Acquire(p, locks.LWExclusive)
			if LSN(w.logwrtWrite.Load()) < oldEnd {
				w.xlogWrite(p, oldEnd, 0)
				w.proc(p).stats.buffersFull.Add(1)
			}
			w.writeLock.Release(p)
			w.bufMapping.Acquire(p, locks.LWExclusive)
			continue
		}
		begin := w.initializedUpTo
		w.xlblocks[idx].Store(0)
		w.initPage(w.bufPage(idx), begin)
		w.xlblocks[idx].Store(uint64(begin + PageSize))
		w.initializedUpTo = begin + PageSize
		n++
		if opportunistic && uint64(w.initializedUpTo-LSN(w.logwrtWrite.Load())) >= w.nbuf*PageSize {
			break
		}
	}
	w.bufMapping.Release(p)
	return n
}

// initPage zeroes pg and writes the header of the page at begin.
func (w *WAL) initPage(pg []byte, begin LSN) {
	clear(pg)
	info := uint16(0)
	if uint64(begin)%w.geo.segSize == 0 {
		info |= xlpLongHeader
	}
	binary.LittleEndian.PutUint16(pg[0:], PageMagic)
	binary.LittleEndian.PutUint16(pg[2:], info)
	binary.LittleEndian.PutUint32(pg[4:], TimeLineID)
	binary.LittleEndian.PutUint64(pg[8:], uint64(begin))
	if info&xlpLongHeader != 0 {
		binary.LittleEndian.PutUint64(pg[24:], w.ctl.SystemID)
		binary.LittleEndian.PutUint32(pg[32:], uint32(w.geo.segSize))
		binary.LittleEndian.PutUint32(pg[36:], PageSize)
	}
}
