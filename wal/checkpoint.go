package wal

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"lockd/locks"
)

// Checkpoints' part in the log (PostgreSQL's CreateCheckPoint around
// CheckPointGuts, IsCheckpointOnSchedule, the DELAY_CHKPT_START wait).
//
// A checkpoint (run by the server's checkpointer, which writes the data in
// between) goes:
//
//  1. BeginCheckpoint: with every insertion lock held, the redo pointer
//     moves to the current insert position — from now on a page's first
//     change gets a full-page image — and the locks are released. Then it
//     waits for the backends that have inserted a commit record but not
//     yet set the commit log (DelayCheckpointStart): their commit may be
//     before the redo point, and the commit log written next must show it.
//  2. The caller writes everything changed before the redo point: commit
//     log, catalog, dirty buffers (paced with WriteDelay so that the
//     writes take checkpoint_completion_target of the interval), indexes,
//     then fsyncs.
//  3. EndCheckpoint inserts the checkpoint record, flushes it, points the
//     control file at it, and recycles or removes the segments before the
//     redo point's.
//
// A crash before step 3 ends leaves the control file on the previous
// checkpoint, whose redo point still has every segment after it: recovery
// starts there, and replaying what step 2 already wrote is harmless.

// CheckpointFlags say why and how a checkpoint runs (CHECKPOINT_*).
type CheckpointFlags uint32

// Checkpoint flags.
const (
	CkptShutdown CheckpointFlags = 1 << iota
	CkptEndOfRecovery
	CkptImmediate // no pacing
	CkptForce     // even if nothing happened
	CkptWait      // the requester waits for it
	CkptCauseXLOG // max_wal_size worth of log
	CkptCauseTime // checkpoint_timeout
)

func (f CheckpointFlags) String() string {
	s := ""
	for _, x := range []struct {
		bit  CheckpointFlags
		name string
	}{{CkptShutdown, " shutdown"}, {CkptEndOfRecovery, " end-of-recovery"}, {CkptImmediate, " immediate"},
		{CkptForce, " force"}, {CkptWait, " wait"}, {CkptCauseXLOG, " wal"}, {CkptCauseTime, " time"}} {
		if f&x.bit != 0 {
			s += x.name
		}
	}
	return s
}

// checkpointState is the log's memory of checkpoints.
type checkpointState struct {
	mu            sync.Mutex
	lastRec       LSN // start of the latest checkpoint record
	lastRecEnd    LSN // its end
	lastRedo      LSN
	distEstimate  uint64 // CheckPointDistanceEstimate, bytes
	target        atomic.Uint64
	timeout       atomic.Int64 // checkpoint_timeout, ns
	logCheckpoint atomic.Bool
	requester     atomic.Pointer[func(CheckpointFlags)]
	xlogRequested atomic.Bool // a CAUSE_XLOG request is pending

	// Counters (pg_stat_bgwriter, metrics), written by the checkpointer.
	timed, requested    atomic.Uint64
	writeNs, syncNs     atomic.Uint64
	buffers             atomic.Uint64
	segsAdded           atomic.Uint64 // since the last checkpoint's report
	segsAddedTotal      atomic.Uint64
	segsRemoved         atomic.Uint64
	segsRecycled        atomic.Uint64
	durHist             [numTimeBuckets]atomic.Uint64
	durNs               atomic.Uint64
	completed           atomic.Uint64
	inFlightSharedDelay atomic.Int32
}

func (c *checkpointState) init() {
	c.target.Store(math.Float64bits(0.9))
	c.timeout.Store(int64(300 * time.Second))
	c.logCheckpoint.Store(true)
}

func (c *checkpointState) completionTarget() float64 { return math.Float64frombits(c.target.Load()) }

func (c *checkpointState) setLast(rec, recEnd, redo LSN) {
	c.mu.Lock()
	c.lastRec, c.lastRecEnd, c.lastRedo = rec, recEnd, redo
	c.mu.Unlock()
}

