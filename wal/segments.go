package wal

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"lockd/vfs"
)

// Segment files (PostgreSQL's XLogFileInit, InstallXLogFileSegment,
// RemoveOldXlogFiles, RemoveXlogFile, PreallocXlogFiles).
//
// A segment is created whole before it is written: zeroes are written to
// a temporary file, which is synced and then linked under the segment's
// name (never replacing a file) and the directory synced — PostgreSQL's
// wal_init_zero. The WAL writer creates the next segment ahead of time once
// the current one is three quarters full, so that a committing backend
// rarely pays for it. After a checkpoint, the segments wholly before the
// redo point's segment are no longer needed: each is renamed to a future
// segment number (recycled: its old contents are harmless because every
// page header names the page's own LSN, which the old ones do not) while
// the log's recent use says it will be needed before the next checkpoint
// ends — between min_wal_size and max_wal_size — and removed otherwise.

func (w *WAL) segPath(segno uint64) string {
	return filepath.Join(w.dir, SegmentFileName(segno, w.geo.segSize))
}

// openOrCreateSegment opens segment segno read-write with the extra open
// flag (O_SYNC or O_DSYNC for wal_sync_method open_*), creating it if it
// does not exist.
func (w *WAL) openOrCreateSegment(segno uint64, flag int) (vfs.File, error) {
	path := w.segPath(segno)
	f, err := w.fs.OpenFile(path, os.O_RDWR|flag, 0)
	if err == nil {
		return f, nil
	}
	if !vfs.IsNotExist(err) {
		return nil, fmt.Errorf("could not open file \"%s\": %s", path, errnoText(err))
	}
	if err := w.createSegment(segno); err != nil {
		return nil, err
	}
	f, err = w.fs.OpenFile(path, os.O_RDWR|flag, 0)
	if err != nil {
		return nil, fmt.Errorf("could not open file \"%s\": %s", path, errnoText(err))
	}
	return f, nil
}

// createSegment makes segment segno, zero-filled, unless it exists.
func (w *WAL) createSegment(segno uint64) error {
	w.segMu.Lock()
	defer w.segMu.Unlock()
	path := w.segPath(segno)
	if vfs.Exists(w.fs, path) {
		return nil
	}
	tmp := filepath.Join(w.dir, "xlogtemp.lockd")
	f, err := w.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("could not create file \"%s\": %s", tmp, errnoText(err))
	}
	zero := make([]byte, 1<<20)
	for off := uint64(0); off < w.geo.segSize; off += uint64(len(zero)) {
		n := min(uint64(len(zero)), w.geo.segSize-off)
		if _, err := f.WriteAt(zero[:n], int64(off)); err != nil {
			f.Close()
			w.fs.Remove(tmp)
			return fmt.Errorf("could not write to file \"%s\": %s", tmp, errnoText(err))
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		w.fs.Remove(tmp)
		return fmt.Errorf("could not fsync file \"%s\": %s", tmp, errnoText(err))
	}
	f.Close()
	if err := w.fs.Link(tmp, path); err != nil {
		w.fs.Remove(tmp)
		if vfs.Exists(w.fs, path) {
			return nil
		}
		return fmt.Errorf("could not link file \"%s\" to \"%s\": %s", tmp, path, errnoText(err))
	}
	w.fs.Remove(tmp)
	if err := w.fs.SyncDir(w.dir); err != nil {
		return fmt.Errorf("could not fsync directory \"%s\": %s", w.dir, errnoText(err))
	}
	w.ckpt.segsAdded.Add(1)
	return nil
}

// preallocate creates the segment after the one being inserted into once
// that is three quarters full (PreallocXlogFiles). Errors are logged:
// the backend that needs the segment will try again, and PANIC then.
func (w *WAL) preallocate() {
	ins := w.InsertPosition()
	if uint64(ins)%w.geo.segSize < w.geo.segSize*3/4 {
		return
	}
	next := w.geo.segNo(ins) + 1
	if vfs.Exists(w.fs, w.segPath(next)) {
		return
	}
	if err := w.createSegment(next); err != nil {
		w.log.Warn("could not preallocate WAL segment", "error", err)
	}
}

// segmentFinished is called by XLogWrite when segment segno is written
// out: if the log since the last checkpoint's redo point has reached
// CheckPointSegments, it asks for a checkpoint (XLogCheckpointNeeded,
// CHECKPOINT_CAUSE_XLOG).
func (w *WAL) segmentFinished(segno uint64) {
	redoSeg := w.geo.segNo(w.RedoRecPtr())
	if segno+1 >= redoSeg+w.checkpointSegments() {
		w.ckpt.requestXLOG()
	}
}

// checkpointSegments is CheckPointSegments: max_wal_size in segments over
// (1 + checkpoint_completion_target), at least 1.
func (w *WAL) checkpointSegments() uint64 {
	segs := float64(w.maxWalSizeMB.Load()<<20) / float64(w.geo.segSize)
	n := uint64(segs / (1 + w.ckpt.completionTarget()))
	return max(n, 1)
}

// listSegments returns the segment numbers present in pg_wal, ascending.
func (w *WAL) listSegments() ([]uint64, error) {
	ents, err := w.fs.ReadDir(w.dir)
	if err != nil {
		return nil, err
	}
	var segs []uint64
	for _, e := range ents {
		if n, ok := parseSegmentFileName(e.Name(), w.geo.segSize); ok {
			segs = append(segs, n)
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i] < segs[j] })
	return segs, nil
}

// removeOldSegments recycles or removes every segment before the one
// holding redo (RemoveOldXlogFiles), and returns how many were recycled
// and removed. endPtr is the end of the checkpoint record.
func (w *WAL) removeOldSegments(redo, endPtr LSN) (recycled, removed int) {
	// Every segment file is created under segMu: holding it while listing
	// and renaming, no file can appear under a name a recycled segment
	// takes (a rename would replace it, and a segment being written would
	// lose its name).
	w.segMu.Lock()
	defer w.segMu.Unlock()
	segs, err := w.listSegments()
	if err != nil {
		w.log.Warn("could not read WAL directory", "error", err)
		return 0, 0
	}
	keepFrom := w.geo.segNo(redo)
	// How many segments to keep ready after the current one
	// (XLOGfileslop): what the next checkpoint cycle is expected to use,
	// between min_wal_size and max_wal_size.
	minSegs := uint64(w.minWalSizeMB.Load()<<20) / w.geo.segSize
	maxSegs := uint64(w.maxWalSizeMB.Load()<<20) / w.geo.segSize
	distance := w.ckpt.distanceEstimate(uint64(endPtr - redo))
	want := uint64(float64(distance)*(1+w.ckpt.completionTarget())*1.1) / w.geo.segSize
	want = max(min(want, maxSegs), minSegs)
	recycleLimit := keepFrom + want
	highest := w.geo.segNo(endPtr)
	for _, s := range segs {
		highest = max(highest, s)
	}
	for _, s := range segs {
		if s >= keepFrom {
			break
		}
		old := w.segPath(s)
		if w.walRecycle.Load() && highest+1 <= recycleLimit {
			highest++
			if err := w.fs.Rename(old, w.segPath(highest)); err == nil {
				recycled++
				continue
			}
			highest--
		}
		if err := w.fs.Remove(old); err != nil {
			w.log.Warn("could not remove WAL segment", "file", old, "error", err)
			continue
		}
		removed++
	}
	if recycled+removed > 0 {
		if err := w.fs.SyncDir(w.dir); err != nil {
			w.log.Warn("could not fsync WAL directory", "error", err)
		}
	}
	return recycled, removed
}
