package server

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"lockd/guc"
	"lockd/locks"
	"lockd/sql"
	"lockd/storage"
	"lockd/txn"
)

// Config is what a Server needs. Settings must be loaded (files and
// command line) before New.
type Config struct {
	Settings *guc.Registry
	Logger   *slog.Logger
	// DataDir holds the relation files, the commit log and the catalog.
	DataDir string
	// Reload re-reads the configuration (pg_reload_conf / SIGHUP). If nil,
	// Settings.Reload is called.
	Reload func() bool
}

// Server accepts PostgreSQL protocol connections. It is safe for
// concurrent use; Serve may be called for several listeners.
type Server struct {
	cfg      Config
	log      *slog.Logger
	settings *guc.Registry
	locks    *locks.Manager
	txns     *txn.Manager
	store    *storage.Store
	engine   *sql.Engine
	ckptProc *locks.Proc // the checkpointer's lock-manager identity
	ckptStop chan struct{}
	ckptDone chan struct{}

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	backends  map[int32]*backend // guarded by mu
	conns     map[net.Conn]struct{}
	shutting  bool // smart shutdown: no new sessions
	wg        sync.WaitGroup
	done      chan struct{}
	closeOnce sync.Once
	storeOnce sync.Once
	ckptMu    sync.Mutex

	nextPID atomic.Int32
}