// distanceEstimate updates and returns CheckPointDistanceEstimate with the
// log written during the last cycle (UpdateCheckPointDistanceEstimate).
func (c *checkpointState) distanceEstimate(nbytes uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.distEstimate < nbytes {
		c.distEstimate = nbytes
	} else {
		c.distEstimate = uint64(0.9*float64(c.distEstimate) + 0.1*float64(nbytes))
	}
	return c.distEstimate
}

// requestXLOG asks the checkpointer for a checkpoint because of log volume.
func (c *checkpointState) requestXLOG() {
	if c.xlogRequested.Swap(true) {
		return
	}
	if fn := c.requester.Load(); fn != nil {
		(*fn)(CkptCauseXLOG)
	}
}

// SetCheckpointRequester installs what the log calls when max_wal_size
// worth of log calls for a checkpoint (RequestCheckpoint(CHECKPOINT_CAUSE_XLOG)).
func (w *WAL) SetCheckpointRequester(fn func(CheckpointFlags)) { w.ckpt.requester.Store(&fn) }

// DelayCheckpointStart marks p as between its commit record and its
// commit-log update (MyProc->delayChkptFlags |= DELAY_CHKPT_START); a
// checkpoint that starts meanwhile waits for EndDelayCheckpoint.
func (w *WAL) DelayCheckpointStart(p *locks.Proc) {
	if sl := w.proc(p); sl == &w.procs[len(w.procs)-1] {
		w.ckpt.inFlightSharedDelay.Add(1)
	} else {
		sl.delayChkpt.Add(1)
	}
}

// EndDelayCheckpoint ends DelayCheckpointStart.
func (w *WAL) EndDelayCheckpoint(p *locks.Proc) {
	if sl := w.proc(p); sl == &w.procs[len(w.procs)-1] {
		w.ckpt.inFlightSharedDelay.Add(-1)
	} else {
		sl.delayChkpt.Add(1)
	}
}

// Checkpoint is one checkpoint in progress.
type Checkpoint struct {
	Flags CheckpointFlags
	Redo  LSN
	Start time.Time
}

// BeginCheckpoint starts a checkpoint: it moves the redo pointer and waits
// for in-flight commits (see above). It reports false, doing nothing, for
// a checkpoint that is neither shutdown, end-of-recovery nor forced when
// no record has been inserted since the last checkpoint (PostgreSQL logs
// "checkpoint skipped because system is idle" at DEBUG1).
func (w *WAL) BeginCheckpoint(p *locks.Proc, flags CheckpointFlags) (*Checkpoint, bool) {
	w.acquireAllInsertLocks(p)
	w.insertPosMu.lock()
	pos := w.currBytePos
	w.insertPosMu.unlock()
	w.ckpt.mu.Lock()
	lastEnd := w.ckpt.lastRecEnd
	w.ckpt.mu.Unlock()
	if flags&(CkptShutdown|CkptEndOfRecovery|CkptForce) == 0 && w.geo.bytePosToEndLSN(pos) == lastEnd {
		w.releaseAllInsertLocks(p)
		w.log.Debug("checkpoint skipped because system is idle")
		return nil, false
	}
	redo := w.geo.bytePosToLSN(pos) // past a page header if on a boundary
	w.redoRecPtr.Store(uint64(redo))
	w.releaseAllInsertLocks(p)
	c := &Checkpoint{Flags: flags, Redo: redo, Start: time.Now()}
	if w.ckpt.logCheckpoint.Load() {
		w.log.Info("checkpoint starting:" + flags.String())
	}
	w.waitDelayingBackends()
	return c, true
}

