package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"lockd/auth"
	"lockd/guc"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql"
	"lockd/vfs"
	"lockd/wal"
)

// Config is what a Server needs.
type Config struct {
	// Settings holds the server-wide settings, loaded before New (command
	// line, then LoadSettings). The Server attaches its assign hooks to it,
	// so a Registry serves one Server. Required.
	Settings *guc.Registry
	// Logger receives the server log; nil means slog.Default().
	Logger *slog.Logger
	// LogLevel, if not nil, is set from log_min_messages now and on every
	// change; it should be the level the Logger's handler filters with.
	LogLevel *slog.LevelVar
	// DataDir holds the lock file (postmaster.pid), the relation files, the
	// commit log and the catalog. It is created if missing. Required.
	DataDir string
	// FS is the file system everything in DataDir is kept through
	// (vfs.Default if nil); crash tests pass a vfs.FaultFS.
	FS vfs.FS
	// Panic is called after a PANIC (an fsync or write failure of the
	// write-ahead log) has been logged; nil ends the process, as
	// PostgreSQL's PANIC does, and the next start recovers. The goroutine
	// that hit it never continues.
	Panic func(msg string)
	// BootstrapUser names the superuser made with a new data directory
	// ("": postgres; lockd -U).
	BootstrapUser string
	// BootstrapPassword, if not empty, is its password (lockd --pwfile),
	// stored as password_encryption says.
	BootstrapPassword string
}

// Validate reports a Config that New would refuse.
func (c *Config) Validate() error {
	if c.Settings == nil {
		return errors.New("server: Config.Settings is required")
	}
	if c.DataDir == "" {
		return errors.New("server: Config.DataDir is required")
	}
	return nil
}

// Server is one lockd: the subsystems of a data directory (its instance)
// and the connections served over them. It is safe for concurrent use;
// Serve may be called for several listeners.
//
// Lifetime: New takes the data directory and starts the instance; Listen
// or Serve accept connections; Shutdown (smart), ShutdownFast (fast) or
// Close (immediate) end it. Ready and Done report the two transitions.
type Server struct {
	log      *slog.Logger
	settings *guc.Registry
	inst     *instance

	mu        sync.Mutex
	listeners map[net.Listener]struct{} // guarded by mu
	backends  map[int32]*backend        // guarded by mu
	conns     map[net.Conn]struct{}     // guarded by mu
	shutting  bool                      // guarded by mu; no new sessions
	wg        sync.WaitGroup            // connections being served
	done      chan struct{}             // closed by Close, or once a shutdown's sessions have ended
	closeOnce sync.Once

	ready     chan struct{} // closed once connections are accepted
	readyOnce sync.Once
	errc      chan error // accept failures of Listen's listeners

	nextPID atomic.Int32

	// hba is the pg_hba.conf rules in force (nil: trust everyone;
	// hba.go); mockSecret keys the salts of mock SCRAM exchanges.
	hba          atomic.Pointer[auth.HBA]
	mockSecret   []byte
	mockVerifier string // checked against for unknown users (password method)
	// tls is the SSL configuration in force (nil: ssl is off; tls.go)
	tls     atomic.Pointer[tlsState]
	dataDir string
}

