package e2e

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
	"lockd/vfs"
)

// Tests of the write-ahead log as a user sees it: what survives a crash,
// the faults PostgreSQL treats as PANIC or as an error, and the counters.
// The server runs over a vfs.FaultFS; a "crash" drops every write not
// yet synced.

// faultServer is an in-process server over a FaultFS whose injection a
// test can arm.
type faultServer struct {
	t      *testing.T
	inst   *lockdtest.Instance
	fs     *vfs.FaultFS
	panics chan string

	mu     sync.Mutex
	inject func(op vfs.Op, path string) error
}

func newFaultServer(t *testing.T, settings ...string) *faultServer {
	s := &faultServer{t: t, panics: make(chan string, 16)}
	s.inst = lockdtest.Start(t, lockdtest.Options{Settings: settings, FS: s.newFS(),
		Panic: func(msg string) { s.panics <- msg }})
	return s
}

func (s *faultServer) newFS() *vfs.FaultFS {
	s.fs = vfs.NewFaultFS(nil)
	s.fs.Inject = func(op vfs.Op, path string) error {
		s.mu.Lock()
		fn := s.inject
		s.mu.Unlock()
		if fn != nil {
			return fn(op, path)
		}
		return nil
	}
	return s.fs
}

func (s *faultServer) arm(fn func(op vfs.Op, path string) error) {
	s.mu.Lock()
	s.inject = fn
	s.mu.Unlock()
}

// crash drops every unsynced write and kills the server; restart starts a
// new one (which recovers).
func (s *faultServer) crash() {
	s.arm(nil)
	if _, _, _, err := s.fs.Crash(rand.New(rand.NewPCG(1, 1))); err != nil {
		s.t.Fatal(err)
	}
	s.inst.Kill(s.t)
}

func (s *faultServer) restart() {
	s.arm(nil)
	s.inst.StartAgain(s.t, s.newFS())
}

func (s *faultServer) conn() *pgx.Conn { return s.inst.Connect(s.t) }

