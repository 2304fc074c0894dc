package wal

import (
	"sync/atomic"
	"time"
)

// Counters. Each backend has its own (procSlot.stats), updated with
// atomics by that backend alone (the shared slot of proc-less callers and
// the WAL writer's are shared, hence atomics); Stats sums them at read
// time, so no insertion touches a shared counter.

// TimeBucketBounds are the upper bounds of the write and sync time
// histograms, in seconds (the last bucket is +Inf).
var TimeBucketBounds = []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
	2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// BatchBucketBounds are the upper bounds of the group-commit histogram:
// commit records made durable by one flush (the last bucket is +Inf).
var BatchBucketBounds = []float64{1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128}

const (
	numTimeBuckets  = 23 // len(TimeBucketBounds) + 1
	numBatchBuckets = 18 // len(BatchBucketBounds) + 1
)

type procStats struct {
	records, fpi, fpiBytes, bytes atomic.Uint64
	buffersFull                   atomic.Uint64
	writes, syncs                 atomic.Uint64
	writeNs, syncNs               atomic.Uint64 // always measured (metrics)
	writeNsTracked, syncNsTracked atomic.Uint64 // only with track_wal_io_timing (pg_stat_wal)
	writeHist, syncHist           [numTimeBuckets]atomic.Uint64

	insertWaits, insertWaitNs []atomic.Uint64 // per insertion lock

	batchHist     [numBatchBuckets]atomic.Uint64
	batchCommits  atomic.Uint64 // commit records made durable by flushes this backend did
	batchFlushes  atomic.Uint64 // flushes that made at least one commit durable
	emptyFlushes  atomic.Uint64 // flushes that made no commit durable
	flushLed      atomic.Uint64 // XLogFlush calls that wrote and flushed themselves
	flushFollowed atomic.Uint64 // XLogFlush calls satisfied by another backend's flush
	commitDelays  atomic.Uint64 // commit_delay sleeps
}

func newProcStats(nlocks int) *procStats {
	return &procStats{insertWaits: make([]atomic.Uint64, nlocks), insertWaitNs: make([]atomic.Uint64, nlocks)}
}

func timeBucket(d time.Duration) int {
	s := d.Seconds()
	for i, b := range TimeBucketBounds {
		if s <= b {
			return i
		}
	}
	return len(TimeBucketBounds)
}

func (s *procStats) observeWrite(d time.Duration, tracked bool) {
	s.writes.Add(1)
	s.writeNs.Add(uint64(d))
	if tracked {
		s.writeNsTracked.Add(uint64(d))
	}
	s.writeHist[timeBucket(d)].Add(1)
}

func (s *procStats) observeSync(d time.Duration, tracked bool) {
	s.syncs.Add(1)
	s.syncNs.Add(uint64(d))
	if tracked {
		s.syncNsTracked.Add(uint64(d))
	}
	s.syncHist[timeBucket(d)].Add(1)
}

func (s *procStats) observeBatch(n uint64) {
	s.batchCommits.Add(n)
	s.batchFlushes.Add(1)
	i := len(BatchBucketBounds)
	for j, b := range BatchBucketBounds {
		if float64(n) <= b {
			i = j
			break
		}
	}
	s.batchHist[i].Add(1)
}

// Stats are the WAL's counters, summed over backends (pg_stat_wal and
// the metrics).
type Stats struct {
	Records     uint64 // wal_records
	FPI         uint64 // wal_fpi: full-page images
	FPIBytes    uint64 // bytes of those images
	Bytes       uint64 // wal_bytes
	BuffersFull uint64 // wal_buffers_full: writes forced by a full ring of WAL buffers
	Writes      uint64 // wal_write: pwrite calls
	Syncs       uint64 // wal_sync: fsync/fdatasync calls
	// WriteTime and SyncTime are wal_write_time and wal_sync_time: only
	// while track_wal_io_timing is on.
	WriteTime, SyncTime time.Duration
	// WriteTimeAll and SyncTimeAll are always measured (the metrics).
	WriteTimeAll, SyncTimeAll time.Duration
	WriteHist, SyncHist       [numTimeBuckets]uint64 // per TimeBucketBounds, not cumulative

	// Per insertion lock: acquisitions that had to wait, and their time.
	InsertLockWaits    []uint64
	InsertLockWaitTime []time.Duration

	// Group commit.
	BatchHist     [numBatchBuckets]uint64 // commit records made durable per flush, per BatchBucketBounds
	BatchCommits  uint64                  // their sum
	BatchFlushes  uint64                  // their count
	EmptyFlushes  uint64                  // flushes that made no commit record durable
	FlushLed      uint64                  // XLogFlush calls that flushed themselves
	FlushFollowed uint64                  // XLogFlush calls another backend's flush satisfied
	CommitDelays  uint64                  // commit_delay sleeps

	Reset time.Time // stats_reset
}

// Stats sums the counters of every backend.
func (w *WAL) Stats() Stats {
	var s Stats
	s.InsertLockWaits = make([]uint64, len(w.insertLocks))
	s.InsertLockWaitTime = make([]time.Duration, len(w.insertLocks))
	for i := range w.procs {
		ps := w.procs[i].stats
		s.Records += ps.records.Load()
		s.FPI += ps.fpi.Load()
		s.FPIBytes += ps.fpiBytes.Load()
		s.Bytes += ps.bytes.Load()
		s.BuffersFull += ps.buffersFull.Load()
		s.Writes += ps.writes.Load()
		s.Syncs += ps.syncs.Load()
		s.WriteTime += time.Duration(ps.writeNsTracked.Load())
		s.SyncTime += time.Duration(ps.syncNsTracked.Load())
		s.WriteTimeAll += time.Duration(ps.writeNs.Load())
		s.SyncTimeAll += time.Duration(ps.syncNs.Load())
		for j := range s.WriteHist {
			s.WriteHist[j] += ps.writeHist[j].Load()
			s.SyncHist[j] += ps.syncHist[j].Load()
		}
		for j := range s.InsertLockWaits {
			s.InsertLockWaits[j] += ps.insertWaits[j].Load()
			s.InsertLockWaitTime[j] += time.Duration(ps.insertWaitNs[j].Load())
		}
		for j := range s.BatchHist {
			s.BatchHist[j] += ps.batchHist[j].Load()
		}
		s.BatchCommits += ps.batchCommits.Load()
		s.BatchFlushes += ps.batchFlushes.Load()
		s.EmptyFlushes += ps.emptyFlushes.Load()
		s.FlushLed += ps.flushLed.Load()
		s.FlushFollowed += ps.flushFollowed.Load()
		s.CommitDelays += ps.commitDelays.Load()
	}
	s.Reset = w.startTime
	return s
}
