package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
	"lockd/vfs"
)

// The crash test: pgbench's tpcb-like script with 8 clients and, beside it,
// a client of the test's own that records every commit it sees
// acknowledged, while lockd is killed at a random moment; then a restart,
// and checks of what a user relies on:
//
//   - every acknowledged commit of the test's client is there (with
//     synchronous_commit = off: every one acknowledged at least three
//     wal_writer_delays before the kill; the later ones lost are counted);
//   - pgbench's balances agree: sum(abalance) = sum(bbalance) =
//     sum(tbalance) = sum(delta) of the history;
//   - every index agrees with its heap: a sequential scan and index
//     lookups count the same rows, and no key is there twice;
//   - no lock and no prepared transaction lingers;
//   - recovery took at most two minutes.
//
// By default the server runs in this process over a vfs.FaultFS, and the
// "kill" is a simulated power failure: writes not yet synced are dropped,
// some torn at 512-byte boundaries, some kept. That catches a missing
// fsync or a torn page, which kill -9 cannot (the page cache survives a
// killed process). With -crash.binary the server is a real process killed
// with SIGKILL (scripts/crash-test.sh runs it that way, 20 times).
var (
	crashRounds  = flag.Int("crash.rounds", 3, "crashes per synchronous_commit setting")
	crashMaxRun  = flag.Duration("crash.maxrun", 3*time.Second, "longest load before a crash (each is random up to it)")
	crashScale   = flag.Int("crash.scale", 1, "pgbench scale")
	crashBinary  = flag.String("crash.binary", "", "run this lockd binary and kill -9 it, instead of crashing an in-process server's file system")
	crashSync    = flag.String("crash.sync", "on,off", "synchronous_commit settings to run")
	crashLogFile = flag.String("crash.log", "", "append a line per crash to this file")
)

// crashServer is the server under test: in this process over a FaultFS,
// or a lockd process.
type crashServer struct {
	t        *testing.T
	dir      string
	settings []string

	inst *lockdtest.Instance
	fs   *vfs.FaultFS
	rng  *rand.Rand

	cmd  *exec.Cmd
	port int
	log  *os.File
}

func (s *crashServer) connArgs() []string {
	return []string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port()), "-U", "postgres", "postgres"}
}

func (s *crashServer) Port() int {
	if s.inst != nil {
		return s.inst.Port
	}
	return s.port
}

func (s *crashServer) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port())
}

func (s *crashServer) newFS() *vfs.FaultFS {
	f := vfs.NewFaultFS(nil)
	f.Tear, f.Keep = 0.25, 0.25
	return f
}

// start starts the server (again) and returns how long start-up took.
func (s *crashServer) start() time.Duration {
	t := s.t
	t.Helper()
	begin := time.Now()
	if *crashBinary == "" {
		s.fs = s.newFS()
		if s.inst == nil {
			s.inst = lockdtest.Start(t, lockdtest.Options{DataDir: s.dir, Settings: s.settings, FS: s.fs,
				Panic: func(msg string) { t.Logf("PANIC: %s", msg) }})
		} else {
			s.inst.StartAgain(t, s.fs)
		}
		return time.Since(begin)
	}
	if s.port == 0 {
		s.port = freePort(t)
	}
	args := []string{"-D", s.dir, "-p", strconv.Itoa(s.port), "-c", "listen_addresses=127.0.0.1", "-c", "metrics_listen_address="}
	for _, kv := range s.settings {
		args = append(args, "-c", kv)
	}
	if s.log == nil {
		var err error
		if s.log, err = os.Create(filepath.Join(t.TempDir(), "lockd.log")); err != nil {
			t.Fatal(err)
		}
	}
	s.cmd = exec.Command(*crashBinary, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		c, err := pgx.Connect(context.Background(), s.dsn())
		if err == nil {
			c.Close(context.Background())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lockd did not come up: %v (log %s)", err, s.log.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(begin)
}

// crash kills the server at once: a simulated power failure of its file
// system, or SIGKILL. It reports the unsynced writes dropped, torn and
// kept (in process).
func (s *crashServer) crash() string {
	t := s.t
	if *crashBinary == "" {
		d, tr, k, err := s.fs.Crash(s.rng)
		if err != nil {
			t.Fatalf("crash: %v", err)
		}
		s.inst.Kill(t)
		return fmt.Sprintf("unsynced writes dropped %d, torn %d, kept %d", d, tr, k)
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	return "SIGKILL"
}

// recovery returns what the last start-up replayed (in process only).
func (s *crashServer) recovery() string {
	if s.inst == nil {
		// The process's log: the last replay's "redo done" line.
		b, _ := os.ReadFile(s.log.Name())
		lines := strings.Split(string(b), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if _, after, ok := strings.Cut(lines[i], "system usage: "); ok {
				return strings.TrimSuffix(after, `"`)
			}
			if strings.Contains(lines[i], "redo is not required") {
				return "redo is not required"
			}
		}
		return "no recovery logged"
	}
	r := s.inst.Server.Recovery()
	if !r.Recovered {
		return "no recovery"
	}
	mb := float64(r.Bytes) / (1 << 20)
	return fmt.Sprintf("replayed %d records, %.1f MB in %.2f s (%.0f MB/s)", r.Records, mb, r.Elapsed.Seconds(), mb/max(r.Elapsed.Seconds(), 1e-6))
}

func (s *crashServer) stop() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		s.cmd.Wait()
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// acker is the test's own client: workers insert keys into crash_acks,
// each in its own transaction, and record every insertion the server
// acknowledged, with when.
type acker struct {
	mu    sync.Mutex
	acked map[int64]time.Time
}

func (a *acker) run(ctx context.Context, dsn string, worker int, base int64) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return
	}
	defer c.Close(context.Background())
	for i := int64(0); ctx.Err() == nil; i++ {
		k := base + int64(worker)<<24 + i
		if _, err := c.Exec(ctx, "insert into crash_acks values ($1, 'x')", k); err != nil {
			return // the server is gone
		}
		at := time.Now()
		a.mu.Lock()
		a.acked[k] = at
		a.mu.Unlock()
	}
}

type checker struct {
	t *testing.T
	c *pgx.Conn
}

func (ck checker) int(sql string, args ...any) int64 {
	ck.t.Helper()
	var v *int64
	if err := ck.c.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		ck.t.Fatalf("%s: %v", sql, err)
	}
	if v == nil {
		return 0
	}
	return *v
}