func exec1(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func int1(t *testing.T, c *pgx.Conn, sql string, args ...any) int64 {
	t.Helper()
	var v *int64
	if err := c.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if v == nil {
		return 0
	}
	return *v
}

// TestWALSyncPerCommit: with one client and synchronous_commit = on,
// every commit syncs the log (N commits raise pg_stat_wal.wal_sync by at
// least 0.9 N); with synchronous_commit = off, hardly any does.
func TestWALSyncPerCommit(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	exec1(t, c, "create table t (a int primary key, b text)")
	const n = 200
	for _, sc := range []string{"on", "off"} {
		exec1(t, c, "set synchronous_commit = "+sc)
		before := int1(t, c, "select wal_sync from pg_stat_wal")
		base := int1(t, c, "select coalesce(max(a), 0) from t")
		for i := range n {
			exec1(t, c, "insert into t values ($1, 'x')", base+int64(i)+1)
		}
		syncs := int1(t, c, "select wal_sync from pg_stat_wal") - before
		t.Logf("synchronous_commit = %s: %d commits, wal_sync +%d", sc, n, syncs)
		if sc == "on" && syncs < n*9/10 {
			t.Errorf("synchronous_commit = on: %d commits raised wal_sync by %d, want at least %d", n, syncs, n*9/10)
		}
		if sc == "off" && syncs > n/4 {
			t.Errorf("synchronous_commit = off: %d commits raised wal_sync by %d", n, syncs)
		}
	}
}

// TestCrashKeepsCommits: committed transactions, with their
// subtransactions, survive a crash that drops every unsynced write; what
// was rolled back, or not committed, does not; DDL (CREATE TABLE, INDEX,
// SEQUENCE, ALTER TABLE, TRUNCATE, DROP) survives with it, and files no
// committed catalog uses are gone.
func TestCrashKeepsCommits(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	for _, q := range []string{
		"create table t (a int primary key, b text)",
		"create table u (a int)", "insert into u select generate_series(1, 1000)",
		"create table d (a int)", "insert into d values (1)",
		"create sequence q",
		"begin",
		"insert into t values (1, 'one')",
		"savepoint s1", "insert into t values (2, 'two')", "rollback to s1",
		"insert into t values (3, 'three')",
		"savepoint s2", "insert into t values (4, 'four')", "release s2",
		"commit",
		"create index t_b on t (b)",
		"alter table t add column c int default 7",
		"truncate u", "insert into u values (42)",
		"drop table d",
		"select nextval('q')", "select nextval('q')",
		"update t set b = 'THREE' where a = 3",
		"delete from t where a = 1",
	} {
		exec1(t, c, q)
	}
	// Not committed at the crash:
	c2 := s.conn()
	exec1(t, c2, "begin")
	exec1(t, c2, "insert into t values (5, 'five')")
	exec1(t, c2, "create table never (a int)")
	s.crash()
	s.restart()
	c = s.conn()
	rows, err := c.Query(context.Background(), "select a, b, c from t order by a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var a, cc int
		var b string
		rows.Scan(&a, &b, &cc)
		got = append(got, strings.Join([]string{strconv.Itoa(a), b, strconv.Itoa(cc)}, ":"))
	}
	if strings.Join(got, " ") != "3:THREE:7 4:four:7" {
		t.Fatalf("t after the crash: %v", got)
	}
	if n := int1(t, c, "select count(*) from t where b = 'four'"); n != 1 { // through t_b
		t.Fatalf("index t_b finds %d", n)
	}
	if n := int1(t, c, "select sum(a) from u"); n != 42 {
		t.Fatalf("u after the crash: sum %d", n)
	}
	if n := int1(t, c, "select count(*) from pg_class where relname in ('d', 'never')"); n != 0 {
		t.Fatalf("%d dropped or uncommitted tables are back", n)
	}
	if v := int1(t, c, "select nextval('q')"); v <= 2 {
		t.Fatalf("nextval after the crash: %d", v)
	}
	// Every file in base/ belongs to a relation of the catalog.
	files := map[string]bool{}
	ents, _ := os.ReadDir(filepath.Join(s.inst.DataDir, "base"))
	for _, e := range ents {
		if !strings.Contains(e.Name(), "_") && !strings.HasSuffix(e.Name(), ".tmp") {
			files[e.Name()] = true
		}
	}
	rows, err = c.Query(context.Background(), "select relfilenode::text from pg_class where relfilenode <> 0")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var f string
		rows.Scan(&f)
		delete(files, f)
	}
	if len(files) != 0 {
		t.Fatalf("files no relation uses: %v", files)
	}
}

// TestCleanRestartReplaysNothing: a start after a clean shutdown replays
// nothing; after a crash it recovers.
func TestCleanRestartReplaysNothing(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	exec1(t, c, "create table t (a int)")
	exec1(t, c, "insert into t select generate_series(1, 100)")
	c.Close(context.Background())
	s.inst.Restart(t)
	if r := s.inst.Server.Recovery(); r.Recovered {
		t.Fatalf("a start after a clean shutdown replayed %d records", r.Records)
	}
	c = s.conn()
	exec1(t, c, "insert into t values (101)")
	s.crash()
	s.restart()
	if r := s.inst.Server.Recovery(); !r.Recovered || r.Records == 0 {
		t.Fatalf("no recovery after a crash: %+v", r)
	}
	if n := int1(t, s.conn(), "select count(*) from t"); n != 101 {
		t.Fatalf("%d rows", n)
	}
}

// waitPanic waits for a PANIC's message.
func waitPanic(t *testing.T, s *faultServer) string {
	t.Helper()
	select {
	case msg := <-s.panics:
		return msg
	case <-time.After(20 * time.Second):
		t.Fatal("no PANIC")
	}
	return ""
}

// TestWALFsyncFailureIsPanic: a failed fsync of the log is a PANIC
// (PostgreSQL since 2018), never retried or ignored; the next start
// recovers.
func TestWALFsyncFailureIsPanic(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	exec1(t, c, "create table t (a int)")
	exec1(t, c, "insert into t values (1)")
	s.arm(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.Contains(path, "pg_wal") {
			return syscall.EIO
		}
		return nil
	})
	go c.Exec(context.Background(), "insert into t values (2)") // never answered: its backend PANICs
	msg := waitPanic(t, s)
	if !strings.HasPrefix(msg, "could not fdatasync file \"") || !strings.HasSuffix(msg, ": Input/output error") {
		t.Fatalf("PANIC: %q", msg)
	}
	s.crash()
	s.restart()
	if n := int1(t, s.conn(), "select count(*) from t where a = 1"); n != 1 {
		t.Fatal("a commit acknowledged before the PANIC is gone")
	}
}

