package txn

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"lockd/locks"
	"lockd/vfs"
	"lockd/wal"
)

// cacheLine is the padding unit against false sharing (two 64-byte lines,
// as the adjacent-line prefetcher pulls pairs; same as locks/).
const cacheLine = 128

// xidReserve is how far ahead of the next xid the persisted bound is
// moved, so the next-xid file is written (and fsynced) once per xidReserve
// assignments, not per transaction. After a crash assignment resumes at
// the bound, so no xid is ever handed out twice. PostgreSQL prefetches
// OIDs the same way (VAR_OID_PREFETCH = 8192); its xids are protected by
// WAL instead. The write happens in the background once half the reserve
// is used, so that no assignment waits for an fsync under XidGenLock —
// which PostgreSQL's GetNewTransactionId never does — unless assignment
// outruns the write.
const xidReserve = 8192

// DefaultMaxProcs is Config.MaxProcs when zero.
const DefaultMaxProcs = 128

// Config configures Open.
type Config struct {
	// DataDir is the data directory; the commit log and the next-xid file
	// live in DataDir/pg_xact. Empty means nothing is persisted (tests,
	// benchmarks): Checkpoint and Close do nothing.
	DataDir string
	// Locks is the heavyweight lock manager transaction locks are taken in.
	// Required.
	Locks *locks.Manager
	// MaxProcs is the size of the ProcArray: every Proc passed to Begin
	// must have Number() < MaxProcs. Default DefaultMaxProcs (which covers
	// locks' default 100 connections + NumAuxProcs).
	MaxProcs int
	// Logger receives start-up and checkpoint messages; nil discards.
	Logger *slog.Logger
	// WAL is the write-ahead log commit and abort records and multixacts
	// are logged in (xlog.go). With a WAL, Open leaves the transactions
	// that were running at a crash as they are until recovery has replayed
	// the log: EndRecovery then marks those still in progress aborted.
	// nil: nothing is logged, and Open does that at once.
	WAL *wal.WAL
	// FS is the file system (vfs.Default if nil).
	FS vfs.FS
}

// Manager owns transaction ids, the ProcArray and the commit log: one per
// server. See the package documentation for the design.
//
// Lock ordering: XidGen → XactSLRU (clog extension at assignment);
// ProcArrayLock is never held together with XidGen or XactSLRU. Hot shared
// words sit on their own cache lines.
//
// The zero value is not usable; call Open. A Manager must not be copied.
// All methods are safe for concurrent use.
type Manager struct {
	_        noCopy
	locks    *locks.Manager
	logger   *slog.Logger
	wal      *wal.WAL // nil: nothing logged
	fs       vfs.FS
	dir      string // DataDir/pg_xact, "" when not persistent
	maxProcs int

	_       [cacheLine]byte
	xidGen  locks.LWLock  // XidGenLock
	nextXid atomic.Uint32 // next xid to assign; stored under xidGen exclusive, loaded lock-free
	// xidLimit bounds every xid assigned so far and is what the next-xid
	// file holds (durably) when the Manager is persistent. Guarded by xidGen.
	xidLimit Xid
	// refill is closed when the background write of the next bound ends;
	// nil when none runs. At most one write of the file runs at a time:
	// whoever else would write it waits for this one. Guarded by xidGen.
	refill chan struct{}

	_                  [cacheLine]byte
	procArrayLock      locks.LWLock // ProcArrayLock
	latestCompletedXid Xid          // guarded by procArrayLock (written exclusive)
	completions        uint64       // xactCompletionCount, guarded by procArrayLock (written exclusive)

	_ [cacheLine]byte
	// endedBelow is the newest OldestXmin computed: every xid before it
	// had ended then, and an ended xid never runs again, so isRunning
	// answers for them without ProcArrayLock (PostgreSQL's RecentXmin
	// test in TransactionIdIsInProgress).
	endedBelow atomic.Uint32

	// horizon is the last OldestXmin computed and horizonAt when
	// (UnixNano), for RecentOldestXmin.
	horizon   atomic.Uint32
	horizonAt atomic.Int64

	_ [cacheLine]byte
	// groupFirst heads the lock-free list of procs waiting for a group
	// xid clear (ProcGlobal->procArrayGroupFirst): a proc number or
	// invalidProcNumber.
	groupFirst atomic.Uint32

	_             [cacheLine]byte
	groupUpdate   atomic.Bool // procarray_group_update
	snapshotReuse atomic.Bool // reuse a backend's last snapshot if no xid ended since

	_ [cacheLine]byte
	// xids is the dense array of running xids by proc number (PostgreSQL
	// 14's ProcGlobal->xids): written by the owner under xidGen exclusive
	// when it gets an xid, cleared under procArrayLock exclusive when its
	// transaction ends, scanned under procArrayLock shared by snapshots.
	// It changes only at those two points, so the scan reads lines that
	// stay mostly shared.
	xids  []atomic.Uint32
	procs []procSlot // by proc number

	_    [cacheLine]byte
	clog commitLog

	// subtrans maps subtransaction xids to their parents; written under
	// xidGen exclusive, read lock-free (subtrans.go).
	subtrans subtrans

	// multis is the multixact store (multixact.go), with its own locks.
	multis multiXacts

	// recoveredXid is the newest xid replayed from the log (RedoXact),
	// for EndRecovery; single-threaded recovery only.
	recoveredXid Xid

	ckptMu sync.Mutex // serialises Checkpoint and Close
}

