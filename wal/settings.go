package wal

import (
	"math"
	"time"

	"lockd/locks"
)

// Setters for the reloadable settings; the server's assign hooks call
// them. Each takes effect at the next use. wal_buffers, wal_insert_locks
// and the segment size are fixed when the log is opened.

// SetFsync sets fsync: off skips every sync of the log (commit_delay never
// sleeps then either). Data may be lost in a crash of the machine.
func (w *WAL) SetFsync(on bool) { w.enableFsync.Store(on) }

// SetSyncMethod sets wal_sync_method. A change of the open flags reopens
// the segment being written at its next write.
func (w *WAL) SetSyncMethod(m SyncMethod) { w.syncMethod.Store(int32(m)) }

// SetFullPageWrites sets full_page_writes, with every insertion lock held
// so that no insertion sees half a change (UpdateFullPageWrites).
func (w *WAL) SetFullPageWrites(p *locks.Proc, on bool) {
	if w.fullPageWrites.Load() == on {
		return
	}
	w.acquireAllInsertLocks(p)
	w.fullPageWrites.Store(on)
	w.doPageWrites.Store(on)
	w.releaseAllInsertLocks(p)
}

// SetWriterDelay sets wal_writer_delay.
func (w *WAL) SetWriterDelay(d time.Duration) {
	w.writerDelay.Store(int64(d))
	w.wakeWriter()
}

// SetWriterFlushAfter sets wal_writer_flush_after, in pages.
func (w *WAL) SetWriterFlushAfter(pages int) { w.writerFlushAft.Store(int64(pages)) }

// SetTrackIOTiming sets track_wal_io_timing (pg_stat_wal's times; the
// metrics' histograms are always measured).
func (w *WAL) SetTrackIOTiming(on bool) { w.trackIOTiming.Store(on) }

// SetWALSize sets min_wal_size and max_wal_size in MB.
func (w *WAL) SetWALSize(minMB, maxMB int) {
	w.minWalSizeMB.Store(int64(minMB))
	w.maxWalSizeMB.Store(int64(maxMB))
}

// SetRecycle sets wal_recycle.
func (w *WAL) SetRecycle(on bool) { w.walRecycle.Store(on) }

// SetCheckpointSchedule sets checkpoint_timeout and
// checkpoint_completion_target, which pace a checkpoint's writes.
func (w *WAL) SetCheckpointSchedule(timeout time.Duration, target float64) {
	w.ckpt.timeout.Store(int64(timeout))
	w.ckpt.target.Store(math.Float64bits(target))
}

// SetLogCheckpoints sets log_checkpoints.
func (w *WAL) SetLogCheckpoints(on bool) { w.ckpt.logCheckpoint.Store(on) }

// SetActiveBackendsFunc installs MinimumActiveBackends for commit_siblings:
// fn(n) reports whether at least n other backends are in a transaction
// with an xid and not waiting for a lock.
func (w *WAL) SetActiveBackendsFunc(fn func(n int) bool) { w.activeBackends.Store(&fn) }
