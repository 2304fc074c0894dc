package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"lockd/locks"
	"lockd/txn"
	"lockd/vfs"
	"lockd/wal"
)

// RelID is a relation's file node: heap and index files are
// DataDir/base/<RelID>.
type RelID uint32

// TID is a tuple id (PostgreSQL's ItemPointerData, the ctid): a block
// number and a 1-based line pointer number.
type TID struct {
	Block  uint32
	Offset uint16
}

// InvalidBlock is PostgreSQL's InvalidBlockNumber.
const InvalidBlock = ^uint32(0)

// Valid reports whether tid names a line pointer (offset ≥ 1).
func (t TID) Valid() bool { return t.Offset != 0 && t.Block != InvalidBlock }

func (t TID) String() string {
	return "(" + strconv.FormatUint(uint64(t.Block), 10) + "," + strconv.FormatUint(uint64(t.Offset), 10) + ")"
}

// Config configures a Store.
type Config struct {
	DataDir       string
	SharedBuffers int // in 8 kB pages (shared_buffers); default 16384 (128 MB)
	Locks         *locks.Manager
	Txns          *txn.Manager
	// WAL is the write-ahead log every change is logged in (see wal.go).
	// nil: nothing is logged (tests and benchmarks of storage alone).
	WAL         *wal.WAL
	FS          vfs.FS // vfs.Default if nil
	DatabaseOID uint32 // field1 of relation extension lock tags
	Logger      *slog.Logger
}

// Errors. Errors that may reach a client are *pgerr.Error.
var (
	// ErrNoRelation: the relation (or index) does not exist in the store.
	ErrNoRelation = errors.New("storage: relation does not exist")
	// ErrRelationExists: CreateRelation/CreateIndex of an existing RelID.
	ErrRelationExists = errors.New("storage: relation already exists")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("storage: store is closed")
	// ErrNoUnpinnedBuffers: every buffer is pinned (PostgreSQL: "no
	// unpinned buffers available").
	ErrNoUnpinnedBuffers = errors.New("storage: no unpinned buffers available")
)

// Store is the storage manager of one data directory: relation files, the
// shared buffer pool, free space maps, B-tree indexes, and the per-backend
// storage state (target blocks, stats).
//
// All methods are safe for concurrent use; methods taking a *locks.Proc
// must be called from that Proc's goroutine. DDL-like methods
// (CreateRelation, DropRelation, TruncateRelation and their index
// counterparts) expect the caller to hold the lock PostgreSQL would hold
// (AccessExclusiveLock for drop and truncate): they do not exclude
// concurrent tuple access themselves.
type Store struct {
	cfg    Config
	base   string // DataDir/base
	logger *slog.Logger
	lm     *locks.Manager
	tm     *txn.Manager
	wal    *wal.WAL // nil: no logging
	fs     vfs.FS

	pool bufferPool

	// onPrune is told of each opportunistic prune's removed versions
	// (SetOnPrune).
	onPrune atomic.Pointer[func(rel RelID, removed int)]

	// rels and idxs are copy-on-write maps, replaced under ddl; readers
	// load them with no lock, so the hot paths never touch a shared mutex.
	rels atomic.Pointer[map[RelID]*relation]
	idxs atomic.Pointer[map[RelID]*index]
	ddl  sync.Mutex

	backends  backendTable
	relIOBase relIOBase // pg_stat_reset's baseline of RelIO (relio.go)

	// extPolicy is the relation extension policy (SetExtensionPolicy);
	// nil means the defaults. noFallocate is set once fallocate turned
	// out to be unsupported.
	extPolicy   atomic.Pointer[extensionPolicy]
	noFallocate atomic.Bool

	ckpt   sync.Mutex // one checkpoint at a time
	closed atomic.Bool
}

// relation is one heap relation's file and free space map.
type relation struct {
	id   RelID
	path string
	// ioMu keeps the file open while it is read, written or synced
	// (RLock); DropRelation and Close take it exclusively to close it.
	ioMu    sync.RWMutex
	file    vfs.File // guarded by ioMu
	dropped bool     // guarded by ioMu
	// nblocks is the size in pages; it grows under the relation extension
	// lock after the new pages are in the file, and is reset by truncate.
	nblocks atomic.Uint32
	// gen changes on truncate so backends drop cached target blocks.
	gen atomic.Uint32
	fsm fsm
	// vm is the visibility map (vismap.go).
	vm visibilityMap
	// ext are the relation's extension counters (ExtensionStats).
	ext relExtStats
	// multiFloor bounds from below the multixacts the relation's tuples
	// may name in xmax: multiFloorNone when none, multiFloorUnknown after
	// a restart until VACUUM has looked. Lowered (atomic minimum) when a
	// multixact is stored; set by VACUUM (vacuum.go).
	multiFloor atomic.Uint32
	// multiNoted is the oldest multixact stored since the last VACUUM of
	// the relation began (multiFloorNone if none): VACUUM's new floor
	// includes it, as those may be on pages it had already passed.
	multiNoted atomic.Uint32
}

