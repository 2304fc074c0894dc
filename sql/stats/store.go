package stats

import (
	"encoding/json"
	"errors"
	"fmt"
	"lockd/vfs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Store holds one instance's planner statistics (TableStats by relation
// OID) and its per-table activity counters (activity.go), and keeps both
// in DataDir/global/lockd_statistics.json.
//
// Concurrency: the statistics are a copy-on-write map behind an atomic
// pointer, so Table is a lock-free load and a map lookup; publishing
// replaces the map under mu. Everything else is guarded by mu.
type Store struct {
	path string

	mu   sync.Mutex // serialises publishing; guards the activity state
	rels atomic.Pointer[map[uint32]*TableStats]

	// activity (activity.go), guarded by mu
	backends map[*Backend]struct{}
	closed   map[uint32]*totals // counts of ended backends (and of the file)
	bases    map[uint32]*base

	fileMu sync.Mutex // one write of the file at a time
	fs     vfs.FS     // where the file lives (the crash tests' faulty one)
}

func (s *Store) fsys() vfs.FS {
	if s.fs == nil {
		return vfs.Default
	}
	return s.fs
}

// Open loads the statistics file of dataDir, if there is one.
func Open(fsys vfs.FS, dataDir string) (*Store, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	s := &Store{fs: fsys, path: filepath.Join(dataDir, "global", "lockd_statistics.json"),
		backends: map[*Backend]struct{}{}, closed: map[uint32]*totals{}, bases: map[uint32]*base{}}
	rels := map[uint32]*TableStats{}
	data, err := vfs.ReadFile(s.fsys(), s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		var f fileData
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("statistics file %s is corrupt: %w", s.path, err)
		}
		for oid, t := range f.Tables {
			ts, err := t.decode()
			if err != nil {
				return nil, fmt.Errorf("statistics file %s is corrupt: %w", s.path, err)
			}
			rels[oid] = ts
		}
		for oid, a := range f.Activity {
			s.closed[oid] = &totals{ins: a.Inserted, upd: a.Updated, del: a.Deleted, live: a.Live, dead: a.Dead, changed: a.Changed,
				seqScan: a.SeqScan, seqRead: a.SeqRead, idxScan: a.IdxScan, idxFetch: a.IdxFetch, idxRead: a.IdxRead, hot: a.HotUpd}
			b := a.Base
			s.bases[oid] = &b
		}
	}
	s.rels.Store(&rels)
	return s, nil
}

// Table returns the statistics of relation oid, nil if there are none. It
// takes no lock and does not allocate.
func (s *Store) Table(oid uint32) *TableStats {
	if s == nil {
		return nil
	}
	return (*s.rels.Load())[oid]
}

