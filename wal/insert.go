package wal

import (
	"encoding/binary"
	"hash/crc32"
	"time"

	"lockd/locks"
)

// Insertion (PostgreSQL 9.4+'s XLogInsertRecord, ReserveXLogInsertLocation,
// CopyXLogRecordToWAL and the WALInsertLock functions).
//
// A record is assembled by its backend with no lock held (Builder). Then,
// holding one of the insertion locks in exclusive mode, the backend
//
//  1. re-checks the redo pointer: a checkpoint that started since the
//     record was assembled may require a full-page image it lacks
//     (then it releases the lock and assembles again);
//  2. reserves the record's space — a few instructions under insertPosMu,
//     a spinlock: the start is the current end of reserved WAL, which
//     moves by the record's MAXALIGNed size, and the previous record's
//     start becomes the new record's xl_prev;
//  3. finishes the CRC (the header's bytes, now that xl_prev is known) and
//     copies the record into the WAL buffers page by page, setting the
//     continuation fields of each page it runs onto;
//  4. releases the lock, resetting its insertingAt to 0.
//
// Many backends copy in parallel, each under its own insertion lock: the
// only serial step is the reservation. WaitXLogInsertionsToFinish (write.go)
// finds out how far the copying has got by looking at every insertion
// lock: free, or held with insertingAt — which a backend advances before
// it may block waiting for a buffer page — past the point to be written.
//
// The lock a backend takes is insertLocks[lockToTry], lockToTry starting
// at its proc number modulo the number of locks and moving to the next
// lock only after an acquisition had to wait (WALInsertLockAcquire), so
// backends spread over the locks and stay on one that is not contended.
// A checkpoint takes every lock, in order, to move the redo pointer
// (WALInsertLockAcquireExclusive).

const commitRingSize = 8192

// MarkCommit flags the record as a transaction's commit record, for the
// group-commit counters (commits made durable per flush).
func (b *Builder) MarkCommit() { b.commit = true }

// Insert inserts the record and returns its end LSN (XLogInsert): what a
// page it changed gets as its LSN, and what a commit must flush to. The
// Builder is released. Insert does not fail: a failure to write the log
// while making room in the WAL buffers is a PANIC.
func (b *Builder) Insert() LSN {
	_, end := b.InsertRecord()
	return end
}

// InsertRecord is Insert that also returns where the record starts.
func (b *Builder) InsertRecord() (start, end LSN) {
	w := b.w
	if !w.started.Load() {
		panic("wal: insertion before StartupXLOG or after Close")
	}
	sl := w.proc(b.p)
	for {
		redo := LSN(w.redoRecPtr.Load())
		fpw := w.doPageWrites.Load()
		tot, crc := b.assemble(redo, fpw)
		if start, end, ok := w.insertRecord(b, sl, tot, crc, redo, fpw); ok {
			b.inUse = false
			st := sl.stats
			st.records.Add(1)
			st.bytes.Add(uint64(tot))
			if b.images > 0 {
				st.fpi.Add(uint64(b.images))
				st.fpiBytes.Add(uint64(b.imgBytes))
			}
			return start, end
		}
	}
}

// insertRecord is XLogInsertRecord for the assembled record; ok is false
// when the record must be assembled again (a checkpoint moved the redo
// pointer, or full_page_writes changed, so an image is now needed).
func (w *WAL) insertRecord(b *Builder, sl *procSlot, tot int, crc uint32, redo LSN, fpw bool) (start, end LSN, ok bool) {
	li := w.acquireInsertLock(b.p, sl)
	l := &w.insertLocks[li]
	if cur := LSN(w.redoRecPtr.Load()); cur != redo || w.doPageWrites.Load() != fpw {
		if w.doPageWrites.Load() && (!fpw || b.fpwLSN != 0 && b.fpwLSN <= cur) {
			l.lock.ReleaseClearVar(b.p, &l.insertingAt, 0)
			return 0, 0, false
		}
	}
	size := maxAligned(uint64(tot))
	w.insertPosMu.lock()
	pos := w.currBytePos
	prev := w.prevBytePos
	w.currBytePos = pos + size
	w.prevBytePos = pos
	if b.commit {
		ord := w.commitOrd.Load() + 1
		w.commitRing[ord%commitRingSize].Store(pos + size)
		w.commitOrd.Store(ord)
	}
	w.insertPosMu.unlock()

	startLSN := w.geo.bytePosToLSN(pos)
	endLSN := w.geo.bytePosToEndLSN(pos + size)
	buf := b.buf[:tot]
	binary.LittleEndian.PutUint64(buf[offPrev:], uint64(w.geo.bytePosToLSN(prev)))
	crc = crc32.Update(crc, crcTable, buf[:offCRC])
	binary.LittleEndian.PutUint32(buf[offCRC:], crc)
	sl.held = li
	w.copyRecord(b.p, sl, buf, startLSN, endLSN, size)
	l.lock.ReleaseClearVar(b.p, &l.insertingAt, 0)

	// A record that ended on a later page than it started leaves full
	// pages for the WAL writer to write (XLogInsertRecord's LogwrtRqst
	// update).
	if uint64(startLSN)/PageSize != uint64(endLSN)/PageSize {
		atomicMax(&w.logwrtRqstWrite, uint64(endLSN))
	}
	return startLSN, endLSN, true
}