// TestDataFsyncFailureIsPanic: a failed fsync of a data file at a
// checkpoint is a PANIC too (data_sync_retry = off): the kernel may have
// dropped the pages, so only recovery from the log can be trusted.
func TestDataFsyncFailureIsPanic(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	exec1(t, c, "create table t (a int)")
	exec1(t, c, "insert into t select generate_series(1, 1000)")
	s.arm(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.Contains(path, "/base/") {
			return syscall.EIO
		}
		return nil
	})
	go c.Exec(context.Background(), "checkpoint")
	msg := waitPanic(t, s)
	if !strings.HasPrefix(msg, "could not fsync file \"base/") || !strings.HasSuffix(msg, "\": Input/output error") {
		t.Fatalf("PANIC: %q", msg)
	}
	s.crash()
	s.restart()
	if n := int1(t, s.conn(), "select count(*) from t"); n != 1000 {
		t.Fatalf("%d rows", n)
	}
}

// TestWALDiskFullIsPanic: a full disk while writing the log is a PANIC,
// as in PostgreSQL.
func TestWALDiskFullIsPanic(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	exec1(t, c, "create table t (a int)")
	s.arm(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite && strings.Contains(path, "pg_wal") {
			return syscall.ENOSPC
		}
		return nil
	})
	go c.Exec(context.Background(), "insert into t values (1)")
	msg := waitPanic(t, s)
	if !strings.HasPrefix(msg, "could not write to log file ") || !strings.HasSuffix(msg, ": No space left on device") {
		t.Fatalf("PANIC: %q", msg)
	}
	s.crash()
	s.restart()
	int1(t, s.conn(), "select count(*) from t")
}

// TestDiskFullExtendingTable: a full disk while a table is extended fails
// the statement with 53100, and corrupts nothing.
func TestDiskFullExtendingTable(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	exec1(t, c, "create table t (a int, b text)")
	exec1(t, c, "insert into t select g, repeat('x', 100) from generate_series(1, 500) g")
	s.arm(func(op vfs.Op, path string) error {
		if op != vfs.OpSync && strings.Contains(path, "/base/") && !strings.HasSuffix(path, "_fsm") && !strings.HasSuffix(path, ".tmp") {
			return syscall.ENOSPC
		}
		return nil
	})
	_, err := c.Exec(context.Background(), "insert into t select g, repeat('y', 100) from generate_series(501, 5000) g")
	s.arm(nil)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53100" || !strings.HasPrefix(pe.Message, "could not extend file \"base/") ||
		!strings.HasSuffix(pe.Message, "\": No space left on device") || pe.Hint != "Check free disk space." {
		t.Fatalf("insert on a full disk: %v", err)
	}
	if n := int1(t, c, "select count(*) from t"); n != 500 {
		t.Fatalf("%d rows after the failed insert", n)
	}
	// COPY's page-at-a-time insertion fails the same way, naming the
	// line whose batch could not be placed
	s.arm(func(op vfs.Op, path string) error {
		if op != vfs.OpSync && strings.Contains(path, "/base/") && !strings.HasSuffix(path, "_fsm") && !strings.HasSuffix(path, ".tmp") {
			return syscall.ENOSPC
		}
		return nil
	})
	rows := make([][]any, 4500)
	for i := range rows {
		rows[i] = []any{int32(501 + i), strings.Repeat("c", 100)}
	}
	_, err = c.CopyFrom(context.Background(), pgx.Identifier{"t"}, []string{"a", "b"}, pgx.CopyFromRows(rows))
	s.arm(nil)
	if !errors.As(err, &pe) || pe.Code != "53100" || !strings.HasPrefix(pe.Where, "COPY t, line ") {
		t.Fatalf("COPY on a full disk: %v (context %q)", err, pe.Where)
	}
	if n := int1(t, c, "select count(*) from t"); n != 500 {
		t.Fatalf("%d rows after the failed COPY", n)
	}
	exec1(t, c, "insert into t select g, repeat('z', 100) from generate_series(501, 5000) g")
	s.crash()
	s.restart()
	if n := int1(t, s.conn(), "select count(*) from t"); n != 5000 {
		t.Fatalf("%d rows after recovery", n)
	}
}

