package storage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"lockd/locks"
	"lockd/vfs"
	"lockd/wal"
)

// Indexes: one in-memory B+tree per index RelID mapping []byte keys
// (memcmp-ordered encodings made by the SQL layer) to heap TIDs, with
// duplicates (several versions of a row, or non-unique keys).
//
// Concurrency: each index has one LWLock, shared for lookups and range
// scans, exclusive for inserts and deletes. This differs from PostgreSQL,
// whose nbtree locks one page at a time (Lehman & Yao), so writers to
// different leaf pages do not block each other; here they do. The lock is
// in tranche BufferContent, where PostgreSQL's B-tree page locks also
// show, so waits on it appear as LWLock/BufferContent.
//
// Persistence: every change is logged (walrec.go: an entry inserted or
// removed, under the index's exclusive lock), and the index file
// DataDir/base/<RelID> holds a header and the sorted entries: a checkpoint
// rewrites it (temporary file, fsync, rename) when the index changed, after
// flushing the log past every change the image holds, and Open bulk-loads
// it. Recovery replays the entries logged since the checkpoint's redo
// point onto the image; replay is idempotent, so an image newer than the
// redo point does no harm.
type index struct {
	id   RelID
	path string
	lock locks.LWLock // tranche BufferContent
	tree *btree       // guarded by lock
	// changes counts modifications (guarded by lock); saved is its value
	// at the last save (guarded by Store.ckpt: only Checkpoint touches it).
	changes uint64
	saved   uint64
	dropped bool // guarded by lock
	// vacuums counts VACUUM's index passes (bulkDelete): only after one
	// can a heap TID an entry named come back in a new entry
	// (IndexInsertUnchanged)
	vacuums atomic.Uint64
	// shape caches the last count of distinct keys (IndexShape).
	shape struct {
		sync.Mutex
		counted      bool
		distinct, at int    // distinct keys among at entries
		changes      uint64 // index.changes when counted
	}
}

// indexFileMagic starts an index file. Files of version 01 were written
// when keys with a NULL column were not indexed: an index read from one
// would miss those rows, so they are refused (isIndexFile still knows
// them, so they are never taken for heap files).
const (
	indexFileMagic   = "LKDIDX02"
	indexFileMagicV1 = "LKDIDX01"
)

// isIndexFile reports whether path starts with an index magic.
func isIndexFile(fsys vfs.FS, path string) (bool, error) {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return false, fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	var m [8]byte
	n, _ := io.ReadFull(f, m[:])
	return n == 8 && (string(m[:]) == indexFileMagic || string(m[:]) == indexFileMagicV1), nil
}

func newIndex(id RelID, path string, t *btree) *index {
	ix := &index{id: id, path: path, tree: t}
	ix.lock.Init(locks.TrancheBufferContent)
	return ix
}

// loadIndex reads an index file: magic, entry count (u64), then per entry
// key length (u32), key, block (u32), offset (u16); little-endian.
func loadIndex(fsys vfs.FS, id RelID, path string) (*index, error) {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("storage: index %d: %w", id, err)
	}
	if string(hdr[:8]) == indexFileMagicV1 {
		return nil, fmt.Errorf("storage: index file %s was written by an older lockd, whose indexes left out keys with NULLs; "+
			"this lockd cannot use it: dump the data with the older lockd and load it into a new data directory", path)
	}
	n := binary.LittleEndian.Uint64(hdr[8:])
	entries := make([]btEntry, 0, min(n, 1<<24))
	var eh [10]byte
	for i := uint64(0); i < n; i++ {
		if _, err := io.ReadFull(r, eh[:4]); err != nil {
			return nil, fmt.Errorf("storage: index %d truncated: %w", id, err)
		}
		key := make([]byte, binary.LittleEndian.Uint32(eh[:4]))
		if _, err := io.ReadFull(r, key); err != nil {
			return nil, fmt.Errorf("storage: index %d truncated: %w", id, err)
		}
		if _, err := io.ReadFull(r, eh[4:10]); err != nil {
			return nil, fmt.Errorf("storage: index %d truncated: %w", id, err)
		}
		entries = append(entries, btEntry{key: key, tid: TID{
			Block: binary.LittleEndian.Uint32(eh[4:8]), Offset: binary.LittleEndian.Uint16(eh[8:10])}})
	}
	return newIndex(id, path, buildBtree(entries)), nil
}

// serialize writes the index file image of ix. Caller holds ix.lock.
func (ix *index) serialize(w *bytes.Buffer) {
	w.WriteString(indexFileMagic)
	var b [10]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(ix.tree.count))
	w.Write(b[:8])
	ix.tree.ascend(nil, TID{}, func(e *btEntry) bool {
		binary.LittleEndian.PutUint32(b[:4], uint32(len(e.key)))
		w.Write(b[:4])
		w.Write(e.key)
		binary.LittleEndian.PutUint32(b[:4], e.tid.Block)
		binary.LittleEndian.PutUint16(b[4:6], e.tid.Offset)
		w.Write(b[:6])
		return true
	})
}