// indexAgrees checks that the index on table.col finds exactly the rows a
// sequential scan finds: keys are read by the scan, then looked up one by
// one through the index (a correlated equality, which lockd runs as an
// index lookup), and no key may be there twice.
func (ck checker) indexAgrees(table, col, typ string) (int64, error) {
	ctx := context.Background()
	rows, err := ck.c.Query(ctx, fmt.Sprintf("select %s from %s", col, table))
	if err != nil {
		return 0, err
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (int64, error) {
		var v int64
		err := r.Scan(&v)
		return v, err
	})
	if err != nil {
		return 0, err
	}
	found := ck.int(fmt.Sprintf("select count(*) from unnest($1::%s[]) k where exists (select 1 from %s t where t.%s = k)", typ, table, col), keys)
	dups := ck.int(fmt.Sprintf("select count(*) from (select %s from %s group by %s having count(*) > 1) d", col, table, col))
	if found != int64(len(keys)) || dups != 0 {
		return int64(len(keys)), fmt.Errorf("%s: a sequential scan finds %d rows, index lookups find %d of them; %d keys twice", table, len(keys), found, dups)
	}
	return found, nil
}

func TestCrashRecovery(t *testing.T) {
	pgbench := need(t, "pgbench")
	for _, sc := range strings.Split(*crashSync, ",") {
		t.Run("synchronous_commit="+sc, func(t *testing.T) { crashRun(t, pgbench, sc) })
	}
}