type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// invalidProcNumber ends the group-clear list (INVALID_PROC_NUMBER).
const invalidProcNumber = ^uint32(0)

// procSlot is the per-backend part of the ProcArray that is not in the
// dense xids array (the rest of PGPROC), plus the backend's counters,
// padded to whole cache lines. It is indexed by proc number and reused by
// the next session with that number; the counters keep accumulating so
// sums never go backwards.
type procSlot struct {
	procState
	_ [cacheLine - unsafe.Sizeof(procState{})%cacheLine]byte
}

type procState struct {
	// xmin is the oldest xid this backend's snapshot may still need
	// (PGPROC.xmin), for OldestXmin. Stored by the owner under
	// procArrayLock shared when it takes a snapshot, cleared without a
	// lock (read-only end) or under procArrayLock exclusive (xid end).
	xmin atomic.Uint32

	// Group xid clearing (PGPROC.procArrayGroup*). The owner writes
	// groupMemberXid and sets groupMember before pushing itself with a
	// CAS; the leader reads them after swapping the list out, and clears
	// groupMember and groupNext before waking the owner.
	groupMember    atomic.Bool
	groupNext      atomic.Uint32
	groupMemberXid Xid
	wake           chan struct{} // cap 1: exactly one send per follower membership

	// oldestMulti is the first multixact id this backend's transaction
	// created (OldestMemberMXactId), 0 if none: stored under MultiXactGen
	// before the multixact exists, cleared at transaction end. Multixacts
	// from it on may be named by tuples not yet counted in a relation's
	// multixact floor, so TruncateMultis must keep them.
	oldestMulti atomic.Uint32

	stats procStats // written by the owner only
}