const (
	multiFloorUnknown = 0
	multiFloorNone    = ^uint32(0)
)

// noteMulti lowers r's multixact floor (unless unknown) and multiNoted to
// xmax if flags say it is a multixact.
func (r *relation) noteMulti(xmax txn.Xid, flags uint16) {
	if flags&txn.XmaxIsMulti == 0 {
		return
	}
	atomicMin(&r.multiNoted, uint32(xmax))
	atomicMin(&r.multiFloor, uint32(xmax))
}

// atomicMin lowers a to v unless a holds multiFloorUnknown or less.
func atomicMin(a *atomic.Uint32, v uint32) {
	for {
		cur := a.Load()
		if cur == multiFloorUnknown || cur <= v || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Open opens (creating if needed) the store in cfg.DataDir: every
// relation file in DataDir/base, its free space map (rebuilt from the pages
// if DataDir/base/<rel>_fsm is missing or stale) and every index.
func Open(cfg Config) (*Store, error) {
	if cfg.SharedBuffers <= 0 {
		cfg.SharedBuffers = 16384
	}
	if cfg.SharedBuffers < 16 {
		return nil, fmt.Errorf("storage: shared_buffers must be at least 16 pages, got %d", cfg.SharedBuffers)
	}
	if cfg.Locks == nil || cfg.Txns == nil {
		return nil, errors.New("storage: Config.Locks and Config.Txns are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	s := &Store{
		cfg:    cfg,
		base:   filepath.Join(cfg.DataDir, "base"),
		logger: cfg.Logger,
		lm:     cfg.Locks,
		tm:     cfg.Txns,
		wal:    cfg.WAL,
		fs:     cfg.FS,
	}
	if err := s.fs.MkdirAll(s.base, 0o700); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	if err := s.pool.init(cfg.SharedBuffers); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	rels := map[RelID]*relation{}
	idxs := map[RelID]*index{}
	ents, err := s.fs.ReadDir(s.base)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	fail := func(err error) (*Store, error) {
		for _, r := range rels {
			r.file.Close()
		}
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			s.fs.Remove(filepath.Join(s.base, name))
			continue
		}
		n, err := strconv.ParseUint(name, 10, 32)
		if err != nil || !e.Type().IsRegular() {
			continue
		}
		id := RelID(n)
		path := filepath.Join(s.base, name)
		isIdx, err := isIndexFile(s.fs, path)
		if err != nil {
			return fail(err)
		}
		if isIdx {
			ix, err := loadIndex(s.fs, id, path)
			if err != nil {
				return fail(err)
			}
			idxs[id] = ix
			continue
		}
		r, err := openRelation(s.fs, id, path)
		if err != nil {
			return fail(err)
		}
		rels[id] = r
		if err := s.loadFSM(r); err != nil {
			return fail(err)
		}
		s.loadVM(r)
	}
	s.rels.Store(&rels)
	s.idxs.Store(&idxs)
	return s, nil
}

func openRelation(fsys vfs.FS, id RelID, path string) (*relation, error) {
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("storage: %w", err)
	}
	r := &relation{id: id, path: path, file: f}
	r.multiNoted.Store(multiFloorNone) // multiFloor stays unknown until VACUUM
	// A torn last page (crash during extension) is ignored.
	r.nblocks.Store(uint32(st.Size() / PageSize))
	return r, nil
}

// relation returns the open heap relation rel.
func (s *Store) relation(rel RelID) (*relation, error) {
	if r := (*s.rels.Load())[rel]; r != nil {
		return r, nil
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return nil, fmt.Errorf("%w: %d", ErrNoRelation, rel)
}

func (s *Store) relPath(rel RelID) string {
	return filepath.Join(s.base, strconv.FormatUint(uint64(rel), 10))
}

// exists reports whether rel is used by a heap or an index. Caller holds ddl.
func (s *Store) exists(rel RelID) bool {
	return (*s.rels.Load())[rel] != nil || (*s.idxs.Load())[rel] != nil
}

// CreateRelation creates an empty heap relation file. The creation is
// logged (smgr create) first, so that recovery recreates the file for the
// changes logged after it.
func (s *Store) CreateRelation(rel RelID) error {
	return s.createRelation(nil, rel, true)
}

func (s *Store) createRelation(p *locks.Proc, rel RelID, logIt bool) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if s.exists(rel) {
		return fmt.Errorf("%w: %d", ErrRelationExists, rel)
	}
	if logIt {
		s.logStorage(p, xlogSmgrCreate, rel, smgrHeap)
	}
	path := s.relPath(rel)
	f, err := s.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	r := &relation{id: rel, path: path, file: f}
	r.multiFloor.Store(multiFloorNone)
	r.multiNoted.Store(multiFloorNone)
	s.fs.Remove(s.fsmPath(rel))
	s.fs.Remove(s.vmPath(rel))
	old := *s.rels.Load()
	m := make(map[RelID]*relation, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[rel] = r
	s.rels.Store(&m)
	return nil
}

// DropRelation drops rel's buffers and removes its files. The caller holds
// AccessExclusiveLock on the relation. Nothing is logged: the commit or
// abort record that makes the drop happen lists the files (see txn), and
// its replay drops them.
func (s *Store) DropRelation(rel RelID) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	r := (*s.rels.Load())[rel]
	if r == nil {
		return fmt.Errorf("%w: %d", ErrNoRelation, rel)
	}
	old := *s.rels.Load()
	m := make(map[RelID]*relation, len(old))
	for k, v := range old {
		if k != rel {
			m[k] = v
		}
	}
	s.rels.Store(&m)
	s.pool.dropRelationBuffers(rel)
	r.ioMu.Lock()
	r.dropped = true
	err := r.file.Close()
	r.ioMu.Unlock()
	if e := s.fs.Remove(r.path); e != nil && err == nil {
		err = e
	}
	s.fs.Remove(s.fsmPath(rel))
	s.fs.Remove(s.vmPath(rel))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	return nil
}

// TruncateRelation empties rel: drops its buffers, truncates the file to
// zero pages and clears its free space map. The caller holds
// AccessExclusiveLock on the relation. The truncation is logged and the
// record flushed before the file shrinks (RelationTruncate), so that
// recovery never meets changes to pages the file no longer has without
// knowing why.
func (s *Store) TruncateRelation(rel RelID) error {
	r, err := s.relation(rel)
	if err != nil {
		return err
	}
	if s.wal != nil {
		s.wal.Flush(nil, s.logStorage(nil, xlogSmgrTruncate, rel, smgrHeap))
	}
	return s.truncateRelation(r)
}

func (s *Store) truncateRelation(r *relation) error {
	s.ddl.Lock()
	defer s.ddl.Unlock()
	s.pool.dropRelationBuffers(r.id)
	r.ioMu.RLock()
	err := r.file.Truncate(0)
	r.ioMu.RUnlock()
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	r.nblocks.Store(0)
	r.gen.Add(1)
	r.fsm.reset()
	r.vm.reset()
	r.multiFloor.Store(multiFloorNone)
	return nil
}

// RelationPages returns rel's size in pages (pg_relation_size / 8192).
func (s *Store) RelationPages(rel RelID) (uint32, error) {
	r, err := s.relation(rel)
	if err != nil {
		return 0, err
	}
	return r.nblocks.Load(), nil
}

// readPage reads block blk of r into dst (pread).
func (r *relation) readPage(blk uint32, dst []byte) error {
	r.ioMu.RLock()
	defer r.ioMu.RUnlock()
	if r.dropped {
		return fmt.Errorf("%w: %d", ErrNoRelation, r.id)
	}
	n, err := r.file.ReadAt(dst, int64(blk)*PageSize)
	if err == io.EOF && n == len(dst) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("storage: could not read block %d in file %q: %w", blk, r.path, err)
	}
	return nil
}

