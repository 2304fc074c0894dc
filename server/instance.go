package server

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"lockd/guc"
	"lockd/locks"
	"lockd/sql"
	"lockd/storage"
	"lockd/txn"
	"lockd/vfs"
	"lockd/wal"
)

// instance is one lockd's shared state and its lifetime: what PostgreSQL's
// postmaster sets up before it accepts a connection (the data directory's
// lock file, shared memory, start-up recovery, the WAL writer and the
// checkpointer) and tears down after the last backend has gone.
//
// openInstance is the only place the subsystems are built. It takes the
// data directory's lock first, then builds the lock manager, opens the
// write-ahead log (its control file), the transaction manager, the store
// and the SQL engine, each over the ones before it, and attaches every
// reloadable setting's assign hook to the part it tunes as soon as that
// part exists (settings.go). Then it runs start-up recovery (recovery.go):
// the log is replayed from the last checkpoint's redo point if the server
// did not shut down cleanly, followed by an end-of-recovery checkpoint.
// Last it starts the WAL writer, the checkpointer and autovacuum. close
// undoes it in reverse order, once: autovacuum and the checkpointer stop,
// a clean close writes the shutdown checkpoint and closes the log, the
// store and the commit log, and the lock file goes last, so no second
// server can open the directory while this one may still write to it.
//
// The fields other than ckptMu and the channels are set by openInstance
// and read-only afterwards; an instance is safe for concurrent use.
type instance struct {
	log      *slog.Logger
	settings *guc.Registry
	dirLock  *dataDirLock
	locks    *locks.Manager
	wal      *wal.WAL
	txns     *txn.Manager
	store    *storage.Store
	engine   *sql.Engine
	recovery wal.RecoveryResult // what start-up did

	// maxConnections is max_connections, read once: a restart-only setting.
	maxConnections int
	sharedBuffers  int

	ckptProc    *locks.Proc  // the checkpointer's lock-manager identity
	walProc     *locks.Proc  // the WAL writer's
	ckptTimeout atomic.Int64 // checkpoint_timeout in seconds, set by its hook
	ckptWarning atomic.Int64 // checkpoint_warning in seconds
	ckptMu      sync.Mutex   // one checkpoint at a time
	ckptReq     chan ckptRequest
	ckptStop    chan struct{}
	ckptDone    chan struct{}

	// autovacuum (autovacuum.go): its settings, set by their hooks, and
	// the launcher's lifetime; cancelling avCtx ends a running round
	avOn      atomic.Bool
	avNaptime atomic.Int64 // autovacuum_naptime in seconds
	avWake    chan struct{}
	avCancel  func()
	avDone    chan struct{}

	closeOnce sync.Once
	stopped   chan struct{} // closed when close has finished
}