// saveIndex writes ix to its file if it changed since the last save,
// after flushing the log past every change the image holds (WAL before
// data).
func (s *Store) saveIndex(p *locks.Proc, ix *index) error {
	var buf bytes.Buffer
	ix.lock.Acquire(p, locks.LWShared)
	if ix.dropped || ix.changes == ix.saved {
		ix.lock.Release(p)
		return nil
	}
	changes := ix.changes
	buf.Grow(int(ix.tree.nbytes.Load()) + 64)
	ix.serialize(&buf)
	ix.lock.Release(p)
	if s.wal != nil {
		s.wal.Flush(p, s.wal.InsertPosition())
	}
	if err := vfs.WriteFileAtomic(s.fs, ix.path, buf.Bytes()); err != nil {
		return fmt.Errorf("storage: writing index %d: %w", ix.id, err)
	}
	ix.saved = changes
	return nil
}

// index returns the open index idx.
func (s *Store) index(idx RelID) (*index, error) {
	if ix := (*s.idxs.Load())[idx]; ix != nil {
		return ix, nil
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return nil, fmt.Errorf("%w: index %d", ErrNoRelation, idx)
}

// CreateIndex creates an empty index (its file holds just the header).
// The creation is logged first.
func (s *Store) CreateIndex(idx RelID) error { return s.createIndex(nil, idx, true) }

func (s *Store) createIndex(p *locks.Proc, idx RelID, logIt bool) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if s.exists(idx) {
		return fmt.Errorf("%w: %d", ErrRelationExists, idx)
	}
	if logIt {
		s.logStorage(p, xlogSmgrCreate, idx, smgrIndex)
	}
	ix := newIndex(idx, s.relPath(idx), newBtree())
	var buf bytes.Buffer
	ix.serialize(&buf)
	if err := vfs.WriteFileAtomic(s.fs, ix.path, buf.Bytes()); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	old := *s.idxs.Load()
	m := make(map[RelID]*index, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[idx] = ix
	s.idxs.Store(&m)
	return nil
}

// DropIndex removes an index and its file. As DropRelation, it logs
// nothing: the commit or abort record lists the file.
func (s *Store) DropIndex(idx RelID) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	ix, err := s.index(idx)
	if err != nil {
		return err
	}
	old := *s.idxs.Load()
	m := make(map[RelID]*index, len(old))
	for k, v := range old {
		if k != idx {
			m[k] = v
		}
	}
	s.idxs.Store(&m)
	ix.lock.Acquire(nil, locks.LWExclusive)
	ix.dropped = true
	ix.tree = newBtree()
	ix.lock.Release(nil)
	if err := s.fs.Remove(ix.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("storage: %w", err)
	}
	return nil
}

// TruncateIndex empties an index (logged).
func (s *Store) TruncateIndex(idx RelID) error {
	ix, err := s.index(idx)
	if err != nil {
		return err
	}
	s.logStorage(nil, xlogSmgrTruncate, idx, smgrIndex)
	s.truncateIndex(nil, ix)
	return nil
}

func (s *Store) truncateIndex(p *locks.Proc, ix *index) {
	ix.lock.Acquire(p, locks.LWExclusive)
	ix.tree = newBtree()
	ix.changes++
	ix.lock.Release(p)
}

// IndexInsert adds (key, tid). Inserting an entry that is already there is
// a no-op. It checks nothing: a unique index's entries go in with
// IndexInsertUnchanged.
func (s *Store) IndexInsert(p *locks.Proc, idx RelID, key []byte, tid TID) error {
	ix, err := s.index(idx)
	if err != nil {
		return err
	}
	ix.lock.Acquire(p, locks.LWExclusive)
	visited := ix.tree.height // the path down to the leaf the entry goes in
	if ix.tree.insert(key, tid) {
		ix.changes++
		if s.wal != nil {
			s.logIndex(p, xlogBtreeInsert, ix, key, tid)
		}
	}
	ix.lock.Release(p)
	b, shared := s.backend(p)
	s.countIndexIO(b, shared, idx, visited)
	return nil
}

