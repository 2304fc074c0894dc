package wal

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"lockd/locks"
	"lockd/vfs"
)

// Config configures Open.
type Config struct {
	// FS is the file system (vfs.Default if nil).
	FS vfs.FS
	// DataDir is the data directory: the log is in DataDir/pg_wal, the
	// control file in DataDir/global/pg_control.
	DataDir string
	// SegmentSize is the size of a segment file for a new data directory
	// (DefaultSegmentSize if 0); an existing one keeps the size its
	// control file records, as PostgreSQL's is fixed at initdb.
	SegmentSize int
	// Buffers is wal_buffers in pages; ≤ 0 derives it from SharedBuffers
	// as PostgreSQL does for -1: 1/32 of shared_buffers, at least 8 pages
	// (64 kB), at most one segment.
	Buffers       int
	SharedBuffers int
	// InsertLocks is wal_insert_locks (PostgreSQL's NUM_XLOGINSERT_LOCKS,
	// 8); 1 is the single WALInsertLock of PostgreSQL before 9.4.
	InsertLocks int
	// MaxProcs bounds the proc numbers of the backends that insert (their
	// per-backend state and counters); procs at or beyond it and the nil
	// proc share one slot.
	MaxProcs int
	// Logger receives LOG-level messages (recovery, checkpoints).
	Logger *slog.Logger
	// Panic is called with the message of a PANIC — an fsync or write
	// failure of the log, a full disk while writing it — after it has been
	// logged. lockd's default ends the process, as PostgreSQL's PANIC does
	// (the next start recovers); a test may instead stop the instance. The
	// goroutine that hit the PANIC never returns from it.
	Panic func(msg string)
}

// SyncMethod is wal_sync_method.
type SyncMethod int32

// wal_sync_method values available on Linux (fsync_writethrough is not).
const (
	SyncFdatasync    SyncMethod = iota // fdatasync(2), the Linux default
	SyncFsync                          // fsync(2)
	SyncOpenSync                       // open with O_SYNC: every write is synced
	SyncOpenDatasync                   // open with O_DSYNC
)

// SyncMethodNames are the settings' spellings, by SyncMethod.
var SyncMethodNames = []string{"fdatasync", "fsync", "open_sync", "open_datasync"}

// ParseSyncMethod parses a wal_sync_method value.
func ParseSyncMethod(s string) (SyncMethod, bool) {
	for i, n := range SyncMethodNames {
		if n == s {
			return SyncMethod(i), true
		}
	}
	return SyncFdatasync, false
}

func (m SyncMethod) String() string { return SyncMethodNames[m] }

// WAL is the write-ahead log of one data directory: insertion into WAL
// buffers under the insertion locks, writing and flushing under WALWrite
// with group commit, the WAL writer, segment files, checkpoints'
// bookkeeping, the control file and crash recovery. See doc.go for the
// design.
//
// The zero value is not usable; call Open. A WAL must not be copied. All
// methods are safe for concurrent use unless they say otherwise.
type WAL struct {
	_      noCopy
	fs     vfs.FS
	dir    string // DataDir/pg_wal
	data   string // DataDir
	log    *slog.Logger
	panicf func(msg string)
	geo    geometry

	ctlMu sync.Mutex // guards ctl and its file
	ctl   controlFile

	// Insertion (insert.go).
	_           [cacheLine]byte
	insertPosMu spinLock // insertpos_lck
	currBytePos uint64   // guarded by insertPosMu
	prevBytePos uint64   // guarded by insertPosMu
	commitOrd   atomic.Uint64
	_           [cacheLine]byte
	// redoRecPtr and doPageWrites change only with every insertion lock
	// held, so an inserter holding one sees them stable.
	redoRecPtr   atomic.Uint64
	doPageWrites atomic.Bool
	insertLocks  []insertLock
	commitRing   [commitRingSize]atomic.Uint64 // end byte positions of commit records, by ordinal

	// WAL buffers (buffers.go).
	_               [cacheLine]byte
	nbuf            uint64
	pages           []byte          // nbuf pages
	xlblocks        []atomic.Uint64 // end LSN of the page each slot holds
	bufMapping      locks.LWLock    // WALBufMapping
	initializedUpTo LSN             // guarded by bufMapping

	// Writing (write.go).
	_               [cacheLine]byte
	writeLock       locks.LWLock  // WALWrite
	logwrtWrite     atomic.Uint64 // LogwrtResult.Write; written under writeLock
	logwrtFlush     atomic.Uint64 // LogwrtResult.Flush; written under writeLock
	logwrtRqstWrite atomic.Uint64 // LogwrtRqst.Write (raised to the end of full pages)
	asyncXactLSN    atomic.Uint64
	openSeg         vfs.File // guarded by writeLock
	openSegNo       uint64   // guarded by writeLock
	openFlags       int      // the sync open flag openSeg has; guarded by writeLock
	durableOrd      uint64   // commit ordinal made durable by the last flush; guarded by writeLock

	// Settings (setters in settings.go).
	syncMethod     atomic.Int32
	enableFsync    atomic.Bool
	fullPageWrites atomic.Bool
	writerDelay    atomic.Int64 // ns
	writerFlushAft atomic.Int64 // pages
	trackIOTiming  atomic.Bool
	activeBackends atomic.Pointer[func(n int) bool]

	// Checkpoints (checkpoint.go).
	ckpt checkpointState

	// Segment management (segments.go).
	segMu        sync.Mutex // serialises creating, recycling and removing segment files
	walRecycle   atomic.Bool
	minWalSizeMB atomic.Int64
	maxWalSizeMB atomic.Int64

	// The WAL writer (writer.go).
	writerWake  chan struct{}
	writerStop  chan struct{}
	writerDone  chan struct{}
	hibernating atomic.Bool

	procs []procSlot // by proc number; the last one is shared

	startTime time.Time // stats_reset: counters start with the server

	started atomic.Bool // insertion allowed (after StartupXLOG)
	closed  atomic.Bool
}

