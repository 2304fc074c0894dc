package wal

import (
	"fmt"
	"os"
	"time"

	"lockd/locks"
)

// Start-up and crash recovery (PostgreSQL's StartupXLOG, InitWalRecovery,
// PerformWalRecovery, FinishWalRecovery).
//
// The control file names the latest checkpoint record. If the server was
// shut down cleanly — state "shut down" and a checkpoint whose redo point
// is the record itself — nothing is replayed. Otherwise every record from
// the checkpoint's redo point on is handed to its resource manager's redo
// function, in log order, until the first record that is missing, torn or
// corrupt: that is the end of the log. Insertion then continues right
// after the last valid record; whatever the old log held beyond it — the
// rest of its segment, and any later segment — is wiped first, so that a
// record of the lost future can never be read as a continuation of the new
// one. The caller then writes an end-of-recovery checkpoint.

// RedoFunc replays one record. It must change data only as the record
// says and log nothing.
type RedoFunc func(r *Record) error

// RecoveryResult says what StartupXLOG did.
type RecoveryResult struct {
	Recovered    bool          // crash recovery ran (an end-of-recovery checkpoint is due)
	RedoStart    LSN           // where replay started
	RedoEnd      LSN           // end of the last record replayed
	Records      uint64        // records replayed
	Bytes        uint64        // bytes of log replayed
	Elapsed      time.Duration // time replay took
	EndReason    string        // why the log ended (PostgreSQL's LOG message), "" after a clean shutdown
	CheckPoint   CheckPoint    // the checkpoint recovery started from
	CheckPointAt LSN
}

// bootstrap writes the first checkpoint of a new data directory, as initdb
// does, at the start of segment 1.
func (w *WAL) bootstrap() error {
	start := LSN(w.geo.segSize) + longPageHeaderSize
	w.setInsertPosition(start, InvalidLSN)
	// The first page's header is not on disk yet: write from the page's
	// start.
	w.logwrtWrite.Store(uint64(w.geo.segSize))
	w.logwrtFlush.Store(uint64(w.geo.segSize))
	w.redoRecPtr.Store(uint64(start))
	w.started.Store(true)
	ck := CheckPoint{Redo: start, TimeLineID: TimeLineID, FullPageWrites: true, NextXid: 3, NextOid: 16384,
		NextMulti: 1, Time: time.Now().Unix()}
	b := w.Begin(nil, RmgrXLOG, InfoCheckpointShutdown)
	b.SetMain(ck.encode(b.Main()))
	end := b.Insert()
	w.Flush(nil, end)
	w.started.Store(false)
	w.ctlMu.Lock()
	w.ctl.State = DBShutdowned
	w.ctl.CheckPoint = start
	w.ctl.Copy = ck
	w.updateControlFile()
	w.ctlMu.Unlock()
	if err := w.fs.SyncDir(w.dir); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	w.log.Info("initialized a new write-ahead log", "system_identifier", w.ctl.SystemID, "checkpoint", start.String())
	return nil
}

// setInsertPosition makes the log continue at end, the end of the record
// that started at last (InvalidLSN if none), with everything before end
// taken as written and flushed.
func (w *WAL) setInsertPosition(end, last LSN) {
	pos := w.geo.lsnToBytePos(end)
	w.insertPosMu.lock()
	w.currBytePos = pos
	if last != InvalidLSN {
		w.prevBytePos = w.geo.lsnToBytePos(last)
	} else {
		w.prevBytePos = pos
	}
	w.insertPosMu.unlock()
	w.logwrtWrite.Store(uint64(end))
	w.logwrtFlush.Store(uint64(end))
	w.logwrtRqstWrite.Store(uint64(end))
	// The page holding end is in the buffers already (only what follows
	// end will be written; what precedes it on the page is on disk).
	pageStart := end - end%PageSize
	w.bufMapping.Acquire(nil, locks.LWExclusive)
	if end%PageSize == 0 {
		w.initializedUpTo = end
	} else {
		idx := w.slot(pageStart)
		w.initPage(w.bufPage(idx), pageStart)
		w.xlblocks[idx].Store(uint64(pageStart + PageSize))
		w.initializedUpTo = pageStart + PageSize
	}
	w.bufMapping.Release(nil)
}