// IndexBulkInsert adds entries to an index built in the caller's
// transaction (CREATE INDEX, ADD PRIMARY KEY): the entries go in under one
// exclusive hold and are logged in large records of many entries each
// (as PostgreSQL logs a new index's pages whole) rather than one record
// per entry. Entries already present are skipped.
func (s *Store) IndexBulkInsert(p *locks.Proc, idx RelID, entries []IndexEntry) error {
	ix, err := s.index(idx)
	if err != nil {
		return err
	}
	ix.lock.Acquire(p, locks.LWExclusive)
	defer ix.lock.Release(p)
	const chunk = 64 << 10
	var buf []byte
	flush := func() {
		if s.wal != nil && len(buf) > 4 {
			b := s.wal.Begin(p, wal.RmgrBtree, xlogBtreeNewroot)
			b.SetMain(append(b.Main(), buf...))
			b.Insert()
		}
		buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(ix.id))
	}
	flush()
	// A new index's sorted entries are loaded bottom-up; otherwise (or
	// out of order) they are inserted one by one.
	loaded := ix.tree.load(entries)
	for _, e := range entries {
		if !loaded && !ix.tree.insert(e.Key, e.TID) {
			continue
		}
		ix.changes++
		buf = binary.LittleEndian.AppendUint32(buf, e.TID.Block)
		buf = binary.LittleEndian.AppendUint16(buf, e.TID.Offset)
		buf = binary.LittleEndian.AppendUint16(buf, uint16(len(e.Key)))
		buf = append(buf, e.Key...)
		if len(buf) >= chunk {
			flush()
		}
	}
	flush()
	return nil
}

// IndexVacuums returns how many VACUUM index passes idx has had, for
// IndexInsertUnchanged; 0 for an unknown index.
func (s *Store) IndexVacuums(idx RelID) uint64 {
	ix, err := s.index(idx)
	if err != nil {
		return 0
	}
	return ix.vacuums.Load()
}

// IndexInsertUnchanged adds (key, tid) provided the entries under key,
// other than tid itself, are still exactly seen (in TID order): the TIDs a
// caller's unique check found with IndexLookup and judged no conflict,
// having read IndexVacuums (vacuums) before it looked. It reports false,
// adding nothing, when an entry came or went meanwhile, or a VACUUM pass
// (which may free a TID seen for a new tuple) ran; the caller checks
// again. So the check (under the shared lock, with the heap reads it
// needs) and the insertion (under the exclusive lock, with none) act as
// one step: of two backends inserting one key only one gets in, as
// PostgreSQL's _bt_check_unique and the insertion run under one leaf
// page lock.
func (s *Store) IndexInsertUnchanged(p *locks.Proc, idx RelID, key []byte, tid TID, seen []TID, vacuums uint64) (bool, error) {
	ix, err := s.index(idx)
	if err != nil {
		return false, err
	}
	ix.lock.Acquire(p, locks.LWExclusive)
	defer ix.lock.Release(p)
	if ix.vacuums.Load() != vacuums {
		return false, nil
	}
	i, same := 0, true
	b, shared := s.backend(p)
	visited := ix.tree.ascend(key, TID{}, func(e *btEntry) bool {
		if !bytes.Equal(e.key, key) {
			return false
		}
		if e.tid == tid {
			return true
		}
		if i >= len(seen) || seen[i] != e.tid {
			same = false
			return false
		}
		i++
		return true
	})
	if !same || i != len(seen) {
		s.countIndexIO(b, shared, idx, visited)
		return false, nil
	}
	// the insertion goes down the path the check read: its leaf counts
	// once more, as _bt_doinsert's page access after _bt_check_unique
	s.countIndexIO(b, shared, idx, visited+1)
	if ix.tree.insert(key, tid) {
		ix.changes++
		if s.wal != nil {
			s.logIndex(p, xlogBtreeInsert, ix, key, tid)
		}
	}
	return true, nil
}

// IndexDelete removes (key, tid) if present.
func (s *Store) IndexDelete(p *locks.Proc, idx RelID, key []byte, tid TID) error {
	ix, err := s.index(idx)
	if err != nil {
		return err
	}
	ix.lock.Acquire(p, locks.LWExclusive)
	visited := ix.tree.height
	if ix.tree.delete(key, tid) {
		ix.changes++
		if s.wal != nil {
			s.logIndex(p, xlogBtreeDelete, ix, key, tid)
		}
	}
	ix.lock.Release(p)
	b, shared := s.backend(p)
	s.countIndexIO(b, shared, idx, visited)
	return nil
}

// IndexLookup calls fn with every TID stored under key, in TID order,
// until fn returns false. fn runs under the index lock (shared): it must
// not call back into the index (copy the TIDs and fetch afterwards, or
// fetch heap tuples only — heap access takes no index lock).
func (s *Store) IndexLookup(p *locks.Proc, idx RelID, key []byte, fn func(TID) bool) error {
	ix, err := s.index(idx)
	if err != nil {
		return err
	}
	ix.lock.Acquire(p, locks.LWShared)
	defer ix.lock.Release(p)
	visited := ix.tree.ascend(key, TID{}, func(e *btEntry) bool {
		return bytes.Equal(e.key, key) && fn(e.tid)
	})
	b, shared := s.backend(p)
	s.countIndexIO(b, shared, idx, visited)
	return nil
}

