package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"lockd/guc"
	"lockd/internal/lockdtest"
	"lockd/server"
)

// Tests of the server's lifetime as an embedder sees it: Config.Validate,
// the data directory's lock, Listen, Ready and Done, and how settings
// reach the subsystems at start-up.

func quietRegistry(t *testing.T, dataDir string, settings ...string) *guc.Registry {
	t.Helper()
	reg := guc.NewRegistry(slog.New(slog.DiscardHandler))
	for i := 0; i+1 < len(settings); i += 2 {
		if err := reg.SetCommandLine(settings[i], settings[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := server.LoadSettings(reg, dataDir, "", false); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  server.Config
		want string
	}{
		{server.Config{DataDir: t.TempDir()}, "server: Config.Settings is required"},
		{server.Config{Settings: guc.NewRegistry(nil)}, "server: Config.DataDir is required"},
	} {
		if err := tc.cfg.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
		if _, err := server.New(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("New() = %v, want %q", err, tc.want)
		}
	}
}

// TestDataDirLockedInProcess: New takes the data directory's lock file for
// the server's lifetime, so a second server on it is refused even in the
// same process, and the lock goes when the server has stopped.
func TestDataDirLockedInProcess(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	first, err := server.New(server.Config{Settings: quietRegistry(t, dir), Logger: logger, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "postmaster.pid")
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("no lock file while the server runs: %v", err)
	}
	if _, err := server.New(server.Config{Settings: quietRegistry(t, dir), Logger: logger, DataDir: dir}); !errors.Is(err, server.ErrDataDirLocked) {
		t.Fatalf("second New on the same directory: %v, want ErrDataDirLocked", err)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.Done():
	default:
		t.Fatal("Done not closed after Shutdown returned")
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Fatalf("lock file still there after shutdown (stat: %v)", err)
	}
	second, err := server.New(server.Config{Settings: quietRegistry(t, dir), Logger: logger, DataDir: dir})
	if err != nil {
		t.Fatalf("New after the first server stopped: %v", err)
	}
	second.Close()
	<-second.Done()
}

// TestListen: Listen binds listen_addresses on port, Ready closes, and
// clients connect; a port in use is an error that leaves nothing bound.
func TestListen(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	dir := t.TempDir()
	srv, err := server.New(server.Config{Settings: quietRegistry(t, dir, "listen_addresses", "127.0.0.1", "port", port),
		Logger: slog.New(slog.DiscardHandler), DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	select {
	case <-srv.Ready():
		t.Fatal("Ready before Listen")
	default:
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	<-srv.Ready()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatalf("dial after Listen: %v", err)
	}
	c.Close()

	dir2 := t.TempDir()
	busy, err := server.New(server.Config{Settings: quietRegistry(t, dir2, "listen_addresses", "127.0.0.1", "port", port),
		Logger: slog.New(slog.DiscardHandler), DataDir: dir2})
	if err != nil {
		t.Fatal(err)
	}
	if err := busy.Listen(); err == nil {
		t.Fatal("Listen on a port in use succeeded")
	}
	busy.Close()

	dir3 := t.TempDir()
	none, err := server.New(server.Config{Settings: quietRegistry(t, dir3, "listen_addresses", ""),
		Logger: slog.New(slog.DiscardHandler), DataDir: dir3})
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Listen(); err == nil || err.Error() != "no listen addresses: listen_addresses is empty" {
		t.Fatalf("Listen with empty listen_addresses: %v", err)
	}
	none.Close()
}

// TestStartupSettingsReachSubsystems: fastpath_lock_slots arrives through
// its hook alone, so every value, 0 (disabled) included, is what the
// first sessions get.
func TestStartupSettingsReachSubsystems(t *testing.T) {
	for _, tc := range []struct {
		setting string
		slots   int
	}{
		{"", 64}, // -1: derived from max_locks_per_transaction = 64
		{"fastpath_lock_slots=0", 0},
		{"fastpath_lock_slots=20", 32},
	} {
		var settings []string
		if tc.setting != "" {
			settings = append(settings, tc.setting)
		}
		inst := lockdtest.Start(t, lockdtest.Options{Settings: settings})
		if got := inst.Server.Locks().FastPathSlots(); got != tc.slots {
			t.Errorf("%q: lock manager has %d fast-path slots, want %d", tc.setting, got, tc.slots)
		}
		inst.Stop(t)
	}
}

// TestLogLevelFollowsSetting: Config.LogLevel follows log_min_messages
// from start-up on and after a reload.
func TestLogLevelFollowsSetting(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lockd.conf")
	if err := os.WriteFile(conf, []byte("log_min_messages = \"fatal\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	level := new(slog.LevelVar)
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level}))
	reg := guc.NewRegistry(logger)
	if _, err := server.LoadSettings(reg, dir, "", false); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Settings: reg, Logger: logger, LogLevel: level, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if level.Level() != slog.LevelError {
		t.Fatalf("log_min_messages = fatal: level %v, want ERROR", level.Level())
	}
	if err := os.WriteFile(conf, []byte("log_min_messages = \"debug1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.ReloadConfig()
	if level.Level() != slog.LevelDebug {
		t.Fatalf("after reload with debug1: level %v, want DEBUG", level.Level())
	}
}

// TestLoadSettingsCreatesConfigFile: with create, the data directory gets
// an (empty) lockd.conf to edit; without, a missing one is not read.
func TestLoadSettingsCreatesConfigFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	got, err := server.LoadSettings(guc.NewRegistry(nil), dir, "", false)
	if err != nil || got != "" {
		t.Fatalf("without create: %q, %v; want no file", got, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("without create the data directory was made (stat: %v)", err)
	}
	got, err = server.LoadSettings(guc.NewRegistry(nil), dir, "", true)
	want := filepath.Join(dir, "lockd.conf")
	if err != nil || got != want {
		t.Fatalf("with create: %q, %v; want %q", got, err, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatal(err)
	}
	got, err = server.LoadSettings(guc.NewRegistry(nil), dir, "", false)
	if err != nil || got != want {
		t.Fatalf("existing file without create: %q, %v; want %q", got, err, want)
	}
}