type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

const cacheLine = 128

// insertLock is one WAL insertion lock (WALInsertLockPadded): the LWLock
// and its insertingAt, padded to their own cache lines.
type insertLock struct {
	insertLockData
	_ [cacheLine - unsafe.Sizeof(insertLockData{})%cacheLine]byte
}

type insertLockData struct {
	lock locks.LWLock // tranche WALInsert
	// insertingAt is how far the holder's insertion has got: every byte
	// before it is copied. 0 while unknown. WaitXLogInsertionsToFinish
	// reads it.
	insertingAt locks.LWLockVar
}

// procSlot is one backend's WAL state.
type procSlot struct {
	procSlotData
	_ [cacheLine - unsafe.Sizeof(procSlotData{})%cacheLine]byte
}

type procSlotData struct {
	lockToTry int // the insertion lock to try first (owner only)
	held      int // the insertion lock held while inserting (owner only)
	// delayChkpt is odd while the backend is between inserting its commit
	// record and recording the commit in the commit log
	// (DELAY_CHKPT_START): a checkpoint that began meanwhile waits for it.
	delayChkpt atomic.Uint32
	builder    *Builder
	stats      *procStats
}

// spinLock is a test-and-set lock for the few-instruction reservation of
// log space (insertpos_lck). A holder that is descheduled makes others
// yield rather than spin on.
type spinLock struct{ v atomic.Uint32 }

func (s *spinLock) lock() {
	for i := 0; !s.v.CompareAndSwap(0, 1); i++ {
		if i%16 == 15 {
			runtime.Gosched()
		}
	}
}

func (s *spinLock) unlock() { s.v.Store(0) }

// Errors.
var (
	// ErrIncompatible: the data directory is of another format.
	ErrIncompatible = errors.New("database files are incompatible with server")
)

