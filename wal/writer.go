package wal

import (
	"time"

	"lockd/locks"
)

// The WAL writer (PostgreSQL's walwriter.c and XLogBackgroundFlush).
//
// Every wal_writer_delay it writes the full pages of log that backends
// have left behind, and flushes what asynchronous commits
// (synchronous_commit = off) need: everything up to the last async commit
// is flushed at the latest after wal_writer_delay has passed since the
// last flush, or as soon as wal_writer_flush_after pages are unflushed —
// so an acknowledged async commit is durable within three
// wal_writer_delays. It also initialises WAL buffer pages ahead of
// insertion and creates the next segment ahead of need. After 50 rounds
// with nothing to do it sleeps 25 times longer, until an async commit
// wakes it.

var (
	WaitEventWALWriterMain         = locks.NewWaitEvent("Activity", "WalWriterMain")
	WaitEventWALWrite              = locks.NewWaitEvent("IO", "WALWrite")
	WaitEventWALSync               = locks.NewWaitEvent("IO", "WALSync")
	WaitEventWALInitWrite          = locks.NewWaitEvent("IO", "WALInitWrite")
	WaitEventCommitDelay           = locks.NewWaitEvent("Timeout", "CommitDelay")
	WaitEventCheckpointWriteDelay  = locks.NewWaitEvent("Timeout", "CheckpointWriteDelay")
	WaitEventCheckpointDone        = locks.NewWaitEvent("IPC", "CheckpointDone")
	WaitEventControlFileSyncUpdate = locks.NewWaitEvent("IO", "ControlFileSyncUpdate")
)

const (
	loopsUntilHibernate = 50
	hibernateFactor     = 25
)

// StartWriter starts the WAL writer with proc p (its LWLock waits and
// wait events are p's).
func (w *WAL) StartWriter(p *locks.Proc) {
	w.writerStop = make(chan struct{})
	w.writerDone = make(chan struct{})
	go w.writerLoop(p)
}

func (w *WAL) wakeWriter() {
	select {
	case w.writerWake <- struct{}{}:
	default:
	}
}

func (w *WAL) writerLoop(p *locks.Proc) {
	defer close(w.writerDone)
	var lastFlush time.Time
	idle := 0
	for {
		if w.started.Load() {
			if w.backgroundFlush(p, &lastFlush) {
				idle = 0
			} else {
				idle++
			}
			w.preallocate()
		}
		delay := time.Duration(w.writerDelay.Load())
		if idle >= loopsUntilHibernate {
			delay *= hibernateFactor
			w.hibernating.Store(true)
		}
		if p != nil {
			p.SetWaitEvent(WaitEventWALWriterMain)
		}
		t := time.NewTimer(delay)
		select {
		case <-w.writerStop:
			t.Stop()
			return
		case <-w.writerWake:
			t.Stop()
			idle = 0
		case <-t.C:
		}
		w.hibernating.Store(false)
		if p != nil {
			p.ClearWaitEvent()
		}
	}
}

// backgroundFlush is XLogBackgroundFlush; it reports whether it did
// anything.
func (w *WAL) backgroundFlush(p *locks.Proc, lastFlush *time.Time) bool {
	flushed := LSN(w.logwrtFlush.Load())
	target := LSN(w.logwrtRqstWrite.Load())
	target -= target % PageSize // whole pages only
	if target <= flushed {
		// Nothing full to write: flush for the async commits.
		target = LSN(w.asyncXactLSN.Load())
	}
	did := false
	if target > flushed {
		now := time.Now()
		flushTo := LSN(0)
		pages := uint64(target)/PageSize - uint64(flushed)/PageSize
		switch after := uint64(w.writerFlushAft.Load()); {
		case after == 0 || lastFlush.IsZero():
			flushTo = target
		case now.Sub(*lastFlush) >= time.Duration(w.writerDelay.Load()):
			flushTo = target
		case pages >= after:
			flushTo = target
		}
		if flushTo != 0 {
			*lastFlush = now
		}
		if ins := w.InsertPosition(); target > ins {
			target = ins
		}
		w.waitInsertionsToFinish(p, target)
		w.writeLock.Acquire(p, locks.LWExclusive)
		if target > LSN(w.logwrtWrite.Load()) || flushTo > LSN(w.logwrtFlush.Load()) {
			w.xlogWrite(p, target, flushTo)
			did = true
		}
		w.writeLock.Release(p)
	}
	// Initialise buffer pages ahead of insertion.
	if w.advanceBuffers(p, 0, true) > 0 {
		did = true
	}
	return did
}

// Close stops the WAL writer, flushes the log and closes the open
// segment. The log must be idle.
func (w *WAL) Close() {
	if w.closed.Swap(true) {
		return
	}
	if w.writerStop != nil {
		close(w.writerStop)
		<-w.writerDone
	}
	if w.started.Load() {
		w.Flush(nil, w.InsertPosition())
	}
	w.writeLock.Acquire(nil, locks.LWExclusive)
	w.closeSegment()
	w.writeLock.Release(nil)
	w.started.Store(false)
}

// Abandon stops the WAL writer without writing anything more, as an
// immediate shutdown or a crash would.
func (w *WAL) Abandon() {
	if w.closed.Swap(true) {
		return
	}
	w.started.Store(false)
	if w.writerStop != nil {
		close(w.writerStop)
		<-w.writerDone
	}
	w.writeLock.Acquire(nil, locks.LWExclusive)
	w.closeSegment()
	w.writeLock.Release(nil)
}
