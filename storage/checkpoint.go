package storage

import (
	"errors"
	"os"

	"lockd/locks"
)

// Checkpoint makes everything written so far durable (CheckPointBuffers
// and friends): it writes every dirty buffer, fsyncs every relation file,
// then persists free space maps and changed indexes. There is no WAL: a
// crash loses whatever changed after the last completed checkpoint, and
// heap pages written back by eviction after it may disagree with the
// indexes and free space maps saved by it.
//
// Checkpoint runs concurrently with normal work; it pins one buffer at a
// time and holds its content lock (shared) only while copying the page.
// Only one checkpoint runs at a time.
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
	err := s.flushAll(p, st)
	rels := *s.rels.Load()
	if p != nil {
		p.SetWaitEvent(locks.WaitEventDataFileSync)
	}
	for _, r := range rels {
		if e := r.sync(); e != nil && err == nil {
			err = e
		}
	}
	if p != nil {
		p.ClearWaitEvent()
	}
	for _, r := range rels {
		if e := s.writeFSM(r); e != nil && err == nil {
			err = e
		}
	}
	for _, ix := range *s.idxs.Load() {
		if e := s.saveIndex(p, ix); e != nil && err == nil {
			err = e
		}
	}
	if e := syncDir(s.base); e != nil && err == nil {
		err = e
	}
	if err == nil {
		st.checkpoints.Add(1)
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if e := d.Close(); err == nil {
		err = e
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
	s.ddl.Lock()
	defer s.ddl.Unlock()
	s.closed.Store(true)
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