// IndexRange calls fn for every entry with lo ≤ key ≤ hi (bounds exclusive
// when loIncl/hiIncl are false; nil means unbounded), in key then TID
// order, until fn returns false. key is valid only during fn; fn runs under
// the index lock (shared), as for IndexLookup.
func (s *Store) IndexRange(p *locks.Proc, idx RelID, lo, hi []byte, loIncl, hiIncl bool, fn func(key []byte, tid TID) bool) error {
	var visited int
	ix, err := s.index(idx)
	if err != nil {
		return err
	}
	ix.lock.Acquire(p, locks.LWShared)
	defer ix.lock.Release(p)
	b, shared := s.backend(p)
	defer func() { s.countIndexIO(b, shared, idx, visited) }()
	visited = ix.tree.ascend(lo, TID{}, func(e *btEntry) bool {
		if lo != nil && !loIncl && bytes.Equal(e.key, lo) {
			return true
		}
		if hi != nil {
			c := bytes.Compare(e.key, hi)
			if c > 0 || c == 0 && !hiIncl {
				return false
			}
		}
		return fn(e.key, e.tid)
	})
	return nil
}

// IndexEntries returns the number of entries in idx (for tests and
// statistics).
func (s *Store) IndexEntries(idx RelID) (int, error) {
	ix, err := s.index(idx)
	if err != nil {
		return 0, err
	}
	ix.lock.Acquire(nil, locks.LWShared)
	defer ix.lock.Release(nil)
	return ix.tree.count, nil
}

// bulkDelete removes every entry whose TID is in dead (sorted) and returns
// how many (btbulkdelete), under the index lock exclusive, and logs the
// TIDs.
func (s *Store) bulkDelete(p *locks.Proc, ix *index, dead []TID) uint64 {
	ix.lock.Acquire(p, locks.LWExclusive)
	defer ix.lock.Release(p)
	ix.vacuums.Add(1)
	removed := ix.removeTIDs(dead)
	if removed > 0 && s.wal != nil {
		b := s.wal.Begin(p, wal.RmgrBtree, xlogBtreeVacuum)
		main := binary.LittleEndian.AppendUint32(b.Main(), uint32(ix.id))
		b.SetMain(encodeTIDs(main, dead))
		b.Insert()
	}
	return removed
}

// removeTIDs removes the entries whose TID is in dead (sorted). Caller
// holds the lock exclusively.
func (ix *index) removeTIDs(dead []TID) uint64 {
	var removed uint64
	for n := ix.tree.first(); n != nil; n = n.next {
		for i := 0; i < len(n.entries); {
			if containsTID(dead, n.entries[i].tid) {
				ix.tree.removeAt(n, i)
				removed++
				continue
			}
			i++
		}
	}
	if removed > 0 {
		ix.changes++
	}
	return removed
}

// IndexShape is what a model of an index's size needs of its contents.
type IndexShape struct {
	Entries  int   // index entries
	Distinct int   // distinct keys among them (when asked for)
	KeyBytes int64 // the keys' bytes, summed
}

// IndexShape returns idx's entry count and key bytes and, with distinct
// set, how many distinct keys it holds. The distinct keys are counted by
// a walk over the entries under the index's shared lock, again only once
// the index has changed by an eighth since the last count, so a planner
// may ask per plan: the walks cost a few comparisons per change.
func (s *Store) IndexShape(p *locks.Proc, idx RelID, distinct bool) (IndexShape, error) {
	ix, err := s.index(idx)
	if err != nil {
		return IndexShape{}, err
	}
	if distinct {
		ix.shape.Lock()
		defer ix.shape.Unlock()
	}
	ix.lock.Acquire(p, locks.LWShared)
	defer ix.lock.Release(p)
	n := ix.tree.count
	sh := IndexShape{Entries: n, KeyBytes: ix.tree.nbytes.Load() - int64(n)*btEntryCost}
	if !distinct || n == 0 {
		return sh, nil
	}
	c := &ix.shape
	if drift := ix.changes - c.changes; !c.counted || drift*8 > uint64(max(n, c.at)) {
		d := 0
		var prev []byte
		ix.tree.ascend(nil, TID{}, func(e *btEntry) bool {
			if d == 0 || !bytes.Equal(e.key, prev) {
				d++
				prev = e.key
			}
			return true
		})
		c.counted, c.distinct, c.at, c.changes = true, d, n, ix.changes
	}
	sh.Distinct = max(1, min(n, c.distinct))
	return sh, nil
}