// TestCrashDuringCheckpoint: a crash while a checkpoint writes its files
// leaves the previous checkpoint in force; recovery starts there.
func TestCrashDuringCheckpoint(t *testing.T) {
	s := newFaultServer(t, "shared_buffers=2MB")
	c := s.conn()
	exec1(t, c, "create table t (a int primary key, b text)")
	exec1(t, c, "insert into t select g, repeat('x', 200) from generate_series(1, 20000) g")
	blocked := make(chan struct{})
	var once sync.Once
	hold := make(chan struct{})
	s.arm(func(op vfs.Op, path string) error {
		if op == vfs.OpSync && strings.Contains(path, "/base/") {
			once.Do(func() { close(blocked) })
			<-hold // until the crash
		}
		return nil
	})
	go c.Exec(context.Background(), "checkpoint")
	select {
	case <-blocked:
	case <-time.After(20 * time.Second):
		t.Fatal("the checkpoint did not reach its fsyncs")
	}
	s.fs.Crash(rand.New(rand.NewPCG(2, 2)))
	close(hold)
	s.inst.Kill(t)
	s.restart()
	c = s.conn()
	if n := int1(t, c, "select count(*) from t"); n != 20000 {
		t.Fatalf("%d rows", n)
	}
	if n := int1(t, c, "select count(*) from generate_series(1, 20000) g where exists (select 1 from t where t.a = g)"); n != 20000 {
		t.Fatalf("the index finds %d rows", n)
	}
}

// TestCrashDuringRecovery: a crash while the server recovers (here, a
// failure of the end-of-recovery checkpoint, with the file system then
// dropping what was not synced) is recovered by the next start.
func TestCrashDuringRecovery(t *testing.T) {
	s := newFaultServer(t)
	c := s.conn()
	exec1(t, c, "create table t (a int primary key)")
	exec1(t, c, "insert into t select generate_series(1, 5000)")
	s.crash()
	fs := s.newFS()
	s.arm(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite && strings.Contains(path, "/base/") {
			return syscall.EIO
		}
		return nil
	})
	err := s.inst.TryStartAgain(t, fs)
	if err == nil {
		t.Fatal("the start with a failing fsync succeeded")
	}
	t.Logf("start-up failed as wanted: %v", err)
	s.arm(nil)
	fs.Crash(rand.New(rand.NewPCG(3, 3)))
	s.restart()
	if n := int1(t, s.conn(), "select count(*) from t"); n != 5000 {
		t.Fatalf("%d rows", n)
	}
}

// TestStartRefusals: a data directory whose log has lost its checkpoint
// record, and one written by a lockd without a WAL, are refused with
// PostgreSQL's message or a clear one.
func TestStartRefusals(t *testing.T) {
	t.Run("no checkpoint record", func(t *testing.T) {
		s := newFaultServer(t)
		exec1(t, s.conn(), "create table t (a int)")
		s.crash()
		wal := filepath.Join(s.inst.DataDir, "pg_wal")
		ents, _ := os.ReadDir(wal)
		for _, e := range ents {
			os.Remove(filepath.Join(wal, e.Name()))
		}
		err := s.inst.TryStartAgain(t, nil)
		if err == nil || !strings.Contains(err.Error(), "PANIC: could not locate a valid checkpoint record") {
			t.Fatalf("start: %v", err)
		}
	})
	t.Run("old format", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "global"), 0o700)
		os.WriteFile(filepath.Join(dir, "global", "lockd_catalog.json"), []byte(`{"version": 1, "next_oid": 16384}`), 0o600)
		_, err := lockdtest.TryStart(t, lockdtest.Options{DataDir: dir})
		if err == nil || !strings.Contains(err.Error(), "database files are incompatible with server") ||
			!strings.Contains(err.Error(), "without a write-ahead log") {
			t.Fatalf("start: %v", err)
		}
	})
}
