package wal

import (
	"errors"
	"os"
	"syscall"
	"time"

	"lockd/locks"
	"lockd/vfs"
)

// Writing and flushing (PostgreSQL's XLogWrite, XLogFlush,
// WaitXLogInsertionsToFinish and issue_xlog_fsync).
//
// The WALWrite LWLock serialises writes and flushes. XLogFlush is group
// commit as PostgreSQL 9.2 made it: a backend that wants its commit record
// durable first waits for the insertions before its record to finish
// copying, then asks for WALWrite with AcquireOrWait (LWLockAcquireOrWait).
// If the lock was free it writes and flushes everything inserted so far —
// its own record and every record behind which other backends are
// waiting; if it was held, the backend sleeps until the holder is done and
// returns without the lock, and usually finds that the holder's flush
// covered its record too, so it returns at once: one fsync made many
// commits durable. commit_delay makes the lock holder sleep before its
// flush, when at least commit_siblings other backends run transactions,
// so that more commits join.
//
// Writes are byte ranges: everything from the last written position to
// the requested one, split at segment ends and the end of the buffer ring,
// one pwrite per contiguous run. A page is so written in pieces and never
// rewritten: a torn write can hurt only bytes not yet flushed.

// waitInsertionsToFinish waits until every insertion into the log before
// upto has been copied into the WAL buffers and returns how far the log is
// complete, which may be beyond upto (WaitXLogInsertionsToFinish). It must
// not be called holding WALWrite, since an insertion may need that lock to
// make progress.
func (w *WAL) waitInsertionsToFinish(p *locks.Proc, upto LSN) LSN {
	w.insertPosMu.lock()
	reserved := w.geo.bytePosToEndLSN(w.currBytePos)
	w.insertPosMu.unlock()
	if upto > reserved {
		w.log.Info("request to flush past end of generated WAL; request " + upto.String() + ", current position " + reserved.String())
		upto = reserved
	}
	finished := reserved
	for i := range w.insertLocks {
		l := &w.insertLocks[i]
		at := uint64(0)
		for {
			free, v := l.lock.WaitForVar(p, &l.insertingAt, at)
			if free {
				at = 0
				break
			}
			at = v
			if LSN(at) >= upto {
				break
			}
		}
		if at != 0 && LSN(at) < finished {
			finished = LSN(at)
		}
	}
	return finished
}

// Flush makes the log durable up to record (XLogFlush), as a commit or a
// data page's write-back needs.
func (w *WAL) Flush(p *locks.Proc, record LSN) { w.flush(p, record, 0, 0) }

// CommitFlush is Flush for a commit record, with the session's
// commit_delay (µs) and commit_siblings.
func (w *WAL) CommitFlush(p *locks.Proc, record LSN, commitDelay time.Duration, commitSiblings int) {
	w.flush(p, record, commitDelay, commitSiblings)
}

func (w *WAL) flush(p *locks.Proc, record LSN, delay time.Duration, siblings int) {
	sl := w.proc(p)
	if record <= LSN(w.logwrtFlush.Load()) {
		// already durable: another backend's (or the WAL writer's) flush
		// satisfied it before it asked
		sl.stats.flushFollowed.Add(1)
		return
	}
	target := record
	for {
		if rq := LSN(w.logwrtRqstWrite.Load()); rq > target {
			target = rq
		}
		if record <= LSN(w.logwrtFlush.Load()) {
			sl.stats.flushFollowed.Add(1)
			return
		}
		insertpos := w.waitInsertionsToFinish(p, target)
		if !w.writeLock.AcquireOrWait(p, locks.LWExclusive) {
			// The holder was probably flushing; look again.
			continue
		}
		if record <= LSN(w.logwrtFlush.Load()) {
			w.writeLock.Release(p)
			sl.stats.flushFollowed.Add(1)
			return
		}
		if delay > 0 && w.enableFsync.Load() && w.minimumActiveBackends(siblings) {
			if p != nil {
				p.SetWaitEvent(WaitEventCommitDelay)
			}
			time.Sleep(delay)
			if p != nil {
				p.ClearWaitEvent()
			}
			sl.stats.commitDelays.Add(1)
			// Everything inserted up to insertpos is copied already; this
			// only moves it further, never waits.
			insertpos = w.waitInsertionsToFinish(p, insertpos)
		}
		w.xlogWrite(p, insertpos, insertpos)
		w.writeLock.Release(p)
		sl.stats.flushLed.Add(1)
		return
	}
}

