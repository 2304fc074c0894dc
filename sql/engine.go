package sql

import (
	"sort"
	"sync"
	"time"

	"lockd/auth"
	"lockd/guc"
	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/sysviews"
	"lockd/storage"
	"lockd/txn"
	"lockd/vfs"
	"lockd/wal"
)

// sessions returns the live sessions ordered by pid.
func (e *Engine) sessions() []*Session {
	e.mu.Lock()
	out := make([]*Session, 0, len(e.live))
	for _, s := range e.live {
		out = append(out, s)
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// session returns the live session with the given pid (the caller's own:
// views that show a session's private state ask for it by pid).
func (e *Engine) session(pid int32) *Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.live[pid]
}

// Engine is the server-wide SQL state: settings, system views, and the
// link to the host server. It is safe for concurrent use.
type Engine struct {
	settings *guc.Registry
	locks    *locks.Manager
	txns     *txn.Manager
	store    *storage.Store
	cat      *catalog.Catalog
	seqs     *catalog.SeqStore // the sequences' values (sql/catalog/seqstore.go)
	dataDir  string
	hostRef  expr.Host
	views    map[string]*expr.View
	resets   *sysviews.SharedResets // pg_stat_reset_shared's baselines
	started  time.Time

	mu   sync.Mutex
	live map[int32]*Session // guarded by mu; for pg_stat_activity

	closedStmts    stmtTotals    // guarded by mu; statement counters of closed sessions (stats.go)
	closedSessions sessionTotals // guarded by mu; pg_stat_database's session counters of closed sessions (dbstats.go)
	dbReset        dbCounters    // guarded by mu; pg_stat_database's counters at the last pg_stat_reset() (dbstats.go)
}

// EngineConfig is what an Engine runs on.
type EngineConfig struct {
	Settings *guc.Registry
	Locks    *locks.Manager
	Txns     *txn.Manager
	Store    *storage.Store
	DataDir  string // holds the catalog (global/lockd_catalog.json)
	Host     expr.Host
	// WAL logs the catalog's and the sequences' changes (nil: not logged);
	// FS is the file system (vfs.Default if nil).
	WAL *wal.WAL
	FS  vfs.FS
	// BootstrapUser names the superuser a new data directory gets
	// ("": postgres), as initdb -U does.
	BootstrapUser string
	// BootstrapPassword is its password ("": none), stored as
	// password_encryption says.
	BootstrapPassword string
}

// NewEngine opens the catalog and returns an engine.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	cat, err := catalog.OpenCatalog(cfg.FS, cfg.WAL, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	name, stored := cfg.BootstrapUser, ""
	if name == "" {
		name = catalog.BootstrapRole
	}
	if cfg.BootstrapPassword != "" {
		stored = auth.Encrypt(cfg.Settings.Value("password_encryption").Str, name, cfg.BootstrapPassword)
	}
	if err := cat.Bootstrap(name, stored); err != nil {
		return nil, err
	}
	seqs, err := catalog.OpenSeqStore(cfg.FS, cfg.WAL, cfg.DataDir, cat.State())
	if err != nil {
		return nil, err
	}
	e := &Engine{settings: cfg.Settings, locks: cfg.Locks, txns: cfg.Txns, store: cfg.Store, cat: cat, seqs: seqs, dataDir: cfg.DataDir,
		hostRef: cfg.Host, started: time.Now(), views: map[string]*expr.View{}, live: map[int32]*Session{}}
	e.resets = sysviews.NewSharedResets()
	cfg.Store.SetOnPrune(e.pruned)
	views := append([]*expr.View{sysviews.SettingsView(), sysviews.PgLocksView(), sysviews.StatLockView(e.resets), e.statActivityView(), e.statSSLView(), sysviews.ExtensionView(), e.preparedStatementsView()}, sysviews.CatalogViews()...)
	views = append(views, sysviews.StatisticsViews()...)
	views = append(views, sysviews.StatioViews()...)
	views = append(views, sysviews.WALViews(e.resets)...)
	views = append(views, sysviews.ReplicationViews(e.resets)...)
	views = append(views, e.statDatabaseView(), e.cursorsView())
	for _, v := range append(views, sysviews.SequenceViews()...) {
		e.views[v.Name] = v
	}
	return e, nil
}