// openInstance builds the subsystems of cfg's data directory. host is what
// SQL functions such as pg_cancel_backend reach the server through. On an
// error, whatever was opened is closed again as an immediate shutdown
// would, and the lock file is released.
func openInstance(cfg Config, host sql.Host, newPID func() int32) (_ *instance, err error) {
	reg := cfg.Settings
	fsys := cfg.FS
	if fsys == nil {
		fsys = vfs.Default
	}
	in := &instance{log: cfg.Logger, settings: reg, stopped: make(chan struct{}),
		maxConnections: int(reg.Value("max_connections").Int), sharedBuffers: int(reg.Value("shared_buffers").Int)}
	if cfg.LogLevel != nil {
		attachLogLevel(reg, cfg.LogLevel)
	}
	in.dirLock, err = lockDataDir(cfg.DataDir, int(reg.Value("port").Int), reg.Value("listen_addresses").Str)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			in.abandon()
		}
	}()

	if in.locks, err = locks.NewManager(lockConfig(reg, in.maxConnections, cfg.Logger)); err != nil {
		return nil, err
	}
	// Before the first proc exists, so that every proc gets the start-up
	// fastpath_lock_slots.
	attachLockHooks(reg, in.locks)
	maxProcs := in.maxConnections + locks.NumAuxProcs
	if in.wal, err = wal.Open(wal.Config{FS: fsys, DataDir: cfg.DataDir, Buffers: int(reg.Value("wal_buffers").Int),
		SharedBuffers: in.sharedBuffers, InsertLocks: int(reg.Value("wal_insert_locks").Int), MaxProcs: maxProcs,
		Logger: cfg.Logger, Panic: cfg.Panic}); err != nil {
		return nil, err
	}
	if in.ckptProc, err = in.locks.NewProc(0); err != nil {
		return nil, err
	}
	if in.walProc, err = in.locks.NewProc(-1); err != nil {
		return nil, err
	}
	attachWALHooks(reg, in.wal, in.ckptProc)
	if in.txns, err = txn.Open(txn.Config{DataDir: cfg.DataDir, Locks: in.locks, MaxProcs: maxProcs,
		Logger: cfg.Logger, WAL: in.wal, FS: fsys}); err != nil {
		return nil, err
	}
	attachTxnHooks(reg, in.txns)
	if in.store, err = storage.Open(storage.Config{DataDir: cfg.DataDir, SharedBuffers: in.sharedBuffers,
		Locks: in.locks, Txns: in.txns, WAL: in.wal, FS: fsys, DatabaseOID: sql.DatabaseOID, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	attachStorageHooks(reg, in.store)
	if in.engine, err = sql.NewEngine(sql.EngineConfig{Settings: reg, Locks: in.locks, Txns: in.txns,
		Store: in.store, DataDir: cfg.DataDir, Host: host, WAL: in.wal, FS: fsys, BootstrapUser: cfg.BootstrapUser, BootstrapPassword: cfg.BootstrapPassword}); err != nil {
		return nil, err
	}
	reg.OnChange("checkpoint_timeout", func(v guc.Value) { in.ckptTimeout.Store(v.Int) })
	reg.OnChange("checkpoint_warning", func(v guc.Value) { in.ckptWarning.Store(v.Int) })
	if err = in.startup(); err != nil {
		return nil, err
	}
	in.wal.SetActiveBackendsFunc(in.txns.MinimumActiveBackends)
	in.ckptReq = make(chan ckptRequest, 16)
	in.ckptStop, in.ckptDone = make(chan struct{}), make(chan struct{})
	in.wal.SetCheckpointRequester(func(f wal.CheckpointFlags) {
		select {
		case in.ckptReq <- ckptRequest{flags: f}:
		default: // the checkpointer has requests pending; it will do one
		}
	})
	in.wal.StartWriter(in.walProc)
	go in.checkpointer()
	in.startAutovacuum(newPID)
	return in, nil
}

// abandon undoes a failed openInstance: like an immediate shutdown, it
// writes nothing more, waits for background writes, and releases the lock
// file.
func (in *instance) abandon() {
	if in.wal != nil {
		in.wal.Abandon()
	}
	if in.store != nil {
		_ = in.store.Abandon()
	}
	if in.txns != nil {
		in.txns.WaitWrites()
	}
	in.dirLock.release()
	close(in.stopped)
}

// close ends the instance once no session runs. clean (smart and fast
// shutdown) writes the shutdown checkpoint and closes the log, the store
// and the commit log; an immediate shutdown skips that, like a crash —
// the next start recovers — and only waits for background writes. Later
// calls do nothing.
func (in *instance) close(clean bool) {
	in.closeOnce.Do(func() {
		in.stopAutovacuum()
		close(in.ckptStop)
		<-in.ckptDone
		if clean {
			if err := in.checkpoint(wal.CkptShutdown | wal.CkptImmediate); err != nil {
				in.log.Error("shutdown checkpoint failed", "err", err)
			}
			in.wal.Close()
			_ = in.store.Close(in.ckptProc)
			_ = in.txns.Close()
		} else {
			in.wal.Abandon()
			_ = in.store.Abandon()
			in.txns.WaitWrites()
		}
		in.dirLock.release()
		close(in.stopped)
	})
}