// waitDelayingBackends waits until every backend that was between its
// commit record and its commit-log update has got past it
// (HaveVirtualXIDsDelayingChkpt, polled every 10 ms as PostgreSQL does).
func (w *WAL) waitDelayingBackends() {
	var busy []int
	var seen []uint32
	for i := range w.procs {
		if v := w.procs[i].delayChkpt.Load(); v%2 == 1 {
			busy = append(busy, i)
			seen = append(seen, v)
		}
	}
	for len(busy) > 0 || w.ckpt.inFlightSharedDelay.Load() > 0 {
		time.Sleep(10 * time.Millisecond)
		n := 0
		for j, i := range busy {
			if w.procs[i].delayChkpt.Load() == seen[j] {
				busy[n], seen[n] = i, seen[j]
				n++
			}
		}
		busy, seen = busy[:n], seen[:n]
	}
}

// WriteDelay paces a checkpoint's writes (CheckpointWriteDelay): progress
// is the fraction of its buffers written. Unless the checkpoint is
// immediate, it sleeps 100 ms while the checkpoint is ahead of the
// schedule checkpoint_completion_target sets, measured against both
// checkpoint_timeout and max_wal_size (IsCheckpointOnSchedule).
func (w *WAL) WriteDelay(p *locks.Proc, c *Checkpoint, progress float64) {
	if c.Flags&(CkptImmediate|CkptShutdown|CkptEndOfRecovery) != 0 || !w.onSchedule(c, progress) {
		return
	}
	if p != nil {
		p.SetWaitEvent(WaitEventCheckpointWriteDelay)
	}
	time.Sleep(100 * time.Millisecond)
	if p != nil {
		p.ClearWaitEvent()
	}
}

func (w *WAL) onSchedule(c *Checkpoint, progress float64) bool {
	progress *= w.ckpt.completionTarget()
	if w.ckpt.xlogRequested.Load() && c.Flags&CkptCauseXLOG == 0 {
		return false // another checkpoint is already due: hurry
	}
	ins := w.InsertPosition()
	elapsedXlogs := float64(ins-c.Redo) / float64(w.geo.segSize) / float64(w.checkpointSegments())
	if progress < elapsedXlogs {
		return false
	}
	elapsedTime := float64(time.Since(c.Start)) / float64(w.ckpt.timeout.Load())
	return progress >= elapsedTime
}

// CheckpointInfo is what the caller reports to EndCheckpoint.
type CheckpointInfo struct {
	NextXid, NextOid, NextMulti, NextMultiOff uint32
	BuffersWritten, BuffersTotal              int
	WriteTime, SyncTime                       time.Duration
	SyncFiles                                 int
	LongestSync                               time.Duration
}