func (w *WAL) minimumActiveBackends(n int) bool {
	if n == 0 {
		return true
	}
	fn := w.activeBackends.Load()
	return fn != nil && (*fn)(n)
}

// xlogWrite writes the log up to write and flushes it up to flush (0: no
// flush) (XLogWrite). Caller holds WALWrite exclusively, and every
// insertion before write has finished.
func (w *WAL) xlogWrite(p *locks.Proc, write, flush LSN) {
	sl := w.proc(p)
	pos := LSN(w.logwrtWrite.Load())
	for pos < write {
		segno := w.geo.segNo(pos)
		if w.openSeg == nil || w.openSegNo != segno || w.openFlags != w.syncOpenFlag() {
			if w.openSeg != nil && w.openSegNo == segno && pos > LSN(w.logwrtFlush.Load()) {
				// wal_sync_method changed: make what the old way wrote
				// durable before switching (assign_xlog_sync_method).
				w.syncSegmentAlways(p, sl)
			}
			w.closeSegment()
			w.openSegment(segno, sl)
		}
		segEnd := LSN((segno + 1) * w.geo.segSize)
		end := min(write, segEnd)
		for pos < end {
			idx := w.slot(pos)
			// A contiguous run: up to end, or to the end of the ring.
			runEnd := min(end, pos-pos%PageSize+LSN((w.nbuf-idx)*PageSize))
			buf := w.pages[idx*PageSize+uint64(pos%PageSize) : idx*PageSize+uint64(pos%PageSize)+uint64(runEnd-pos)]
			w.pwrite(p, sl, buf, pos)
			pos = runEnd
			w.logwrtWrite.Store(uint64(pos))
		}
		if pos == segEnd {
			// A finished segment is synced at once (it will not be open
			// for the flush below), then may call for a checkpoint.
			w.syncSegment(p, sl)
			w.setFlushed(pos, sl)
			w.closeSegment()
			w.segmentFinished(segno)
		}
	}
	if flush > LSN(w.logwrtFlush.Load()) && LSN(w.logwrtWrite.Load()) > LSN(w.logwrtFlush.Load()) {
		if w.openSeg == nil {
			w.openSegment(w.geo.prevSegNo(pos), sl)
		}
		w.syncSegment(p, sl)
		w.setFlushed(LSN(w.logwrtWrite.Load()), sl)
	}
}