// New validates cfg, locks the data directory and builds the instance over
// it (see openInstance). The Server accepts nothing until Listen or Serve.
// A data directory held by another server gives an error wrapping
// ErrDataDirLocked.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{
		log:       cfg.Logger,
		settings:  cfg.Settings,
		listeners: map[net.Listener]struct{}{},
		backends:  map[int32]*backend{},
		conns:     map[net.Conn]struct{}{},
		done:      make(chan struct{}),
		ready:     make(chan struct{}),
	}
	// Backend pids start above the range of real process ids so that
	// pg_cancel_backend on a real pid never matches by accident.
	s.nextPID.Store(int32(100000 + randUint32()%100000))
	s.mockSecret = make([]byte, 32)
	_, _ = rand.Read(s.mockSecret)
	s.mockVerifier = auth.EncryptSCRAM(string(s.mockSecret))
	h, errs := loadHBA(cfg.DataDir, cfg.Settings.Value("hba_file").Str)
	if len(errs) > 0 {
		for _, e := range errs {
			cfg.Logger.Error("invalid pg_hba.conf entry", "err", e.Error())
		}
		return nil, fmt.Errorf("could not load %s: %w", cfg.Settings.Value("hba_file").Str, errs[0])
	}
	s.dataDir = cfg.DataDir
	s.hba.Store(h)
	s.warnHostSSL(h)
	ts, err := s.loadTLS()
	if err != nil {
		return nil, err
	}
	s.tls.Store(ts)
	inst, err := openInstance(cfg, s, func() int32 { return s.nextPID.Add(1) })
	if err != nil {
		return nil, err
	}
	s.inst = inst
	return s, nil
}

func randUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Ready is closed once the server accepts connections: when Listen has
// bound every address, or Serve was first called.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Done is closed once the server has stopped: every session has ended and
// the instance is closed (last checkpoint written unless the shutdown was
// immediate, data directory unlocked).
func (s *Server) Done() <-chan struct{} { return s.inst.stopped }

// Checkpoint runs an immediate checkpoint and waits for it (CHECKPOINT).
func (s *Server) Checkpoint() error {
	if err := s.inst.requestCheckpoint(wal.CkptImmediate | wal.CkptForce | wal.CkptWait); err != nil {
		s.log.Error("checkpoint request failed", "err", err)
		return pgerr.New(pgerr.InternalError, "checkpoint request failed").
			WithHint("Consult recent messages in the server log for details.")
	}
	return nil
}

// WAL returns the write-ahead log (for metrics and tests).
func (s *Server) WAL() *wal.WAL { return s.inst.wal }

// Recovery reports what start-up recovery did.
func (s *Server) Recovery() wal.RecoveryResult { return s.inst.recovery }

// Locks returns the lock manager (for metrics and tests).
func (s *Server) Locks() *locks.Manager { return s.inst.locks }

// Engine returns the SQL engine (for wiring and tests).
func (s *Server) Engine() *sql.Engine { return s.inst.engine }

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

// Close is an immediate shutdown: every connection is dropped at once and
// no last checkpoint is written, as after a crash.
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
	s.inst.close(false)
	return nil
}

// Kill simulates the death of the server's process, for crash tests whose
// file system was frozen first (vfs.FaultFS.Crash): connections are
// dropped and the data directory's lock released at once, without waiting
// for sessions or writing anything. Goroutines still running stay blocked
// in the frozen file system for good. The Server is unusable afterwards;
// a new one on the same directory recovers, as after kill -9.
func (s *Server) Kill() {
	s.closeOnce.Do(func() { close(s.done) })
	s.mu.Lock()
	s.shutting = true
	s.closeListeners()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.inst.dirLock.release()
}

// wait returns once every session has ended, then closes the instance
// cleanly; or returns ctx's error first.
func (s *Server) wait(ctx context.Context) error {
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		s.closeOnce.Do(func() { close(s.done) })
		s.inst.close(true)
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

// ReloadConfig implements sql.Host (pg_reload_conf) and is what SIGHUP
// does: the configuration files are read again, their problems logged, and
// changed values reach the subsystems through their assign hooks.
func (s *Server) ReloadConfig() bool {
	for _, e := range s.settings.Reload() {
		s.log.Warn(e.Error())
	}
	s.reloadHBA()
	s.reloadTLS()
	return true
}

// BackendUser implements sql.Host: the user of client backend pid.
func (s *Server) BackendUser(pid int32) (string, bool) {
	b := s.backend(pid)
	if b == nil {
		return "", false
	}
	return b.user, true
}

func (s *Server) backend(pid int32) *backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backends[pid]
}
