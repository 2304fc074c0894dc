package storage

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"lockd/locks"
)

// A checkpoint's part in the store (CheckPointBuffers, ProcessSyncRequests
// and the index and free-space-map files). The server runs them between
// wal.BeginCheckpoint and wal.EndCheckpoint:
//
//  1. CheckpointBuffers writes every buffer dirty when it starts (each
//     after the log is flushed up to the page's LSN), paced by the caller;
//  2. SyncFiles fsyncs every relation file;
//  3. SaveMaps writes the free space maps, every changed visibility map
//     and every changed index (a visibility map or an index after the log
//     is flushed past its newest change).
//
// Everything changed before the checkpoint's redo point is then on disk,
// so recovery may start there. Checkpoint runs the three at once, unpaced
// (tests, Close).

// CheckpointBuffers writes the buffers that are dirty now (BufferSync),
// calling pace (if not nil) with the fraction written after each, and
// returns how many it wrote and how many were dirty. It runs concurrently
// with normal work, pinning one buffer at a time and holding its content
// lock (shared) only while copying the page.
func (s *Store) CheckpointBuffers(p *locks.Proc, pace func(progress float64)) (written, total int, err error) {
	if s.closed.Load() {
		return 0, 0, ErrClosed
	}
	b, _ := s.backend(p)
	ids := s.pool.dirtyBuffers()
	written, err = s.writeBuffers(p, &b.stats, ids, pace)
	b.stats.checkpointWrites.Add(uint64(written))
	return written, len(ids), err
}

// SyncFiles fsyncs every relation file and the base directory, and
// returns how many files it synced and the longest sync. With a log, a
// failed fsync is a PANIC (PostgreSQL's data_sync_retry = off): the
// kernel may have dropped the dirty pages, and only recovery from the log
// can restore them.
func (s *Store) SyncFiles(p *locks.Proc) (files int, longest time.Duration, err error) {
	rels := *s.rels.Load()
	if p != nil {
		p.SetWaitEvent(locks.WaitEventDataFileSync)
	}
	for _, r := range rels {
		start := time.Now()
		if e := r.sync(); e != nil {
			if s.wal != nil {
				s.wal.Panic(fmt.Sprintf("could not fsync file \"base/%d\": %s", r.id, errnoText(e)))
			}
			if err == nil {
				err = e
			}
		}
		longest = max(longest, time.Since(start))
		files++
	}
	if p != nil {
		p.ClearWaitEvent()
	}
	if e := s.fs.SyncDir(s.base); e != nil && err == nil {
		err = e
	}
	return files, longest, err
}

// SaveMaps persists the free space maps, and the visibility maps and
// indexes that changed.
func (s *Store) SaveMaps(p *locks.Proc) error {
	var err error
	for _, r := range *s.rels.Load() {
		if e := s.writeFSM(r); e != nil && err == nil {
			err = e
		}
		if e := s.saveVM(p, r); e != nil && err == nil {
			err = e
		}
	}
	for _, ix := range *s.idxs.Load() {
		if e := s.saveIndex(p, ix); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// Checkpoint writes every dirty buffer, fsyncs every relation file and
// persists free space maps and changed indexes, unpaced. Only one
// checkpoint runs at a time.
func (s *Store) Checkpoint(p *locks.Proc) error {
	s.ckpt.Lock()
	defer s.ckpt.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	return s.checkpoint(p)
}

func (s *Store) checkpoint(p *locks.Proc) error {
	b, _ := s.backend(p)
	st := &b.stats
	_, _, err := s.CheckpointBuffers(p, nil)
	if _, _, e := s.SyncFiles(p); e != nil && err == nil {
		err = e
	}
	if e := s.SaveMaps(p); e != nil && err == nil {
		err = e
	}
	if err == nil {
		st.checkpoints.Add(1)
	}
	return err
}

// Close checkpoints and closes every file. The store must be idle: no
// other method may run concurrently or afterwards (they return ErrClosed
// where they notice).
func (s *Store) Close(p *locks.Proc) error {
	s.ckpt.Lock()
	defer s.ckpt.Unlock()
	if s.closed.Load() {
		return nil
	}
	err := s.checkpoint(p)
	return errors.Join(err, s.closeFiles())
}

// Abandon closes every file without writing anything, as a crash would
// leave them (an immediate shutdown, or a failed start-up).
func (s *Store) Abandon() error {
	s.ckpt.Lock()
	defer s.ckpt.Unlock()
	if s.closed.Load() {
		return nil
	}
	return s.closeFiles()
}

func (s *Store) closeFiles() error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	s.closed.Store(true)
	var err error
	rels := *s.rels.Load()
	for _, r := range rels {
		r.ioMu.Lock()
		r.dropped = true
		err = errors.Join(err, r.file.Close())
		r.ioMu.Unlock()
	}
	empty := map[RelID]*relation{}
	s.rels.Store(&empty)
	emptyIdx := map[RelID]*index{}
	s.idxs.Store(&emptyIdx)
	return err
}

// errnoText is strerror's text for err's errno (%m), or err.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		t := errno.Error()
		if t != "" && t[0] >= 'a' && t[0] <= 'z' {
			t = string(t[0]-'a'+'A') + t[1:]
		}
		return t
	}
	return err.Error()
}