// Open opens the log of cfg.DataDir, creating a new one (with a first
// checkpoint and the control file) if the directory has none. It reads the
// control file but replays nothing: call StartupXLOG before inserting.
func Open(cfg Config) (*WAL, error) {
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.InsertLocks <= 0 {
		cfg.InsertLocks = 8
	}
	if cfg.MaxProcs <= 0 {
		cfg.MaxProcs = 128
	}
	w := &WAL{fs: cfg.FS, data: cfg.DataDir, dir: filepath.Join(cfg.DataDir, "pg_wal"), log: cfg.Logger, startTime: time.Now()}
	w.panicf = cfg.Panic
	if w.panicf == nil {
		w.panicf = func(string) { os.Exit(3) }
	}
	if err := w.fs.MkdirAll(w.dir, 0o700); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if err := w.fs.MkdirAll(filepath.Join(cfg.DataDir, "global"), 0o700); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	bootstrap := false
	ctl, err := readControlFile(w.fs, w.controlPath())
	switch {
	case vfs.IsNotExist(err):
		if err := checkOldFormat(w.fs, cfg.DataDir); err != nil {
			return nil, err
		}
		segSize := uint64(cfg.SegmentSize)
		if segSize == 0 {
			segSize = DefaultSegmentSize
		}
		if segSize < MinSegmentSize || segSize > MaxSegmentSize || segSize&(segSize-1) != 0 {
			return nil, fmt.Errorf("wal: invalid segment size %d", segSize)
		}
		ctl = newControlFile(segSize)
		bootstrap = true
	case err != nil:
		return nil, err
	}
	w.ctl = ctl
	w.geo = newGeometry(ctl.SegSize)

	nbuf := cfg.Buffers
	if nbuf <= 0 {
		nbuf = cfg.SharedBuffers / 32
		nbuf = min(nbuf, int(ctl.SegSize/PageSize))
		nbuf = max(nbuf, 8)
	}
	nbuf = max(nbuf, 4) // check_wal_buffers
	w.nbuf = uint64(nbuf)
	w.pages = make([]byte, nbuf*PageSize)
	w.xlblocks = make([]atomic.Uint64, nbuf)
	w.bufMapping.Init(locks.TrancheWALBufMapping)
	w.writeLock.Init(locks.TrancheWALWrite)
	w.insertLocks = make([]insertLock, cfg.InsertLocks)
	for i := range w.insertLocks {
		w.insertLocks[i].lock.Init(locks.TrancheWALInsert)
	}
	w.procs = make([]procSlot, cfg.MaxProcs+1)
	for i := range w.procs {
		w.procs[i].stats = newProcStats(cfg.InsertLocks)
		w.procs[i].lockToTry = i % cfg.InsertLocks
	}
	w.enableFsync.Store(true)
	w.fullPageWrites.Store(true)
	w.doPageWrites.Store(true)
	w.writerDelay.Store(int64(200 * time.Millisecond))
	w.writerFlushAft.Store(128)
	w.walRecycle.Store(true)
	w.minWalSizeMB.Store(80)
	w.maxWalSizeMB.Store(1024)
	w.ckpt.init()
	w.writerWake = make(chan struct{}, 1)
	if bootstrap {
		if err := w.bootstrap(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *WAL) controlPath() string { return filepath.Join(w.data, "global", "pg_control") }

// checkOldFormat refuses a data directory that a lockd without a
// write-ahead log wrote: it has data but no control file.
func checkOldFormat(fsys vfs.FS, dataDir string) error {
	for _, name := range []string{"global/lockd_catalog.json", "pg_xact", "base"} {
		p := filepath.Join(dataDir, name)
		if st, err := fsys.Stat(p); err == nil {
			if st.IsDir() {
				ents, _ := fsys.ReadDir(p)
				if len(ents) == 0 {
					continue
				}
			}
			return fmt.Errorf("%w: the data directory \"%s\" has no \"global/pg_control\": it was written by a lockd without a write-ahead log (format 0), and this lockd needs format %d; "+
				"start the lockd that wrote it, copy the data out (COPY ... TO, or pg_dump), and load it into a new data directory",
				ErrIncompatible, dataDir, ControlVersion)
		}
	}
	return nil
}

// proc returns the slot of p (the shared one for nil or out-of-range).
func (w *WAL) proc(p *locks.Proc) *procSlot {
	if p != nil {
		if n := int(p.Number()); n >= 0 && n < len(w.procs)-1 {
			return &w.procs[n]
		}
	}
	return &w.procs[len(w.procs)-1]
}

// Begin starts a record of rmgr rmid with record type info (XLogBeginInsert).
// The Builder is p's own and is reused; nil p gets a new one.
func (w *WAL) Begin(p *locks.Proc, rmid RmgrID, info uint8) *Builder {
	var b *Builder
	if sl := w.proc(p); p != nil && sl != &w.procs[len(w.procs)-1] {
		if sl.builder == nil {
			sl.builder = &Builder{}
		}
		b = sl.builder
	} else {
		b = &Builder{}
	}
	if b.inUse {
		panic("wal: a record is already being built by this backend")
	}
	b.inUse = true
	b.w, b.p, b.rmid, b.info, b.xid = w, p, rmid, info, 0
	b.nblk = 0
	b.data = b.data[:0]
	b.main = b.main[:0]
	b.commit = false
	return b
}

// Abandon gives up a record begun and not inserted.
func (b *Builder) Abandon() { b.inUse = false }

// SegmentSize returns the size of a segment file.
func (w *WAL) SegmentSize() uint64 { return w.geo.segSize }

// InsertLocks returns wal_insert_locks in force.
func (w *WAL) InsertLocks() int { return len(w.insertLocks) }

// Buffers returns the number of WAL buffer pages.
func (w *WAL) Buffers() int { return int(w.nbuf) }

// doPanic logs msg as a PANIC and hands it to the Panic hook; it never
// returns.
func (w *WAL) doPanic(msg string) {
	w.log.Error("PANIC: "+msg, "severity", "PANIC")
	w.panicf(msg)
	select {} // as a dead process: this goroutine goes no further
}

func (w *WAL) panicErr(format string, args ...any) { w.doPanic(fmt.Sprintf(format, args...)) }

// Panic reports a PANIC of another subsystem (a data file's fsync failure
// at a checkpoint) through the same hook; it never returns.
func (w *WAL) Panic(msg string) { w.doPanic(msg) }
