package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"lockd/wal"
)

// walCollector exports the write-ahead log's counters: what was logged,
// the writes and syncs with their times, the waits on each insertion
// lock, group commit, checkpoints and the last recovery. The WALInsert
// and WALWrite tranches' waits are the LWLock metrics' (lockd_lwlock_*).
type walCollector struct {
	w        *wal.WAL
	recovery func() wal.RecoveryResult

	records, bytes, fpi, fpiBytes, buffersFull               *prometheus.Desc
	writeSeconds, syncSeconds                                *prometheus.Desc
	insertWaits, insertWaitSeconds                           *prometheus.Desc
	batch, flushes, commitDelays                             *prometheus.Desc
	insertPos, flushPos                                      *prometheus.Desc
	ckpts, ckptSeconds, ckptBuffers, ckptWrite, ckptSync     *prometheus.Desc
	segments, recoverySeconds, recoveryBytes, recoveryRecord *prometheus.Desc
}

func newWALCollector(w *wal.WAL, recovery func() wal.RecoveryResult) *walCollector {
	return &walCollector{
		w: w, recovery: recovery,
		records:     newDesc("wal", "records_total", "Records inserted into the write-ahead log."),
		bytes:       newDesc("wal", "bytes_total", "Bytes of write-ahead log inserted (pg_stat_wal.wal_bytes)."),
		fpi:         newDesc("wal", "full_page_images_total", "Full-page images logged (a page's first change after a checkpoint)."),
		fpiBytes:    newDesc("wal", "full_page_image_bytes_total", "Bytes of those images (without the pages' holes)."),
		buffersFull: newDesc("wal", "buffers_full_total", "Writes of the log forced because every WAL buffer was in use (pg_stat_wal.wal_buffers_full)."),
		writeSeconds: newDesc("wal", "write_seconds",
			"Time of each write of the log to its segment files (pwrite); the count is pg_stat_wal.wal_write."),
		syncSeconds: newDesc("wal", "sync_seconds",
			"Time of each sync of the log (fdatasync or fsync per wal_sync_method); the count is pg_stat_wal.wal_sync."),
		insertWaits: newDesc("wal", "insert_lock_waits_total",
			"Insertions that had to wait for their WALInsert lock, per lock (wal_insert_locks of them).", "lock"),
		insertWaitSeconds: newDesc("wal", "insert_lock_wait_seconds_total",
			"Time spent waiting for each WALInsert lock.", "lock"),
		batch: newDesc("wal", "group_commit_batch_size",
			"Commit records made durable by one flush of the log (group commit); flushes that made none are not observed."),
		flushes: newDesc("wal", "flush_requests_total",
			"Requests to make the log durable up to a record (XLogFlush) by outcome: led (this backend wrote and flushed) or followed (another's flush covered it).", "outcome"),
		commitDelays: newDesc("wal", "commit_delay_sleeps_total", "commit_delay sleeps before a flush."),
		insertPos:    newDesc("wal", "insert_position_bytes", "End of the log reserved so far (pg_current_wal_insert_lsn)."),
		flushPos:     newDesc("wal", "flush_position_bytes", "How far the log is durable (pg_current_wal_flush_lsn)."),
		ckpts:        newDesc("", "checkpoints_total", "Checkpoints completed, by cause: timed (checkpoint_timeout) or requested (max_wal_size, CHECKPOINT, shutdown, end of recovery).", "cause"),
		ckptSeconds:  newDesc("", "checkpoint_duration_seconds", "Time each checkpoint took, from its start to its record."),
		ckptBuffers:  newDesc("", "checkpoint_buffers_written_total", "Buffers written by checkpoints (pg_stat_bgwriter.buffers_checkpoint)."),
		ckptWrite:    newDesc("", "checkpoint_write_seconds_total", "Time checkpoints spent writing buffers (paced by checkpoint_completion_target)."),
		ckptSync:     newDesc("", "checkpoint_sync_seconds_total", "Time checkpoints spent syncing relation files."),
		segments:     newDesc("wal", "segments_total", "WAL segment files added, removed and recycled.", "action"),
		recoverySeconds: newDesc("recovery", "duration_seconds",
			"Time the last start-up's replay of the log took (0 after a clean shutdown)."),
		recoveryBytes:  newDesc("recovery", "replayed_bytes", "Bytes of log the last start-up replayed."),
		recoveryRecord: newDesc("recovery", "replayed_records", "Records the last start-up replayed."),
	}
}