// StartupXLOG reads the latest checkpoint and, if the server did not shut
// down cleanly, replays the log from its redo point with redo (indexed by
// resource manager; a record of a manager without a function is skipped).
// Afterwards the log accepts insertions. Messages are PostgreSQL's. A
// missing or unreadable checkpoint record is PostgreSQL's PANIC "could not
// locate a valid checkpoint record", returned as an error.
func (w *WAL) StartupXLOG(redo [256]RedoFunc) (RecoveryResult, error) {
	var res RecoveryResult
	w.ctlMu.Lock()
	ctl := w.ctl
	w.ctlMu.Unlock()
	switch ctl.State {
	case DBShutdowned:
		w.log.Info("database system was shut down at " + unixTime(ctl.Time))
	case DBShutdowning:
		w.log.Info("database system shutdown was interrupted; last known up at " + unixTime(ctl.Time))
	case DBInCrashRecovery:
		w.log.Info("database system was interrupted while in recovery at "+unixTime(ctl.Time),
			"hint", "This probably means that some data is corrupted and you will have to use the last backup for recovery.")
	case DBInProduction:
		w.log.Info("database system was interrupted; last known up at " + unixTime(ctl.Time))
	}
	rd := newReader(w)
	defer rd.close()
	rec := rd.read(ctl.CheckPoint, InvalidLSN)
	var ck CheckPoint
	ok := rec != nil && rec.Rmid == RmgrXLOG && (rec.Info == InfoCheckpointShutdown || rec.Info == InfoCheckpointOnline)
	if ok {
		ck, ok = DecodeCheckPoint(rec.Main)
	}
	if !ok {
		if rd.errMsg != "" {
			w.log.Info(rd.errMsg)
		}
		return res, fmt.Errorf("PANIC: could not locate a valid checkpoint record")
	}
	res.CheckPoint, res.CheckPointAt = ck, ctl.CheckPoint
	w.log.Debug("checkpoint record", "at", ctl.CheckPoint.String(), "redo", ck.Redo.String(),
		"shutdown", rec.Info == InfoCheckpointShutdown)
	ckEnd := rd.EndRecPtr
	needRecovery := ck.Redo < ctl.CheckPoint || ctl.State != DBShutdowned
	if ck.Redo > ctl.CheckPoint {
		return res, fmt.Errorf("PANIC: invalid redo in checkpoint record")
	}
	if !needRecovery {
		w.setInsertPosition(ckEnd, ctl.CheckPoint)
		w.redoRecPtr.Store(uint64(ck.Redo))
		w.ckpt.setLast(ctl.CheckPoint, ckEnd, ck.Redo)
		w.started.Store(true)
		w.setState(DBInProduction)
		return res, nil
	}

	// Crash recovery.
	res.Recovered = true
	w.log.Info("database system was not properly shut down; automatic recovery in progress")
	w.setState(DBInCrashRecovery)
	res.RedoStart = ck.Redo
	startTime := time.Now()
	if ck.Redo < ctl.CheckPoint {
		rec = rd.read(ck.Redo, InvalidLSN)
		if rec == nil {
			w.log.Info(rd.errMsg)
			return res, fmt.Errorf("PANIC: could not find redo location referenced by checkpoint record")
		}
	} else {
		rec = rd.read(InvalidLSN, ctl.CheckPoint) // the record after the checkpoint
	}
	lastStart, lastEnd := ctl.CheckPoint, ckEnd
	if rec != nil {
		w.log.Info("redo starts at " + rec.LSN.String())
	}
	replayed := rec != nil
	for rec != nil {
		if fn := redo[rec.Rmid]; fn != nil {
			if err := fn(rec); err != nil {
				return res, fmt.Errorf("PANIC: redo of %s record at %s failed: %w", rec.Rmid, rec.LSN, err)
			}
		}
		res.Records++
		lastStart, lastEnd = rec.LSN, rec.EndLSN
		rec = rd.read(InvalidLSN, lastStart)
	}
	res.EndReason = rd.errMsg
	if res.EndReason != "" {
		w.log.Info(res.EndReason)
	}
	res.RedoEnd = lastEnd
	res.Elapsed = time.Since(startTime)
	if replayed {
		res.Bytes = uint64(lastEnd - ck.Redo)
		mb := float64(res.Bytes) / (1 << 20)
		w.log.Info(fmt.Sprintf("redo done at %s system usage: elapsed: %.2f s; replayed %d records, %.1f MB (%.1f MB/s)",
			lastStart, res.Elapsed.Seconds(), res.Records, mb, mb/max(res.Elapsed.Seconds(), 1e-9)))
	} else {
		w.log.Info("redo is not required")
	}
	if err := w.wipeAfter(lastEnd); err != nil {
		return res, err
	}
	w.setInsertPosition(lastEnd, lastStart)
	w.redoRecPtr.Store(uint64(ck.Redo))
	w.ckpt.setLast(ctl.CheckPoint, ckEnd, ck.Redo)
	w.started.Store(true)
	return res, nil
}

// wipeAfter zeroes the segment holding end from end on and removes every
// later segment: the old log beyond the last valid record must not be
// readable as a continuation of the new one.
func (w *WAL) wipeAfter(end LSN) error {
	segno := w.geo.segNo(end)
	if off := uint64(end) % w.geo.segSize; off != 0 {
		f, err := w.fs.OpenFile(w.segPath(segno), os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("could not open file \"%s\": %s", w.segPath(segno), errnoText(err))
		}
		zero := make([]byte, 1<<20)
		for off < w.geo.segSize {
			n := min(uint64(len(zero)), w.geo.segSize-off)
			if _, err := f.WriteAt(zero[:n], int64(off)); err != nil {
				f.Close()
				return fmt.Errorf("could not write to file \"%s\": %s", w.segPath(segno), errnoText(err))
			}
			off += n
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("could not fsync file \"%s\": %s", w.segPath(segno), errnoText(err))
		}
		f.Close()
	} else {
		segno-- // end is the end of segment segno-1; segno itself goes too
	}
	segs, err := w.listSegments()
	if err != nil {
		return err
	}
	removed := false
	for _, s := range segs {
		if s > segno {
			if err := w.fs.Remove(w.segPath(s)); err != nil {
				return fmt.Errorf("could not remove file \"%s\": %s", w.segPath(s), errnoText(err))
			}
			removed = true
		}
	}
	if removed {
		return w.fs.SyncDir(w.dir)
	}
	return nil
}

func (w *WAL) setState(s DBState) {
	w.ctlMu.Lock()
	w.ctl.State = s
	w.updateControlFile()
	w.ctlMu.Unlock()
}

func unixTime(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("2006-01-02 15:04:05 UTC")
}