// setFlushed publishes a new flush position and counts the commits it
// made durable (the group-commit batch). Caller holds WALWrite.
func (w *WAL) setFlushed(to LSN, sl *procSlot) {
	w.logwrtFlush.Store(uint64(to))
	pos := w.geo.lsnToBytePos(to)
	cur := w.commitOrd.Load()
	lo := w.durableOrd
	if cur-lo > commitRingSize-1 {
		lo = cur - (commitRingSize - 1)
	}
	// The largest ordinal in (lo, cur] whose record ends at or before pos:
	// ordinals are in log order, so binary search.
	hi := cur
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if w.commitRing[mid%commitRingSize].Load() <= pos {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if n := lo - w.durableOrd; lo > w.durableOrd {
		w.durableOrd = lo
		sl.stats.observeBatch(n)
	} else {
		sl.stats.emptyFlushes.Add(1)
	}
}

// pwrite writes buf at LSN pos of the open segment; a failure is a PANIC.
func (w *WAL) pwrite(p *locks.Proc, sl *procSlot, buf []byte, pos LSN) {
	off := int64(uint64(pos) % w.geo.segSize)
	if p != nil {
		p.SetWaitEvent(WaitEventWALWrite)
		defer p.ClearWaitEvent()
	}
	start := time.Now()
	for len(buf) > 0 {
		n, err := w.openSeg.WriteAt(buf, off)
		if err != nil {
			w.panicErr("could not write to log file %s at offset %d, length %d: %v",
				SegmentFileName(w.openSegNo, w.geo.segSize), off, len(buf), errnoText(err))
		}
		buf = buf[n:]
		off += int64(n)
	}
	sl.stats.observeWrite(time.Since(start), w.trackIOTiming.Load())
}

// syncSegment makes the open segment durable per wal_sync_method
// (issue_xlog_fsync); open_sync and open_datasync need nothing, and
// fsync = off skips it. A failure is a PANIC, whatever data_sync_retry
// says, as in PostgreSQL since 2018.
func (w *WAL) syncSegment(p *locks.Proc, sl *procSlot) {
	if !w.enableFsync.Load() {
		return
	}
	if m := SyncMethod(w.syncMethod.Load()); m == SyncOpenSync || m == SyncOpenDatasync {
		return
	}
	w.syncSegmentAlways(p, sl)
}

// syncSegmentAlways syncs the open segment with fsync or fdatasync.
func (w *WAL) syncSegmentAlways(p *locks.Proc, sl *procSlot) {
	m := SyncMethod(w.syncMethod.Load())
	if p != nil {
		p.SetWaitEvent(WaitEventWALSync)
		defer p.ClearWaitEvent()
	}
	start := time.Now()
	var err error
	op := "fdatasync"
	if m == SyncFsync {
		op = "fsync"
		err = w.openSeg.Sync()
	} else {
		err = w.openSeg.Datasync()
	}
	if err != nil {
		w.panicErr("could not %s file \"%s\": %v", op, w.segPath(w.openSegNo), errnoText(err))
	}
	sl.stats.observeSync(time.Since(start), w.trackIOTiming.Load())
}

// openSegment opens segment segno for writing, creating it if needed.
// Caller holds WALWrite.
func (w *WAL) openSegment(segno uint64, sl *procSlot) {
	f, err := w.openOrCreateSegment(segno, w.syncOpenFlag())
	if err != nil {
		w.panicErr("%v", err)
	}
	w.openSeg, w.openSegNo = f, segno
	w.openFlags = w.syncOpenFlag()
}

func (w *WAL) closeSegment() {
	if w.openSeg != nil {
		w.openSeg.Close()
		w.openSeg = nil
	}
}

// syncOpenFlag is the open flag wal_sync_method asks for.
func (w *WAL) syncOpenFlag() int {
	if !w.enableFsync.Load() {
		return 0
	}
	switch SyncMethod(w.syncMethod.Load()) {
	case SyncOpenSync:
		return os.O_SYNC
	case SyncOpenDatasync:
		return vfs.O_DSYNC
	}
	return 0
}

// errnoText is the strerror text of err (%m), or err itself.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		// strerror's capital letter
		t := errno.Error()
		if t != "" && t[0] >= 'a' && t[0] <= 'z' {
			t = string(t[0]-'a'+'A') + t[1:]
		}
		return t
	}
	return err.Error()
}

// WritePosition returns how far the log has been written to the kernel
// (pg_current_wal_lsn).
func (w *WAL) WritePosition() LSN { return LSN(w.logwrtWrite.Load()) }

// FlushPosition returns how far the log is durable
// (pg_current_wal_flush_lsn).
func (w *WAL) FlushPosition() LSN { return LSN(w.logwrtFlush.Load()) }

// NeedsFlush reports whether the log is not yet durable up to l
// (XLogNeedsFlush).
func (w *WAL) NeedsFlush(l LSN) bool { return l > LSN(w.logwrtFlush.Load()) }

// SetAsyncXactLSN records an asynchronous commit's record (XLogSetAsyncXactLSN)
// so that the WAL writer flushes it within three wal_writer_delays, and
// wakes a hibernating writer.
func (w *WAL) SetAsyncXactLSN(l LSN) {
	atomicMax(&w.asyncXactLSN, uint64(l))
	if w.hibernating.Load() {
		w.wakeWriter()
	}
}