// writePage writes src as block blk of r (pwrite). Writes to a dropped
// relation are discarded.
func (r *relation) writePage(blk uint32, src []byte) error {
	r.ioMu.RLock()
	defer r.ioMu.RUnlock()
	if r.dropped {
		return nil
	}
	if _, err := r.file.WriteAt(src, int64(blk)*PageSize); err != nil {
		return fmt.Errorf("storage: could not write block %d in file %q: %w", blk, r.path, err)
	}
	return nil
}

func (r *relation) sync() error {
	r.ioMu.RLock()
	defer r.ioMu.RUnlock()
	if r.dropped {
		return nil
	}
	if err := r.file.Sync(); err != nil {
		return fmt.Errorf("storage: could not fsync file %q: %w", r.path, err)
	}
	return nil
}

// Relations returns every relation and index file the store has.
func (s *Store) Relations() []RelID {
	var out []RelID
	for id := range *s.rels.Load() {
		out = append(out, id)
	}
	for id := range *s.idxs.Load() {
		out = append(out, id)
	}
	return out
}

// IsIndex reports whether rel is an index.
func (s *Store) IsIndex(rel RelID) bool { return (*s.idxs.Load())[rel] != nil }

// WAL returns the log the store logs its changes in (nil if none).
func (s *Store) WAL() *wal.WAL { return s.wal }