// New returns a server over the given settings.
func New(cfg Config) (*Server, error) {
	if cfg.Settings == nil {
		return nil, errors.New("server: Config.Settings is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		settings:  cfg.Settings,
		listeners: map[net.Listener]struct{}{},
		backends:  map[int32]*backend{},
		conns:     map[net.Conn]struct{}{},
		done:      make(chan struct{}),
	}
	// Backend pids start above the range of real process ids so that
	// pg_cancel_backend on a real pid never matches by accident.
	s.nextPID.Store(int32(100000 + randUint32()%100000))
	reg := cfg.Settings
	mgr, err := locks.NewManager(locks.Config{
		MaxConnections:         int(reg.Value("max_connections").Int),
		MaxLocksPerTransaction: int(reg.Value("max_locks_per_transaction").Int),
		Partitions:             int(reg.Value("lock_partitions").Int),
		Logger:                 cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	s.locks = mgr
	// Reloadable lock settings, fastpath_lock_slots among them, arrive
	// through their hooks only: each hook runs at once with the start-up
	// value, before the first proc exists.
	wireLockSettings(reg, mgr)
	if cfg.DataDir == "" {
		return nil, errors.New("server: Config.DataDir is required")
	}
	if s.txns, err = txn.Open(txn.Config{DataDir: cfg.DataDir, Locks: mgr, MaxProcs: int(reg.Value("max_connections").Int) + locks.NumAuxProcs, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	reg.OnChange("procarray_group_update", func(v guc.Value) { s.txns.SetGroupUpdate(v.Bool) })
	if s.ckptProc, err = mgr.NewProc(0); err != nil {
		return nil, err
	}
	if s.store, err = storage.Open(storage.Config{DataDir: cfg.DataDir, SharedBuffers: int(reg.Value("shared_buffers").Int),
		Locks: mgr, Txns: s.txns, DatabaseOID: sql.DatabaseOID, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	wireExtensionSettings(reg, s.store)
	if s.engine, err = sql.NewEngine(sql.EngineConfig{Settings: reg, Locks: mgr, Txns: s.txns, Store: s.store, DataDir: cfg.DataDir, Host: s}); err != nil {
		return nil, err
	}
	s.ckptStop, s.ckptDone = make(chan struct{}), make(chan struct{})
	go s.checkpointer()
	return s, nil
}

// checkpointer writes everything to disk every checkpoint_timeout.
func (s *Server) checkpointer() {
	defer close(s.ckptDone)
	for {
		d := time.Duration(s.settings.Value("checkpoint_timeout").Int) * time.Second
		t := time.NewTimer(d)
		select {
		case <-t.C:
			if err := s.Checkpoint(); err != nil {
				s.log.Error("checkpoint failed", "err", err)
			}
		case <-s.ckptStop:
			t.Stop()
			return
		}
	}
}

// Checkpoint writes dirty pages, the commit log and the catalog.
func (s *Server) Checkpoint() error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	if err := s.engine.Checkpoint(); err != nil {
		return err
	}
	if err := s.store.Checkpoint(s.ckptProc); err != nil {
		return err
	}
	return s.txns.Checkpoint()
}

// closeStorage ends the checkpointer and, for a clean shutdown, writes a
// last checkpoint. An immediate shutdown skips it, like a crash.
func (s *Server) closeStorage(clean bool) {
	s.storeOnce.Do(func() {
		close(s.ckptStop)
		<-s.ckptDone
		if clean {
			if err := s.Checkpoint(); err != nil {
				s.log.Error("shutdown checkpoint failed", "err", err)
			}
			_ = s.store.Close(s.ckptProc)
			_ = s.txns.Close()
		} else {
			s.txns.WaitWrites()
		}
	})
}

// wireLockSettings attaches the lock settings' assign hooks: each change
// (start-up, reload) is pushed into the lock manager without a restart.
func wireLockSettings(reg *guc.Registry, mgr *locks.Manager) {
	wake := func(guc.Value) {
		locks.SetWakePolicy(reg.Value("wake_up_all_waiters").Bool, int(reg.Value("lwlock_wakeup_limit").Int))
	}
	reg.OnChange("wake_up_all_waiters", wake)
	reg.OnChange("lwlock_wakeup_limit", wake)
	reg.OnChange("deadlock_timeout", func(v guc.Value) { mgr.SetDeadlockTimeout(time.Duration(v.Int) * time.Millisecond) })
	reg.OnChange("log_lock_waits", func(v guc.Value) { mgr.SetLogLockWaits(v.Bool) })
	reg.OnChange("track_lock_timing", func(v guc.Value) { locks.SetTrackTiming(v.Bool) })
	reg.OnChange("fastpath_lock_slots", func(v guc.Value) { mgr.SetFastPathSlots(int(v.Int)) })
}

// wireExtensionSettings pushes the relation-extension settings into the
// store now and on every reload (they are sighup settings).
func wireExtensionSettings(reg *guc.Registry, st *storage.Store) {
	apply := func(guc.Value) {
		mode, _ := storage.ParseExtensionMode(reg.Value("relation_extension_mode").Str)
		st.SetExtensionPolicy(mode, int(reg.Value("relation_extension_blocks").Int),
			int(reg.Value("relation_extension_max_blocks").Int), int(reg.Value("relation_extension_fallocate_threshold").Int))
	}
	for _, name := range []string{"relation_extension_mode", "relation_extension_blocks", "relation_extension_max_blocks", "relation_extension_fallocate_threshold"} {
		reg.OnChange(name, apply)
	}
}

// Locks returns the lock manager (for metrics and tests).
func (s *Server) Locks() *locks.Manager { return s.locks }

func randUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Engine returns the SQL engine (for wiring and tests).
func (s *Server) Engine() *sql.Engine { return s.engine }

// Serve accepts connections on l until Shutdown or Close. It returns nil
// after a shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.isClosed() {
		s.mu.Unlock()
		return nil
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	var delay time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if s.isClosed() || s.isShutting() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if delay == 0 {
					delay = 5 * time.Millisecond
				} else if delay *= 2; delay > time.Second {
					delay = time.Second
				}
				time.Sleep(delay)
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		delay = 0
		s.mu.Lock()
		if s.isClosed() {
			s.mu.Unlock()
			conn.Close()
			return nil
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(conn)
	}
}

func (s *Server) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *Server) isShutting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shutting
}

func (s *Server) closeListeners() {
	for l := range s.listeners {
		l.Close()
	}
	s.listeners = map[net.Listener]struct{}{}
}

// Shutdown is PostgreSQL's smart shutdown: stop accepting connections,
// let the sessions finish, return when they have (or ctx ends).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutting = true
	s.closeListeners()
	s.mu.Unlock()
	return s.wait(ctx)
}

// ShutdownFast is PostgreSQL's fast shutdown: every session's transaction
// is aborted and the client gets 57P01; returns when all sessions ended.
func (s *Server) ShutdownFast(ctx context.Context) error {
	s.mu.Lock()
	s.shutting = true
	s.closeListeners()
	bs := make([]*backend, 0, len(s.backends))
	for _, b := range s.backends {
		bs = append(bs, b)
	}
	s.mu.Unlock()
	for _, b := range bs {
		b.terminate(errAdminShutdown)
	}
	return s.wait(ctx)
}

// Close is an immediate shutdown: every connection is dropped at once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	s.mu.Lock()
	s.shutting = true
	s.closeListeners()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.closeStorage(false)
	return nil
}

func (s *Server) wait(ctx context.Context) error {
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		s.closeOnce.Do(func() { close(s.done) })
		s.closeStorage(true)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ActiveSessions returns the number of connected backends.
func (s *Server) ActiveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.backends)
}

// CancelBackend implements sql.Host: cancel pid's running statement.
func (s *Server) CancelBackend(pid int32) bool {
	b := s.backend(pid)
	if b == nil {
		return false
	}
	b.cancel(errCanceled)
	return true
}

// TerminateBackend implements sql.Host: end pid's session with 57P01.
func (s *Server) TerminateBackend(pid int32) bool {
	b := s.backend(pid)
	if b == nil {
		return false
	}
	b.terminate(errAdminShutdown)
	return true
}

// ReloadConfig implements sql.Host.
func (s *Server) ReloadConfig() bool {
	if s.cfg.Reload != nil {
		return s.cfg.Reload()
	}
	s.settings.Reload()
	return true
}

func (s *Server) backend(pid int32) *backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backends[pid]
}
