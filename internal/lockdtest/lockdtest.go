// Package lockdtest starts an in-process lockd for tests: a fresh data
// directory, a free loopback port, and cleanup when the test ends.
package lockdtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockd/guc"
	"lockd/server"
	"lockd/vfs"
)

// Instance is a running lockd.
type Instance struct {
	Server   *server.Server
	Settings *guc.Registry
	DataDir  string
	Addr     string
	Port     int
	opts     Options
	done     chan error
	stopped  bool
}

// Options tune Start.
type Options struct {
	// Settings are "name=value" pairs applied as command-line settings.
	Settings []string
	// Config is the text of a TOML configuration file to load.
	Config string
	// Logger receives the server log (default: discarded).
	Logger *slog.Logger
	// DataDir reuses a data directory instead of a fresh one.
	DataDir string
	// FS is the file system the server keeps its data through (a
	// vfs.FaultFS for crash tests); nil is the real one.
	FS vfs.FS
	// Panic receives a PANIC's message instead of ending the process.
	Panic func(msg string)
	// BootstrapUser names the superuser of a new data directory ("":
	// postgres), as lockd -U does.
	BootstrapUser string
}

// Start launches lockd on 127.0.0.1:0 and stops it when t ends.
func Start(t testing.TB, opts Options) *Instance {
	t.Helper()
	inst, err := TryStart(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// TryStart is Start that returns the server's start-up error instead of
// failing t.
func TryStart(t testing.TB, opts Options) (*Instance, error) {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	inst := &Instance{DataDir: opts.DataDir, opts: opts}
	if err := inst.tryStart(t); err != nil {
		return nil, err
	}
	t.Cleanup(func() { inst.Stop(t) })
	return inst, nil
}

func (inst *Instance) start(t testing.TB) {
	t.Helper()
	if err := inst.tryStart(t); err != nil {
		t.Fatal(err)
	}
}

// TryStartAgain is StartAgain that returns the server's start-up error
// (a data directory refused, a failed recovery) instead of failing t.
func (inst *Instance) TryStartAgain(t testing.TB, fs vfs.FS) error {
	t.Helper()
	inst.opts.FS = fs
	return inst.tryStart(t)
}

func (inst *Instance) tryStart(t testing.TB) error {
	t.Helper()
	opts := inst.opts
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	reg := guc.NewRegistry(logger)
	for _, kv := range opts.Settings {
		name, value, _ := strings.Cut(kv, "=")
		if err := reg.SetCommandLine(name, value); err != nil {
			t.Fatalf("setting %s: %v", kv, err)
		}
	}
	cfg := ""
	if opts.Config != "" {
		cfg = inst.DataDir + "/lockd.conf"
		writeFile(t, cfg, opts.Config)
	}
	if err := reg.LoadFiles(cfg, inst.DataDir); err != nil {
		t.Fatalf("load settings: %v", err)
	}
	srv, err := server.New(server.Config{Settings: reg, Logger: logger, DataDir: inst.DataDir, FS: opts.FS, Panic: opts.Panic, BootstrapUser: opts.BootstrapUser})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inst.Server, inst.Settings = srv, reg
	inst.Addr = l.Addr().String()
	inst.Port = l.Addr().(*net.TCPAddr).Port
	inst.done = make(chan error, 1)
	inst.stopped = false
	go func() { inst.done <- srv.Serve(l) }()
	return nil
}

// Stop shuts the server down cleanly (a fast shutdown with a final
// checkpoint). It is safe to call twice.
func (inst *Instance) Stop(t testing.TB) {
	if inst.stopped {
		return
	}
	inst.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := inst.Server.ShutdownFast(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	inst.Server.Close()
	select {
	case <-inst.done:
	case <-time.After(10 * time.Second):
		t.Errorf("server did not stop")
	}
}

// Crash stops the server without a checkpoint, as an immediate shutdown.
func (inst *Instance) Crash(t testing.TB) {
	inst.stopped = true
	inst.Server.Close()
	<-inst.done
}

// Kill simulates kill -9 of a server whose file system (Options.FS, a
// vfs.FaultFS) the caller has just crashed: see server.Server.Kill.
func (inst *Instance) Kill(t testing.TB) {
	inst.stopped = true
	inst.Server.Kill()
	<-inst.done
}

// StartAgain starts a new server on the same data directory (on a new
// port) after Crash or Kill, through fs (nil: the real file system).
func (inst *Instance) StartAgain(t testing.TB, fs vfs.FS) {
	t.Helper()
	inst.opts.FS = fs
	inst.start(t)
}

// Restart stops the server cleanly and starts a new one on the same data
// directory (on a new port).
func (inst *Instance) Restart(t testing.TB) {
	t.Helper()
	inst.Stop(t)
	inst.start(t)
}

// ConnString is a libpq URL for user postgres.
func (inst *Instance) ConnString() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", inst.Addr)
}

// Connect opens a pgx connection closed at the end of the test.
func (inst *Instance) Connect(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, inst.ConnString())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