// EndCheckpoint finishes c (see above) and returns the checkpoint record's
// LSN. A shutdown checkpoint stops insertion: the log is closed to new
// records.
func (w *WAL) EndCheckpoint(p *locks.Proc, c *Checkpoint, info CheckpointInfo) LSN {
	shutdown := c.Flags&(CkptShutdown|CkptEndOfRecovery) != 0
	ck := CheckPoint{Redo: c.Redo, TimeLineID: TimeLineID, FullPageWrites: w.fullPageWrites.Load(),
		NextXid: info.NextXid, NextOid: info.NextOid, NextMulti: info.NextMulti, NextMultiOff: info.NextMultiOff,
		Time: time.Now().Unix()}
	kind := InfoCheckpointOnline
	if shutdown {
		kind = InfoCheckpointShutdown
	}
	b := w.Begin(p, RmgrXLOG, kind)
	b.SetMain(ck.encode(b.Main()))
	recStart, end := b.InsertRecord()
	w.Flush(p, end)
	if shutdown && recStart != c.Redo {
		w.panicErr("concurrent write-ahead log activity while database system is shutting down")
	}
	w.ckpt.mu.Lock()
	prevRedo := w.ckpt.lastRedo
	w.ckpt.mu.Unlock()
	w.ckpt.setLast(recStart, end, c.Redo)
	w.ctlMu.Lock()
	if c.Flags&CkptShutdown != 0 {
		w.ctl.State = DBShutdowned
	} else {
		w.ctl.State = DBInProduction
	}
	w.ctl.CheckPoint = recStart
	w.ctl.Copy = ck
	w.updateControlFile()
	w.ctlMu.Unlock()
	if c.Flags&CkptShutdown != 0 {
		w.started.Store(false)
	}
	if prevRedo != InvalidLSN && c.Redo > prevRedo {
		w.ckpt.distanceEstimate(uint64(c.Redo - prevRedo))
	}
	added := w.ckpt.segsAdded.Swap(0)
	recycled, removed := w.removeOldSegments(c.Redo, end)
	if c.Flags&CkptShutdown == 0 {
		w.preallocate()
	}
	total := time.Since(c.Start)
	st := &w.ckpt
	if c.Flags&CkptCauseTime != 0 {
		st.timed.Add(1)
	} else {
		st.requested.Add(1)
	}
	if c.Flags&CkptCauseXLOG != 0 {
		st.xlogRequested.Store(false)
	}
	st.writeNs.Add(uint64(info.WriteTime))
	st.syncNs.Add(uint64(info.SyncTime))
	st.buffers.Add(uint64(info.BuffersWritten))
	st.segsRemoved.Add(uint64(removed))
	st.segsRecycled.Add(uint64(recycled))
	st.segsAddedTotal.Add(added)
	st.durNs.Add(uint64(total))
	st.durHist[timeBucket(total)].Add(1)
	st.completed.Add(1)
	if st.logCheckpoint.Load() {
		pct := 0.0
		if info.BuffersTotal > 0 {
			pct = 100 * float64(info.BuffersWritten) / float64(info.BuffersTotal)
		}
		avg := time.Duration(0)
		if info.SyncFiles > 0 {
			avg = info.SyncTime / time.Duration(info.SyncFiles)
		}
		st.mu.Lock()
		est := st.distEstimate
		st.mu.Unlock()
		w.log.Info(fmt.Sprintf("checkpoint complete: wrote %d buffers (%.1f%%); %d WAL file(s) added, %d removed, %d recycled; write=%s s, sync=%s s, total=%s s; sync files=%d, longest=%s s, average=%s s; distance=%d kB, estimate=%d kB",
			info.BuffersWritten, pct, added, removed, recycled, secs(info.WriteTime), secs(info.SyncTime), secs(total),
			info.SyncFiles, secs(info.LongestSync), secs(avg), uint64(c.Redo-prevRedo)/1024*boolInt(prevRedo != 0), est/1024))
	}
	return recStart
}

func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%d.%03d", d/time.Second, d%time.Second/time.Millisecond)
}

// CheckpointStats are the checkpoint counters (pg_stat_bgwriter and the
// metrics).
type CheckpointStats struct {
	Timed, Requested     uint64
	WriteTime, SyncTime  time.Duration
	BuffersWritten       uint64
	Completed            uint64
	Duration             time.Duration          // summed
	DurationHist         [numTimeBuckets]uint64 // per TimeBucketBounds
	SegmentsAdded        uint64
	SegmentsRemoved      uint64
	SegmentsRecycled     uint64
	LastCheckpoint, Redo LSN
}

// CheckpointStats returns the checkpoint counters.
func (w *WAL) CheckpointStats() CheckpointStats {
	st := &w.ckpt
	s := CheckpointStats{Timed: st.timed.Load(), Requested: st.requested.Load(),
		WriteTime: time.Duration(st.writeNs.Load()), SyncTime: time.Duration(st.syncNs.Load()),
		BuffersWritten: st.buffers.Load(), Completed: st.completed.Load(), Duration: time.Duration(st.durNs.Load()),
		SegmentsAdded: st.segsAddedTotal.Load() + st.segsAdded.Load(), SegmentsRemoved: st.segsRemoved.Load(),
		SegmentsRecycled: st.segsRecycled.Load()}
	for i := range s.DurationHist {
		s.DurationHist[i] = st.durHist[i].Load()
	}
	st.mu.Lock()
	s.LastCheckpoint, s.Redo = st.lastRec, st.lastRedo
	st.mu.Unlock()
	return s
}