// Open builds the Manager: it loads the commit log from DataDir/pg_xact,
// marks every xid that was still in progress at the last shutdown or crash
// as aborted, and continues assignment after the highest xid that can have
// been assigned.
func Open(cfg Config) (*Manager, error) {
	if cfg.Locks == nil {
		return nil, errors.New("txn: Config.Locks is required")
	}
	if cfg.MaxProcs == 0 {
		cfg.MaxProcs = DefaultMaxProcs
	}
	if cfg.MaxProcs < 1 || cfg.MaxProcs >= int(invalidProcNumber) {
		return nil, fmt.Errorf("txn: invalid MaxProcs %d", cfg.MaxProcs)
	}
	m := &Manager{
		locks:    cfg.Locks,
		logger:   cfg.Logger,
		wal:      cfg.WAL,
		fs:       cfg.FS,
		maxProcs: cfg.MaxProcs,
		xids:     make([]atomic.Uint32, cfg.MaxProcs),
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.fs == nil {
		m.fs = vfs.Default
	}
	m.xidGen.Init(locks.TrancheXidGen)
	m.procArrayLock.Init(locks.TrancheProcArray)
	m.clog.lock.Init(locks.TrancheXactSLRU)
	m.groupFirst.Store(invalidProcNumber)
	m.procs = make([]procSlot, cfg.MaxProcs)
	for i := range m.procs {
		m.procs[i].groupNext.Store(invalidProcNumber)
		m.procs[i].wake = make(chan struct{}, 1)
	}

	mxDir := ""
	if cfg.DataDir != "" {
		mxDir = filepath.Join(cfg.DataDir, "pg_multixact")
	}
	m.multis.wal = cfg.WAL
	if err := m.multis.open(m.fs, mxDir); err != nil {
		return nil, err
	}
	next := FirstNormalXid
	if cfg.DataDir != "" {
		m.dir = filepath.Join(cfg.DataDir, "pg_xact")
		if err := m.fs.MkdirAll(m.dir, 0o700); err != nil {
			return nil, fmt.Errorf("txn: %w", err)
		}
		pages, err := loadCLOG(m.fs, m.dir)
		if err != nil {
			return nil, err
		}
		m.clog.pages = pages
		m.clog.npages = len(pages)
		n, ok, err := readNextXid(m.fs, m.dir)
		switch {
		case err != nil:
			return nil, err
		case ok:
			next = n
		case len(pages) > 0:
			// No bound recorded: continue beyond anything the log can hold.
			next = Xid(len(pages) * clogXidsPerPage)
			m.logger.Warn("next xid file missing; continuing after the commit log",
				"file", filepath.Join(m.dir, nextXidFile), "next_xid", uint32(next))
		}
	}
	if m.wal == nil {
		if err := m.EndRecovery(next); err != nil {
			return nil, err
		}
	}
	m.nextXid.Store(uint32(next))
	m.xidLimit = next
	m.latestCompletedXid = next - 1
	if m.dir != "" {
		if err := writeNextXid(m.fs, m.dir, next); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Checkpoint writes the commit log pages changed since the last checkpoint
// and forgets the subtransaction map below the oldest xid still of
// interest (CheckPointSUBTRANS + TruncateSUBTRANS). The next-xid bound
// needs no writing here: assignment persists it before handing out any xid
// beyond it. Safe to call concurrently with transactions (from a
// checkpointer without a Proc).
func (m *Manager) Checkpoint() error {
	if m.subtrans.dir.Load() != nil {
		oldest := m.OldestXmin()
		m.xidGen.Acquire(nil, locks.LWExclusive)
		m.subtrans.truncate(oldest)
		m.xidGen.Release(nil)
	}
	if m.dir == "" {
		return nil
	}
	m.ckptMu.Lock()
	defer m.ckptMu.Unlock()
	// A page may show commits and multixacts whose records are not
	// flushed yet (asynchronous commits): WAL before data. The log is
	// flushed after each segment's pages are copied, so every commit
	// they show has its record on disk before they are (a commit inserts
	// its record before it sets its status, and one that commits between
	// a flush and the copy would otherwise reach disk without its record:
	// after a crash part of that transaction would be visible).
	flush := func() {
		if m.wal != nil {
			m.wal.Flush(nil, m.wal.InsertPosition())
		}
	}
	flush()
	if err := m.clog.checkpoint(m.fs, m.dir, flush); err != nil {
		return err
	}
	return m.multis.checkpoint()
}

// Close checkpoints and records the exact next xid, so a clean restart
// continues without a gap. Transactions still running are read as aborted
// after a restart. The Manager stays usable (a later assignment persists a
// new bound).
func (m *Manager) Close() error {
	if err := m.Checkpoint(); err != nil {
		return err
	}
	if m.dir == "" {
		return nil
	}
	m.ckptMu.Lock()
	defer m.ckptMu.Unlock()
	if err := m.multis.close(); err != nil {
		return err
	}
	m.xidGen.Acquire(nil, locks.LWExclusive)
	m.waitRefill()
	defer m.xidGen.Release(nil)
	next := Xid(m.nextXid.Load())
	if err := writeNextXid(m.fs, m.dir, next); err != nil {
		return err
	}
	m.xidLimit = next
	return nil
}

// SetGroupUpdate sets procarray_group_update (sighup): whether a commit
// that finds ProcArrayLock busy joins a group xid clear or queues for the
// lock itself. Read at each commit.
func (m *Manager) SetGroupUpdate(on bool) { m.groupUpdate.Store(on) }

// GroupUpdate returns the current procarray_group_update.
func (m *Manager) GroupUpdate() bool { return m.groupUpdate.Load() }

// SetSnapshotReuse turns PostgreSQL 14's snapshot reuse on or off: a
// backend whose previous snapshot was taken when the same number of
// xid-bearing transactions had ended reuses it instead of scanning the
// ProcArray (GetSnapshotDataReuse). Off by default, so snapshots cost what
// they cost before PostgreSQL 14.
func (m *Manager) SetSnapshotReuse(on bool) { m.snapshotReuse.Store(on) }

// NextXid returns the next xid to be assigned (lock-free).
func (m *Manager) NextXid() Xid { return Xid(m.nextXid.Load()) }

// MaxProcs returns the size of the ProcArray.
func (m *Manager) MaxProcs() int { return m.maxProcs }

// Locks returns the lock manager transaction locks are taken in.
func (m *Manager) Locks() *locks.Manager { return m.locks }

// Status returns the commit log status of xid (TransactionLogFetch), under
// the XactSLRU lock shared. InProgress does not mean the transaction runs:
// combine with IsRunning, checking IsRunning first, as PostgreSQL does.
func (m *Manager) Status(xid Xid) XidStatus { return m.clog.status(nil, xid) }

// ProcArrayLock returns the ProcArray LWLock (for tests and experiments
// that want to observe or hold it).
func (m *Manager) ProcArrayLock() *locks.LWLock { return &m.procArrayLock }