// update replaces the published map by a copy changed by fn.
func (s *Store) update(fn func(m map[uint32]*TableStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := maps.Clone(*s.rels.Load())
	fn(m)
	s.rels.Store(&m)
}

// Publish makes ts the statistics of relation oid.
func (s *Store) Publish(oid uint32, ts *TableStats) {
	s.update(func(m map[uint32]*TableStats) { m[oid] = ts })
}

// SetSize records a relation's row count and size (VACUUM, CREATE
// INDEX), keeping its column statistics.
func (s *Store) SetSize(oid uint32, tuples, pages float64) {
	s.update(func(m map[uint32]*TableStats) {
		ts := &TableStats{}
		if old := m[oid]; old != nil {
			*ts = *old
		}
		ts.RelTuples, ts.RelPages = tuples, pages
		m[oid] = ts
	})
}

// SetHeapSize records a table's row count, size and all-visible pages
// (vac_update_relstats: VACUUM, CREATE INDEX), keeping its column
// statistics.
func (s *Store) SetHeapSize(oid uint32, tuples, pages, allVisible float64) {
	s.update(func(m map[uint32]*TableStats) {
		ts := &TableStats{}
		if old := m[oid]; old != nil {
			*ts = *old
		}
		ts.RelTuples, ts.RelPages, ts.RelAllVisible = tuples, pages, allVisible
		m[oid] = ts
	})
}

// Truncated records that a transaction that truncated table oid (and so
// gave it and its indexes new, empty storage) committed: their row counts
// become unknown and their sizes 0, as TRUNCATE's new relfilenodes do in
// PostgreSQL; column statistics stay.
func (s *Store) Truncated(oid uint32, indexes []uint32) {
	s.update(func(m map[uint32]*TableStats) {
		for _, o := range append([]uint32{oid}, indexes...) {
			if old := m[o]; old != nil {
				ts := *old
				ts.RelTuples, ts.RelPages, ts.RelAllVisible = -1, 0, 0
				m[o] = &ts
			}
		}
	})
}

// Forget drops everything known about the given relations (DROP).
func (s *Store) Forget(oids ...uint32) {
	s.update(func(m map[uint32]*TableStats) {
		for _, o := range oids {
			delete(m, o)
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range oids {
		delete(s.closed, o)
		delete(s.bases, o)
	}
}

// Prune forgets the relations keep does not want (at start-up: those
// dropped since the file was written).
func (s *Store) Prune(keep func(oid uint32) bool) {
	var gone []uint32
	for oid := range *s.rels.Load() {
		if !keep(oid) {
			gone = append(gone, oid)
		}
	}
	s.mu.Lock()
	for oid := range s.closed {
		if !keep(oid) {
			gone = append(gone, oid)
		}
	}
	for oid := range s.bases {
		if !keep(oid) {
			gone = append(gone, oid)
		}
	}
	s.mu.Unlock()
	if len(gone) > 0 {
		s.Forget(gone...)
	}
}

// Flush writes the statistics and the activity counters to the file
// (at every checkpoint and at a clean shutdown), with a temporary file,
// fsync and rename.
func (s *Store) Flush() error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	f := fileData{Tables: map[uint32]fileTable{}, Activity: map[uint32]fileActivity{}}
	for oid, ts := range *s.rels.Load() {
		f.Tables[oid] = encodeTable(ts)
	}
	s.mu.Lock()
	for oid, t := range s.sumAllLocked() {
		a := fileActivity{Inserted: t.ins, Updated: t.upd, Deleted: t.del, Live: t.live, Dead: t.dead, Changed: t.changed,
			SeqScan: t.seqScan, SeqRead: t.seqRead, IdxScan: t.idxScan, IdxFetch: t.idxFetch, IdxRead: t.idxRead, HotUpd: t.hot}
		if b := s.bases[oid]; b != nil {
			a.Base = *b
		}
		f.Activity[oid] = a
	}
	for oid, b := range s.bases {
		if _, ok := f.Activity[oid]; !ok {
			f.Activity[oid] = fileActivity{Base: *b}
		}
	}
	s.mu.Unlock()
	data, err := json.Marshal(&f)
	if err != nil {
		return err
	}
	if err := s.fsys().MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return vfs.WriteFileAtomic(s.fsys(), s.path, data)
}

// fileData is the statistics file.
type fileData struct {
	Tables   map[uint32]fileTable    `json:"tables"`
	Activity map[uint32]fileActivity `json:"activity"`
}

type fileActivity struct {
	Inserted int64 `json:"ins,omitempty"`
	Updated  int64 `json:"upd,omitempty"`
	Deleted  int64 `json:"del,omitempty"`
	Live     int64 `json:"live,omitempty"`
	Dead     int64 `json:"dead,omitempty"`
	Changed  int64 `json:"changed,omitempty"`
	SeqScan  int64 `json:"seq_scan,omitempty"`
	SeqRead  int64 `json:"seq_tup_read,omitempty"`
	IdxScan  int64 `json:"idx_scan,omitempty"`
	IdxFetch int64 `json:"idx_tup_fetch,omitempty"`
	IdxRead  int64 `json:"idx_tup_read,omitempty"`
	HotUpd   int64 `json:"n_tup_hot_upd,omitempty"`
	Base     base  `json:"base"`
}

// base is what VACUUM, ANALYZE and TRUNCATE last set of a table's
// activity: the live and dead row counts they measured and the sums of
// the counters at that moment, from which the counts since are derived.
type base struct {
	LiveBase  int64 `json:"live_base,omitempty"`
	LiveAt    int64 `json:"live_at,omitempty"`
	DeadBase  int64 `json:"dead_base,omitempty"`
	DeadAt    int64 `json:"dead_at,omitempty"`
	ChangedAt int64 `json:"changed_at,omitempty"`
	InsAt     int64 `json:"ins_at,omitempty"`

	// the cumulative counters' sums at the last pg_stat_reset(), which
	// the counts shown start from
	ResetIns      int64 `json:"reset_ins,omitempty"`
	ResetUpd      int64 `json:"reset_upd,omitempty"`
	ResetDel      int64 `json:"reset_del,omitempty"`
	ResetSeqScan  int64 `json:"reset_seq_scan,omitempty"`
	ResetSeqRead  int64 `json:"reset_seq_tup_read,omitempty"`
	ResetIdxScan  int64 `json:"reset_idx_scan,omitempty"`
	ResetIdxFetch int64 `json:"reset_idx_tup_fetch,omitempty"`
	ResetIdxRead  int64 `json:"reset_idx_tup_read,omitempty"`
	ResetHot      int64 `json:"reset_n_tup_hot_upd,omitempty"`

	LastVacuum       time.Time `json:"last_vacuum,omitzero"`
	LastAnalyze      time.Time `json:"last_analyze,omitzero"`
	LastAutoVacuum   time.Time `json:"last_autovacuum,omitzero"`
	LastAutoAnalyze  time.Time `json:"last_autoanalyze,omitzero"`
	VacuumCount      int64     `json:"vacuum_count,omitempty"`
	AutoVacuumCount  int64     `json:"autovacuum_count,omitempty"`
	AnalyzeCount     int64     `json:"analyze_count,omitempty"`
	AutoAnalyzeCount int64     `json:"autoanalyze_count,omitempty"`
}