// acquireInsertLock takes the backend's insertion lock (WALInsertLockAcquire)
// and returns its index; after a wait the backend moves on to the next
// lock for its next insertion. Waits are counted per lock.
func (w *WAL) acquireInsertLock(p *locks.Proc, sl *procSlot) int {
	i := sl.lockToTry
	if i >= len(w.insertLocks) {
		i = 0
	}
	l := &w.insertLocks[i].lock
	if l.ConditionalAcquire(p, locks.LWExclusive) {
		return i
	}
	start := time.Now()
	waited := l.AcquireWaited(p, locks.LWExclusive)
	if waited {
		sl.stats.insertWaits[i].Add(1)
		sl.stats.insertWaitNs[i].Add(uint64(time.Since(start)))
		sl.lockToTry = (i + 1) % len(w.insertLocks)
	}
	return i
}

// acquireAllInsertLocks takes every insertion lock in order
// (WALInsertLockAcquireExclusive), as a checkpoint does to move the redo
// pointer. Each lock but the last is marked as inserting nowhere
// (insertingAt = the largest position): a backend inserting under a later
// lock that must write out a buffer page waits for the insertions before
// that page (waitInsertionsToFinish), and must not wait for this holder,
// which is itself waiting for that backend's lock.
func (w *WAL) acquireAllInsertLocks(p *locks.Proc) {
	for i := range w.insertLocks {
		l := &w.insertLocks[i]
		l.lock.Acquire(p, locks.LWExclusive)
		if i < len(w.insertLocks)-1 {
			l.lock.UpdateVar(p, &l.insertingAt, ^uint64(0))
		}
	}
}

func (w *WAL) releaseAllInsertLocks(p *locks.Proc) {
	for i := len(w.insertLocks) - 1; i >= 0; i-- {
		l := &w.insertLocks[i]
		l.lock.ReleaseClearVar(p, &l.insertingAt, 0)
	}
}

// copyRecord copies buf, a record reserved at [start, end), into the WAL
// buffers (CopyXLogRecordToWAL). A page the record runs onto gets
// XLP_FIRST_IS_CONTRECORD and the number of record bytes still to come in
// its header. The MAXALIGN padding is already zero (pages are zeroed when
// they are initialised).
func (w *WAL) copyRecord(p *locks.Proc, sl *procSlot, buf []byte, start, end LSN, size uint64) {
	ptr := start
	b0 := buf
	for len(buf) > 0 {
		page := w.getBuffer(p, sl, ptr)
		n := copy(page, buf)
		buf = buf[n:]
		ptr += LSN(n)
		if len(buf) == 0 {
			break
		}
		// ptr is at a page boundary: continue on the next page, after its
		// header.
		hdr := w.getBuffer(p, sl, ptr)
		binary.LittleEndian.PutUint16(hdr[2:], binary.LittleEndian.Uint16(hdr[2:])|xlpFirstIsContRecord)
		binary.LittleEndian.PutUint32(hdr[20:], uint32(len(buf)))
		if uint64(ptr)%w.geo.segSize == 0 {
			ptr += longPageHeaderSize
		} else {
			ptr += shortPageHeaderSize
		}
	}
	if ptr+LSN(size-uint64(len(b0))) != end {
		w.panicErr("space reserved for WAL record does not match what was written")
	}
}

// updateInsertingAt advertises that the insertion under lock sl.held has
// copied everything before at (WALInsertLockUpdateInsertingAt), before
// the backend may block for a buffer page.
func (w *WAL) updateInsertingAt(p *locks.Proc, sl *procSlot, at LSN) {
	l := &w.insertLocks[sl.held]
	l.lock.UpdateVar(p, &l.insertingAt, uint64(at))
}

func atomicMax(a interface {
	Load() uint64
	CompareAndSwap(old, new uint64) bool
}, v uint64) {
	for {
		cur := a.Load()
		if cur >= v || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// InsertPosition returns the end of the reserved log
// (pg_current_wal_insert_lsn).
func (w *WAL) InsertPosition() LSN {
	w.insertPosMu.lock()
	pos := w.currBytePos
	w.insertPosMu.unlock()
	return w.geo.bytePosToEndLSN(pos)
}

// RedoRecPtr returns the redo pointer of the latest checkpoint begun
// (GetRedoRecPtr).
func (w *WAL) RedoRecPtr() LSN { return LSN(w.redoRecPtr.Load()) }