// Checkpoint persists the catalog, the planner statistics and activity
// counters, and the sequences' values (the store and the commit log are
// checkpointed by their owners).
func (e *Engine) Checkpoint() error {
	if err := e.cat.Flush(); err != nil {
		return err
	}
	if err := e.cat.Stats().Flush(); err != nil {
		return err
	}
	return e.seqs.Checkpoint(e.cat.State())
}

// Roles returns the published catalog's view of roles, for
// authentication: the role of that name, nil if there is none.
func (e *Engine) Role(name string) *catalog.RoleDef { return e.cat.State().Role(name) }

// NextOID returns the catalog's next OID (for checkpoint records).
func (e *Engine) NextOID() uint32 { return e.cat.NextOID() }

// RedoCatalog replays the catalog changes of a commit record whose end is
// lsn (recovery).
func (e *Engine) RedoCatalog(lsn wal.LSN, payload []byte) error {
	return e.cat.RedoCommit(lsn, payload)
}

// RedoNextOID replays a NEXTOID record or a checkpoint's next OID.
func (e *Engine) RedoNextOID(next uint32) { e.cat.RedoNextOID(next) }

// RedoSequence replays a Sequence record.
func (e *Engine) RedoSequence(rec *wal.Record) error { return e.seqs.Redo(rec) }

// EndRecovery finishes start-up after crash recovery: the relation files
// that no committed catalog uses (made by transactions the crash cut
// short) are removed, the next OID moves past every file left, the
// sequences not in the catalog are forgotten, and the catalog is written.
func (e *Engine) EndRecovery() error {
	used := e.cat.RelFiles()
	maxFile := uint32(0)
	for _, rel := range e.store.Relations() {
		if !used[uint32(rel)] {
			if e.store.IsIndex(rel) {
				_ = e.store.DropIndex(rel)
			} else {
				_ = e.store.DropRelation(rel)
			}
			continue
		}
		maxFile = max(maxFile, uint32(rel))
	}
	e.cat.BumpNextOID(maxFile + 1)
	e.seqs.EndRecovery(e.cat.State())
	return e.cat.EndRecovery()
}

// NewSession starts the SQL state of one backend, with its lock-manager
// Proc. It fails (53300) when no Proc is free.
func (e *Engine) NewSession(info SessionInfo) (*Session, error) {
	proc, err := e.locks.NewProc(info.PID)
	if err != nil {
		return nil, err
	}
	s := &Session{eng: e, cache: map[string][]*plan.Stmt{}, prepCache: map[string]*plan.Stmt{}, shapeCache: map[string]*plan.Stmt{}, noShape: map[string]bool{}}
	s.Backend = expr.Backend{Settings: info.Settings, PID: info.PID, User: info.User, Database: info.Database, Proc: proc,
		Locks: e.locks, Txns: e.txns, Store: e.store, Catalog: e.cat, Seqs: e.seqs, DataDir: e.dataDir, Host: e.hostRef, Views: e.views, Started: e.started,
		Activity: e.cat.Stats().NewBackend()}
	s.Spi = s.analyze
	s.ResetStats = e.resetStats
	s.ResetShared = func(target string) error { return e.resets.Reset(&s.Backend, target) }
	s.ReadyPortals = s.readyPortals
	now := time.Now()
	s.act.backendStart = now
	s.act.stateChange = now
	s.act.state = "idle"
	s.act.clientAddr = info.ClientAddr
	s.ClientAddr, s.ServerAddr = info.ClientAddr, info.ServerAddr
	s.backendType = info.BackendType
	s.ssl = info.SSL
	s.act.app = info.Settings.String("application_name")
	s.Format.Names = &s.Backend
	s.RefreshFormat()
	e.mu.Lock()
	e.live[s.PID] = s
	e.mu.Unlock()
	return s, nil
}

// pruned lowers n_dead_tup of the table whose file is rel by the row
// versions a reader's prune removed (pgstat_update_heap_dead_tuples).
func (e *Engine) pruned(rel storage.RelID, removed int) {
	for oid, t := range e.cat.State().Tables {
		if storage.RelID(t.RelFile) == rel {
			e.cat.Stats().ReportPruned(oid, int64(removed))
			return
		}
	}
}
