package main

// Tests of the real lockd binary: flags, exit codes, the data directory
// lock, configuration reloads and shutdown signals. TestMain builds the
// binary once into a temporary directory.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var lockdBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "lockd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	lockdBin = filepath.Join(dir, "lockd")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", lockdBin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build failed: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// result is the outcome of a lockd run that is expected to exit by itself.
type result struct {
	stdout, stderr string
	code           int
}

func runLockd(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, lockdBin, args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ctx.Err() != nil {
			t.Fatalf("lockd %s: %v (stderr: %s)", strings.Join(args, " "), err, stderr.String())
		}
		code = ee.ExitCode()
	}
	return result{stdout.String(), stderr.String(), code}
}

func TestVersion(t *testing.T) {
	r := runLockd(t, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "lockd ") {
		t.Fatalf("lockd version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestHelp(t *testing.T) {
	r := runLockd(t, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "-D DATADIR") {
		t.Fatalf("lockd --help: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestUnknownFlag(t *testing.T) {
	r := runLockd(t, "--no-such-flag")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2 (stderr %q)", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "--no-such-flag") || !strings.Contains(r.stderr, "--help") {
		t.Fatalf("stderr %q should name the flag and point at --help", r.stderr)
	}
}

func TestShowSetting(t *testing.T) {
	r := runLockd(t, "-D", t.TempDir(), "-C", "shared_buffers")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "128MB" {
		t.Fatalf("-C shared_buffers: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runLockd(t, "-D", t.TempDir(), "-C", "port", "-c", "port=6000")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "6000" {
		t.Fatalf("-C port -c port=6000: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestConfigUnknownKey(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(conf, []byte("wake_up_all_waiters = true\n\nno_such_setting = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runLockd(t, "-D", filepath.Join(dir, "data"), "--config", conf, "-p", strconv.Itoa(freePort(t)))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (stderr %q)", r.code, r.stderr)
	}
	for _, want := range []string{"no_such_setting", conf, "line 3"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not contain %q", r.stderr, want)
		}
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer collects a child's output while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lockdProc is a lockd process started by startServer.
type lockdProc struct {
	cmd     *exec.Cmd
	dataDir string
	port    int
	stderr  *syncBuffer
	exited  chan struct{}
	waitErr error
}

func startServer(t *testing.T, dataDir string, extra ...string) *lockdProc {
	t.Helper()
	port := freePort(t)
	args := append([]string{"-D", dataDir, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1"}, extra...)
	s := &lockdProc{cmd: exec.Command(lockdBin, args...), dataDir: dataDir, port: port,
		stderr: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd.Stdout = s.stderr
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		select {
		case <-s.exited:
			return
		default:
		}
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("lockd exited before accepting connections: %v\n%s", s.waitErr, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("lockd did not accept connections on %s within 10s\n%s", s.addr(), s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *lockdProc) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *lockdProc) connect(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable&connect_timeout=5", s.addr()))
	if err != nil {
		t.Fatalf("connect: %v\nserver log:\n%s", err, s.stderr.String())
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func (s *lockdProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// waitExit waits for the process to end and returns its exit code.
func (s *lockdProc) waitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(within):
		t.Fatalf("lockd did not exit within %v\n%s", within, s.stderr.String())
	}
	if s.waitErr == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(s.waitErr, &ee) {
		return ee.ExitCode()
	}
	t.Fatalf("wait: %v", s.waitErr)
	return -1
}

// show runs SHOW name in a new session.
func (s *lockdProc) show(t *testing.T, name string) string {
	t.Helper()
	c := s.connect(t)
	defer c.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var v string
	if err := c.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil {
		t.Fatalf("SHOW %s: %v", name, err)
	}
	return v
}

func TestSecondServerSameDataDir(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	r := runLockd(t, "-D", dir, "-p", strconv.Itoa(freePort(t)))
	if r.code != 1 {
		t.Fatalf("second server: exit %d, want 1 (stderr %q)", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "postmaster.pid") || !strings.Contains(r.stderr, strconv.Itoa(s.cmd.Process.Pid)) {
		t.Fatalf("second server's message %q should name postmaster.pid and the running server's PID %d",
			r.stderr, s.cmd.Process.Pid)
	}
	// The first server is unaffected.
	if v := s.show(t, "port"); v != strconv.Itoa(s.port) {
		t.Fatalf("SHOW port = %q, want %d", v, s.port)
	}
	s.signal(t, syscall.SIGTERM)
	if code := s.waitExit(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, s.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid still present after a clean shutdown (stat: %v)", err)
	}
}

func TestSIGHUPReloadsConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "lockd.conf")
	if err := os.WriteFile(conf, []byte("# lockd.conf\nwake_up_all_waiters = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir)
	if v := s.show(t, "wake_up_all_waiters"); v != "off" {
		t.Fatalf("before reload: wake_up_all_waiters = %q, want off", v)
	}
	if err := os.WriteFile(conf, []byte("# lockd.conf\nwake_up_all_waiters = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.signal(t, syscall.SIGHUP)
	// The reload is asynchronous: poll new sessions until it is seen.
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := s.show(t, "wake_up_all_waiters")
		if v == "on" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGHUP: wake_up_all_waiters = %q, want on\n%s", v, s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.signal(t, syscall.SIGTERM)
	if code := s.waitExit(t, 10*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}

func TestAlterSystemAndReload(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "ALTER SYSTEM SET wake_up_all_waiters = on"); err != nil {
		t.Fatalf("ALTER SYSTEM: %v", err)
	}
	auto, err := os.ReadFile(filepath.Join(dir, "lockd.auto.conf"))
	if err != nil || !strings.Contains(string(auto), "wake_up_all_waiters") {
		t.Fatalf("lockd.auto.conf = %q (%v), want an entry for wake_up_all_waiters", auto, err)
	}
	if v := s.show(t, "wake_up_all_waiters"); v != "off" {
		t.Fatalf("before pg_reload_conf: wake_up_all_waiters = %q, want off", v)
	}
	var ok bool
	if err := c.QueryRow(ctx, "SELECT pg_reload_conf()").Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_reload_conf() = %v, %v", ok, err)
	}
	if v := s.show(t, "wake_up_all_waiters"); v != "on" {
		t.Fatalf("after pg_reload_conf: wake_up_all_waiters = %q, want on", v)
	}
	// ALTER SYSTEM RESET takes it out again.
	if _, err := c.Exec(ctx, "ALTER SYSTEM RESET wake_up_all_waiters"); err != nil {
		t.Fatalf("ALTER SYSTEM RESET: %v", err)
	}
	if err := c.QueryRow(ctx, "SELECT pg_reload_conf()").Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_reload_conf() = %v, %v", ok, err)
	}
	if v := s.show(t, "wake_up_all_waiters"); v != "off" {
		t.Fatalf("after ALTER SYSTEM RESET + reload: wake_up_all_waiters = %q, want off", v)
	}
}

func TestSIGINTFastShutdown(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	// The session is now idle in a transaction.
	start := time.Now()
	s.signal(t, syscall.SIGINT)
	if code := s.waitExit(t, 5*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGINT\n%s", code, s.stderr.String())
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("fast shutdown took %v", d)
	}
	// The FATAL was sent before the connection closed: the next query
	// reports 57P01 (pgx reads the pending ErrorResponse), or at least fails.
	_, err = tx.Exec(ctx, "SELECT 1")
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		t.Fatal("query after fast shutdown succeeded")
	case errors.As(err, &pgErr):
		if pgErr.Code != "57P01" || pgErr.Message != "terminating connection due to administrator command" {
			t.Fatalf("got %s %q, want 57P01 terminating connection due to administrator command", pgErr.Code, pgErr.Message)
		}
	default:
		t.Fatalf("query after fast shutdown: %v; want the 57P01 ErrorResponse", err)
	}
}

func TestSIGTERMNoSessions(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.connect(t)
	c.Close(context.Background())
	start := time.Now()
	s.signal(t, syscall.SIGTERM)
	if code := s.waitExit(t, 5*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, s.stderr.String())
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("smart shutdown with no sessions took %v", d)
	}
	if !strings.Contains(s.stderr.String(), "shut down") {
		t.Errorf("log does not say the server shut down:\n%s", s.stderr.String())
	}
}

// -U and --pwfile make the superuser of a new data directory, with a
// SCRAM password (as initdb -U NAME --pwfile FILE), and an hba file that
// asks for it is then satisfied; SIGHUP reloads the hba file.
func TestBootstrapSuperuserPassword(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	hba := filepath.Join(dir, "pg_hba.conf")
	if err := os.WriteFile(pw, []byte("s3cret\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, []byte("host all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, filepath.Join(dir, "data"), "-U", "admin", "--pwfile", pw, "-c", "hba_file="+hba)
	connect := func(user, password string) (*pgx.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", user, password, s.addr()))
	}
	c, err := connect("admin", "s3cret")
	if err != nil {
		t.Fatalf("admin with the password from --pwfile: %v\n%s", err, s.stderr.String())
	}
	var stored string
	if err := c.QueryRow(context.Background(), "select rolpassword from pg_authid where rolname = 'admin'").Scan(&stored); err != nil || !strings.HasPrefix(stored, "SCRAM-SHA-256$4096:") {
		t.Fatalf("stored password %q, %v", stored, err)
	}
	c.Close(context.Background())
	if _, err := connect("admin", "wrong"); err == nil || !strings.Contains(err.Error(), `password authentication failed for user "admin"`) {
		t.Fatalf("a wrong password: %v", err)
	}
	if err := os.WriteFile(hba, []byte("host all all 127.0.0.1/32 reject\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.signal(t, syscall.SIGHUP)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := connect("admin", "s3cret")
		if err != nil && strings.Contains(err.Error(), "pg_hba.conf rejects connection") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hba file not reloaded on SIGHUP: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metrics-web-config writes a web configuration file that the metrics
// endpoint of a lockd then enforces: the password from the file opens
// /metrics, nothing else does.
func TestMetricsWebConfig(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("scrape-me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lockdBin, "metrics-web-config", "prometheus", pw).Output()
	if err != nil {
		t.Fatalf("metrics-web-config: %v", err)
	}
	web := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(web, out, 0o600); err != nil {
		t.Fatal(err)
	}
	mport := freePort(t)
	startServer(t, filepath.Join(dir, "data"), "-c", "metrics_listen_address=127.0.0.1:"+strconv.Itoa(mport), "-c", "metrics_web_config_file="+web)
	get := func(user, password string) int {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(mport)+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				return resp.StatusCode
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
		}
	}
	if code := get("prometheus", "scrape-me"); code != http.StatusOK {
		t.Fatalf("with the password: %d", code)
	}
	if code := get("prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("with a wrong password: %d", code)
	}
	if code := get("", ""); code != http.StatusUnauthorized {
		t.Fatalf("without a password: %d", code)
	}
}