func crashRun(t *testing.T, pgbench, syncCommit string) {
	const writerDelay = 200 * time.Millisecond
	srv := &crashServer{t: t, dir: t.TempDir(), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7)),
		settings: []string{"synchronous_commit=" + syncCommit, "wal_writer_delay=200ms", "max_connections=40",
			// small enough that pages are evicted (and images taken) under
			// load, and checkpoints come from log volume mid-run
			"shared_buffers=4MB", "max_wal_size=48MB", "min_wal_size=32MB", "checkpoint_timeout=30s"}}
	if *crashBinary == "" {
		t.Logf("in-process server over a fault-injecting file system (writes not synced are dropped or torn at a crash)")
	}
	defer srv.stop()
	srv.start()
	o := run(t, 5*time.Minute, pgbench, append([]string{"-i", "-q", "-s", strconv.Itoa(*crashScale)}, srv.connArgs()...)...)
	if o.code != 0 {
		t.Fatalf("pgbench -i: %s%s", o.stdout, o.stderr)
	}
	func() {
		c, err := pgx.Connect(context.Background(), srv.dsn())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "create table crash_acks (k int8 primary key, v text)"); err != nil {
			t.Fatal(err)
		}
	}()
	ack := &acker{acked: map[int64]time.Time{}}
	accounts := int64(100000 * *crashScale)
	for round := 1; round <= *crashRounds; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		pgb := exec.CommandContext(ctx, pgbench, append([]string{"-n", "-b", "tpcb-like", "-M", "prepared", "-c", "8", "-j", "2", "-T", "600"}, srv.connArgs()...)...)
		pgb.Env = clientEnv()
		if err := pgb.Start(); err != nil {
			t.Fatal(err)
		}
		for w := range 2 {
			wg.Go(func() { ack.run(ctx, srv.dsn(), w, int64(round)<<40) })
		}
		runStart := time.Now()
		time.Sleep(300*time.Millisecond + time.Duration(srv.rng.Int64N(int64(*crashMaxRun))))
		crashAt := time.Now()
		how := srv.crash()
		cancel()
		pgb.Wait()
		wg.Wait()

		took := srv.start()
		c, err := pgx.Connect(context.Background(), srv.dsn())
		if err != nil {
			t.Fatal(err)
		}
		ck := checker{t, c}
		// Every acknowledged commit is there (with synchronous_commit off:
		// those acknowledged three wal_writer_delays before the crash).
		ack.mu.Lock()
		var must, late []int64
		for k, at := range ack.acked {
			if syncCommit != "off" || at.Before(crashAt.Add(-3*writerDelay)) {
				must = append(must, k)
			} else {
				late = append(late, k)
			}
		}
		ack.mu.Unlock()
		if n := ck.int("select count(*) from unnest($1::int8[]) k where exists (select 1 from crash_acks a where a.k = k)", must); n != int64(len(must)) {
			t.Fatalf("round %d: %d of %d acknowledged commits are missing", round, int64(len(must))-n, len(must))
		}
		lost := int64(len(late)) - ck.int("select count(*) from unnest($1::int8[]) k where exists (select 1 from crash_acks a where a.k = k)", late)
		// Forget what was lost, so later rounds do not count it again.
		for _, k := range late {
			if ck.int("select count(*) from crash_acks where k = $1", k) == 0 {
				ack.mu.Lock()
				delete(ack.acked, k)
				ack.mu.Unlock()
			}
		}
		a, b, tl, h := ck.int("select sum(abalance) from pgbench_accounts"), ck.int("select sum(bbalance) from pgbench_branches"),
			ck.int("select sum(tbalance) from pgbench_tellers"), ck.int("select sum(delta) from pgbench_history")
		if a != h || b != h || tl != h {
			t.Fatalf("round %d: sum(abalance)=%d sum(bbalance)=%d sum(tbalance)=%d sum(delta)=%d", round, a, b, tl, h)
		}
		if n := ck.int("select count(*) from pgbench_accounts"); n != accounts {
			t.Fatalf("round %d: %d accounts, want %d", round, n, accounts)
		}
		for _, ix := range [][3]string{{"pgbench_accounts", "aid", "int4"}, {"pgbench_tellers", "tid", "int4"},
			{"pgbench_branches", "bid", "int4"}, {"crash_acks", "k", "int8"}} {
			if _, err := ck.indexAgrees(ix[0], ix[1], ix[2]); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if n := ck.int("select count(*) from pg_locks where pid <> pg_backend_pid()"); n != 0 {
			t.Fatalf("round %d: %d locks of other sessions linger", round, n)
		}
		if n := ck.int("select count(*) from pg_prepared_xacts"); n != 0 {
			t.Fatalf("round %d: %d prepared transactions linger", round, n)
		}
		txns := ck.int("select count(*) from pgbench_history")
		c.Close(context.Background())
		if took > 2*time.Minute {
			t.Fatalf("round %d: start-up with recovery took %v", round, took)
		}
		line := fmt.Sprintf("synchronous_commit=%s round %d: %s after %v; restart %.2f s (%s); %d acknowledged commits checked, %d acknowledged within 3 wal_writer_delays of the crash, %d of those lost; %d pgbench transactions so far, balances agree, indexes agree",
			syncCommit, round, how, crashAt.Sub(runStart).Round(time.Millisecond), took.Seconds(), srv.recovery(), len(must), len(late), lost, txns)
		t.Log(line)
		if *crashLogFile != "" {
			if f, err := os.OpenFile(*crashLogFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, line)
				f.Close()
			}
		}
	}
}

var crashInitScale = flag.Int("crash.initscale", 1, "pgbench scale of TestCrashAfterInit")

// TestCrashAfterInit kills the server right after pgbench -i returns: every
// account must be there after the restart (with scale 10, 1,000,000).
func TestCrashAfterInit(t *testing.T) {
	pgbench := need(t, "pgbench")
	srv := &crashServer{t: t, dir: t.TempDir(), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9)),
		settings: []string{"max_connections=20"}}
	defer srv.stop()
	srv.start()
	begin := time.Now()
	o := run(t, 30*time.Minute, pgbench, append([]string{"-i", "-q", "-s", strconv.Itoa(*crashInitScale)}, srv.connArgs()...)...)
	if o.code != 0 {
		t.Fatalf("pgbench -i: %s%s", o.stdout, o.stderr)
	}
	initTook := time.Since(begin)
	how := srv.crash()
	took := srv.start()
	c, err := pgx.Connect(context.Background(), srv.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ck := checker{t, c}
	want := int64(100000 * *crashInitScale)
	if n := ck.int("select count(*) from pgbench_accounts"); n != want {
		t.Fatalf("%d accounts after the crash, want %d", n, want)
	}
	if _, err := ck.indexAgrees("pgbench_accounts", "aid", "int4"); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("pgbench -i -s %d (%.1f s), %s right after it; restart %.2f s (%s); %d accounts, index agrees",
		*crashInitScale, initTook.Seconds(), how, took.Seconds(), srv.recovery(), want)
	t.Log(line)
	if *crashLogFile != "" {
		if f, err := os.OpenFile(*crashLogFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
	if took > 2*time.Minute {
		t.Fatalf("start-up with recovery took %v", took)
	}
}
