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
)

// Instance is a running lockd.
type Instance struct {
	Server   *server.Server
	Settings *guc.Registry
	DataDir  string
	Addr     string
	Port     int
	listener net.Listener
	done     chan error
}

// Options tune Start.
type Options struct {
	// Settings are "name=value" pairs applied as command-line settings.
	Settings []string
	// Config is the text of a TOML configuration file to load.
	Config string
	// Wire, if set, is called to attach subsystems before serving.
	Wire func(*server.Server, *guc.Registry) error
	// Logger receives the server log (default: discarded).
	Logger *slog.Logger
}

// Start launches lockd on 127.0.0.1:0 and stops it when t ends.
func Start(t testing.TB, opts Options) *Instance {
	t.Helper()
	dir := t.TempDir()
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
		cfg = dir + "/lockd.conf"
		writeFile(t, cfg, opts.Config)
	}
	if err := reg.LoadFiles(cfg, dir); err != nil {
		t.Fatalf("load settings: %v", err)
	}
	srv, err := server.New(server.Config{Settings: reg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Wire != nil {
		if err := opts.Wire(srv, reg); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inst := &Instance{Server: srv, Settings: reg, DataDir: dir, Addr: l.Addr().String(),
		Port: l.Addr().(*net.TCPAddr).Port, listener: l, done: make(chan error, 1)}
	go func() { inst.done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		select {
		case <-inst.done:
		case <-time.After(10 * time.Second):
			t.Errorf("server did not stop")
		}
	})
	return inst
}

// ConnString is a libpq URL for user postgres.
func (i *Instance) ConnString() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", i.Addr)
}

// Connect opens a pgx connection closed at the end of the test.
func (i *Instance) Connect(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, i.ConnString())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
