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
	"lockd/pgerr"
	"lockd/sql"
)

// Config is what a Server needs. Settings must be loaded (files and
// command line) before New.
type Config struct {
	Settings *guc.Registry
	Logger   *slog.Logger
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
	engine   *sql.Engine

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	backends  map[int32]*backend // guarded by mu
	conns     map[net.Conn]struct{}
	shutting  bool // smart shutdown: no new sessions
	wg        sync.WaitGroup
	done      chan struct{}
	closeOnce sync.Once

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
	s.engine = sql.NewEngine(cfg.Settings, s)
	return s, nil
}

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
	return nil
}

func (s *Server) wait(ctx context.Context) error {
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		s.closeOnce.Do(func() { close(s.done) })
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

var (
	errAdminShutdown = &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.AdminShutdown, Message: "terminating connection due to administrator command"}
	errCanceled      = pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
	errStmtTimeout   = pgerr.New(pgerr.QueryCanceled, "canceling statement due to statement timeout")
	errIdleTimeout   = &pgerr.Error{Severity: pgerr.SeverityFatal, Code: pgerr.IdleInTransactionTimeout, Message: "terminating connection due to idle-in-transaction timeout"}
)

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
