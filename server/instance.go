package server

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"lockd/guc"
	"lockd/locks"
	"lockd/sql"
	"lockd/storage"
	"lockd/txn"
)

// instance is one lockd's shared state and its lifetime: what PostgreSQL's
// postmaster sets up before it accepts a connection (the data directory's
// lock file, shared memory, the checkpointer) and tears down after the
// last backend has gone.
//
// openInstance is the only place the subsystems are built. It takes the
// data directory's lock first, then builds the lock manager, the
// transaction manager, the store and the SQL engine, each over the ones
// before it, attaches every reloadable setting's assign hook to the part it
// tunes as soon as that part exists (settings.go), and starts the
// checkpointer and autovacuum. close undoes it in reverse order, once:
// autovacuum and the checkpointer stop, a clean close writes a last
// checkpoint and closes the store and the commit log, and the lock file
// goes last, so no second server can open the directory while this one
// may still write to it.
//
// The fields other than ckptMu and the channels are set by openInstance
// and read-only afterwards; an instance is safe for concurrent use.
type instance struct {
	log      *slog.Logger
	settings *guc.Registry
	dirLock  *dataDirLock
	locks    *locks.Manager
	txns     *txn.Manager
	store    *storage.Store
	engine   *sql.Engine

	// maxConnections is max_connections, read once: a restart-only setting.
	maxConnections int

	ckptProc    *locks.Proc  // the checkpointer's lock-manager identity
	ckptTimeout atomic.Int64 // checkpoint_timeout in seconds, set by its hook
	ckptMu      sync.Mutex   // one checkpoint at a time
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
	in := &instance{log: cfg.Logger, settings: reg, stopped: make(chan struct{}),
		maxConnections: int(reg.Value("max_connections").Int)}
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
	if in.txns, err = txn.Open(txn.Config{DataDir: cfg.DataDir, Locks: in.locks,
		MaxProcs: in.maxConnections + locks.NumAuxProcs, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	attachTxnHooks(reg, in.txns)
	if in.ckptProc, err = in.locks.NewProc(0); err != nil {
		return nil, err
	}
	if in.store, err = storage.Open(storage.Config{DataDir: cfg.DataDir, SharedBuffers: int(reg.Value("shared_buffers").Int),
		Locks: in.locks, Txns: in.txns, DatabaseOID: sql.DatabaseOID, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	attachStorageHooks(reg, in.store)
	if in.engine, err = sql.NewEngine(sql.EngineConfig{Settings: reg, Locks: in.locks, Txns: in.txns,
		Store: in.store, DataDir: cfg.DataDir, Host: host}); err != nil {
		return nil, err
	}
	reg.OnChange("checkpoint_timeout", func(v guc.Value) { in.ckptTimeout.Store(v.Int) })
	in.ckptStop, in.ckptDone = make(chan struct{}), make(chan struct{})
	go in.checkpointer()
	in.startAutovacuum(newPID)
	return in, nil
}

// abandon undoes a failed openInstance: like an immediate shutdown, it
// writes nothing more, waits for background writes, and releases the lock
// file.
func (in *instance) abandon() {
	if in.txns != nil {
		in.txns.WaitWrites()
	}
	in.dirLock.release()
	close(in.stopped)
}

// checkpointer writes everything to disk every checkpoint_timeout. A
// changed checkpoint_timeout applies from the next round.
func (in *instance) checkpointer() {
	defer close(in.ckptDone)
	for {
		t := time.NewTimer(time.Duration(in.ckptTimeout.Load()) * time.Second)
		select {
		case <-t.C:
			if err := in.checkpoint(); err != nil {
				in.log.Error("checkpoint failed", "err", err)
			}
		case <-in.ckptStop:
			t.Stop()
			return
		}
	}
}

// checkpoint writes the catalog, dirty pages and the commit log.
func (in *instance) checkpoint() error {
	in.ckptMu.Lock()
	defer in.ckptMu.Unlock()
	if err := in.engine.Checkpoint(); err != nil {
		return err
	}
	if err := in.store.Checkpoint(in.ckptProc); err != nil {
		return err
	}
	return in.txns.Checkpoint()
}

// close ends the instance once no session runs. clean (smart and fast
// shutdown) writes a last checkpoint and closes the store and the commit
// log; an immediate shutdown skips that, like a crash, and only waits for
// background writes. Later calls do nothing.
func (in *instance) close(clean bool) {
	in.closeOnce.Do(func() {
		in.stopAutovacuum()
		close(in.ckptStop)
		<-in.ckptDone
		if clean {
			if err := in.checkpoint(); err != nil {
				in.log.Error("shutdown checkpoint failed", "err", err)
			}
			_ = in.store.Close(in.ckptProc)
			_ = in.txns.Close()
		} else {
			in.txns.WaitWrites()
		}
		in.dirLock.release()
		close(in.stopped)
	})
}