func (c *walCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, c.records, c.bytes, c.fpi, c.fpiBytes, c.buffersFull, c.writeSeconds, c.syncSeconds,
		c.insertWaits, c.insertWaitSeconds, c.batch, c.flushes, c.commitDelays, c.insertPos, c.flushPos,
		c.ckpts, c.ckptSeconds, c.ckptBuffers, c.ckptWrite, c.ckptSync, c.segments,
		c.recoverySeconds, c.recoveryBytes, c.recoveryRecord)
}

// constHistogram emits a histogram from per-bucket (not cumulative) counts.
func constHistogram(ch chan<- prometheus.Metric, d *prometheus.Desc, bounds []float64, counts []uint64, sum float64) {
	b := make(map[float64]uint64, len(bounds))
	var cum uint64
	for i, ub := range bounds {
		cum += counts[i]
		b[ub] = cum
	}
	cum += counts[len(bounds)]
	ch <- prometheus.MustNewConstHistogram(d, cum, sum, b)
}

func (c *walCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.w.Stats()
	counter(ch, c.records, s.Records)
	counter(ch, c.bytes, s.Bytes)
	counter(ch, c.fpi, s.FPI)
	counter(ch, c.fpiBytes, s.FPIBytes)
	counter(ch, c.buffersFull, s.BuffersFull)
	constHistogram(ch, c.writeSeconds, wal.TimeBucketBounds, s.WriteHist[:], s.WriteTimeAll.Seconds())
	constHistogram(ch, c.syncSeconds, wal.TimeBucketBounds, s.SyncHist[:], s.SyncTimeAll.Seconds())
	for i := range s.InsertLockWaits {
		l := strconv.Itoa(i)
		counter(ch, c.insertWaits, s.InsertLockWaits[i], l)
		ch <- prometheus.MustNewConstMetric(c.insertWaitSeconds, prometheus.CounterValue, s.InsertLockWaitTime[i].Seconds(), l)
	}
	constHistogram(ch, c.batch, wal.BatchBucketBounds, s.BatchHist[:], float64(s.BatchCommits))
	counter(ch, c.flushes, s.FlushLed, "led")
	counter(ch, c.flushes, s.FlushFollowed, "followed")
	counter(ch, c.commitDelays, s.CommitDelays)
	gauge(ch, c.insertPos, float64(c.w.InsertPosition()))
	gauge(ch, c.flushPos, float64(c.w.FlushPosition()))
	k := c.w.CheckpointStats()
	counter(ch, c.ckpts, k.Timed, "timed")
	counter(ch, c.ckpts, k.Requested, "requested")
	constHistogram(ch, c.ckptSeconds, wal.TimeBucketBounds, k.DurationHist[:], k.Duration.Seconds())
	counter(ch, c.ckptBuffers, k.BuffersWritten)
	ch <- prometheus.MustNewConstMetric(c.ckptWrite, prometheus.CounterValue, k.WriteTime.Seconds())
	ch <- prometheus.MustNewConstMetric(c.ckptSync, prometheus.CounterValue, k.SyncTime.Seconds())
	counter(ch, c.segments, k.SegmentsAdded, "added")
	counter(ch, c.segments, k.SegmentsRemoved, "removed")
	counter(ch, c.segments, k.SegmentsRecycled, "recycled")
	if c.recovery != nil {
		r := c.recovery()
		gauge(ch, c.recoverySeconds, r.Elapsed.Seconds())
		gauge(ch, c.recoveryBytes, float64(r.Bytes))
		gauge(ch, c.recoveryRecord, float64(r.Records))
	}
}
