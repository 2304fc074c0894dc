package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

func TestAdvisoryLockContention(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	holder, waiter, observer := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	hpid, wpid := backendPID(t, holder), backendPID(t, waiter)
	if _, err := holder.Exec(ctx, "select pg_advisory_lock(42)"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "select pg_advisory_lock(42)")
		done <- err
	}()
	// pg_stat_activity shows the waiter on Lock/advisory
	waitFor(t, "waiter in pg_stat_activity", func() bool {
		var typ, ev string
		err := observer.QueryRow(ctx, "select coalesce(wait_event_type, ''), coalesce(wait_event, '') from pg_stat_activity where pid = $1", wpid).Scan(&typ, &ev)
		return err == nil && typ == "Lock" && ev == "advisory"
	})
	// pg_locks shows both, the waiter not granted and with a waitstart
	rows, err := observer.Query(ctx, `select pid, mode, granted, fastpath, waitstart is not null, database, classid, objid, objsubid
		from pg_locks where locktype = 'advisory' order by granted desc`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var pid int32
		var mode string
		var granted, fastpath, hasWait bool
		var db, classid, objid uint32
		var sub int16
		if err := rows.Scan(&pid, &mode, &granted, &fastpath, &hasWait, &db, &classid, &objid, &sub); err != nil {
			t.Fatal(err)
		}
		who := "holder"
		if pid == wpid {
			who = "waiter"
		} else if pid != hpid {
			who = "other"
		}
		got = append(got, strings.Join([]string{who, mode, b(granted), b(fastpath), b(hasWait)}, " "))
		if db != 5 || classid != 0 || objid != 42 || sub != 1 {
			t.Errorf("tag columns %d %d %d %d", db, classid, objid, sub)
		}
	}
	want := "holder ExclusiveLock t f f|waiter ExclusiveLock f f t"
	if strings.Join(got, "|") != want {
		t.Fatalf("pg_locks: %s, want %s", strings.Join(got, "|"), want)
	}
	var blockers []int32
	if err := observer.QueryRow(ctx, "select pg_blocking_pids($1)", wpid).Scan(&blockers); err != nil {
		t.Fatal(err)
	}
	if len(blockers) != 1 || blockers[0] != hpid {
		t.Fatalf("pg_blocking_pids = %v, want [%d]", blockers, hpid)
	}
	var ok bool
	if err := holder.QueryRow(ctx, "select pg_advisory_unlock(42)").Scan(&ok); err != nil || !ok {
		t.Fatalf("unlock: %v %v", ok, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	// unlocking a lock one does not hold warns and returns false
	var notices []string
	cfg, _ := pgconn.ParseConfig(inst.ConnString())
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Severity+": "+n.Message) }
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	rs, err := pc.Exec(ctx, "select pg_advisory_unlock(7)").ReadAll()
	if err != nil || string(rs[0].Rows[0][0]) != "f" || len(notices) != 1 || notices[0] != "WARNING: you don't own a lock of type ExclusiveLock" {
		t.Fatalf("%v %v %v", rs, err, notices)
	}
}

func b(v bool) string {
	if v {
		return "t"
	}
	return "f"
}

func TestAdvisoryTryAndShared(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	a, c := inst.Connect(t), inst.Connect(t)
	q := func(conn *pgx.Conn, sql string) string {
		t.Helper()
		rs, err := conn.PgConn().Exec(ctx, sql).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return string(rs[len(rs)-1].Rows[0][0])
	}
	if got := q(a, "select pg_try_advisory_lock_shared(1, 2)"); got != "t" {
		t.Fatal(got)
	}
	if got := q(c, "select pg_try_advisory_lock_shared(1, 2)"); got != "t" {
		t.Fatal("shared locks must not conflict:", got)
	}
	if got := q(c, "select pg_try_advisory_lock(1, 2)"); got != "f" {
		t.Fatal("exclusive must conflict with another's shared:", got)
	}
	// transaction-level locks go away at commit, session-level ones stay
	if got := q(a, "begin; select pg_try_advisory_xact_lock(99)"); got != "t" {
		t.Fatal(got)
	}
	if got := q(c, "select pg_try_advisory_xact_lock(99)"); got != "f" {
		t.Fatal(got)
	}
	q(a, "commit; select 1")
	if got := q(c, "select pg_try_advisory_xact_lock(99)"); got != "t" {
		t.Fatal("xact lock survived commit:", got)
	}
	if got := q(a, "select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()"); got != "1" {
		t.Fatal("session lock count:", got)
	}
	q(a, "select pg_advisory_unlock_all()::text")
	if got := q(a, "select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()"); got != "0" {
		t.Fatal("after unlock_all:", got)
	}
}

func TestDeadlockDetected(t *testing.T) {
	// The server default stays 1s; each session lowers its own
	// deadlock_timeout, as one does in psql.
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	s1, s2 := inst.Connect(t), inst.Connect(t)
	p1, p2 := backendPID(t, s1), backendPID(t, s2)
	for _, c := range []*pgx.Conn{s1, s2} {
		if _, err := c.Exec(ctx, "set deadlock_timeout = '100ms'"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "begin"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s1.Exec(ctx, "select pg_advisory_xact_lock(1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Exec(ctx, "select pg_advisory_xact_lock(2)"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	start := time.Now()
	go func() { _, err := s1.Exec(ctx, "select pg_advisory_xact_lock(2)"); errs <- err }()
	time.Sleep(50 * time.Millisecond)
	go func() { _, err := s2.Exec(ctx, "select pg_advisory_xact_lock(1)"); errs <- err }()
	var deadlocks, ok int
	var detail string
	for i := 0; i < 2; i++ {
		err := <-errs
		if err == nil {
			ok++
			continue
		}
		pe := pgErr(t, err)
		if pe.Code != "40P01" || pe.Message != "deadlock detected" {
			t.Fatalf("got %v", err)
		}
		deadlocks++
		detail = pe.Detail
		if pe.Hint != "See server log for query details." {
			t.Errorf("hint %q", pe.Hint)
		}
		// the victim's transaction is aborted, releasing its locks
		if i == 0 {
			victim := s2
			if strings.Contains(detail, "Process "+itoa(p1)+" waits") && strings.Index(detail, "Process "+itoa(p1)) == 0 {
				victim = s1
			}
			_, _ = victim.Exec(ctx, "rollback")
		}
	}
	if deadlocks != 1 || ok != 1 {
		t.Fatalf("deadlocks=%d ok=%d", deadlocks, ok)
	}
	if elapsed := time.Since(start); elapsed >= time.Second {
		t.Fatalf("deadlock took %v to detect; the sessions' deadlock_timeout is 100ms", elapsed)
	}
	for _, want := range []string{
		"Process " + itoa(p1) + " waits for ExclusiveLock on advisory lock [5,0,2,1]; blocked by process " + itoa(p2) + ".",
		"Process " + itoa(p2) + " waits for ExclusiveLock on advisory lock [5,0,1,1]; blocked by process " + itoa(p1) + ".",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail %q lacks %q", detail, want)
		}
	}
}

func TestKilledClientReleasesLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	observer := inst.Connect(t)
	// a raw pgconn whose socket we close without Terminate
	var raw net.Conn
	cfg, _ := pgconn.ParseConfig(inst.ConnString())
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		raw = c
		return c, err
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, "begin; select pg_advisory_lock(77); select pg_advisory_xact_lock(78)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	start := time.Now()
	waitFor(t, "locks freed", func() bool {
		var n int
		err := observer.QueryRow(ctx, "select count(*) from pg_locks where locktype = 'advisory'").Scan(&n)
		return err == nil && n == 0
	})
	if d := time.Since(start); d > time.Second {
		t.Errorf("locks freed after %v, want within a second", d)
	}
	var got bool
	if err := observer.QueryRow(ctx, "select pg_try_advisory_lock(77)").Scan(&got); err != nil || !got {
		t.Fatalf("lock 77 not free: %v %v", got, err)
	}
}

func TestTerminateWaiter(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	holder, waiter, admin := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	wpid := backendPID(t, waiter)
	if _, err := holder.Exec(ctx, "select pg_advisory_lock(3)"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := waiter.Exec(ctx, "select pg_advisory_lock(3)"); done <- err }()
	waitFor(t, "waiter queued", func() bool {
		var n int
		return admin.QueryRow(ctx, "select count(*) from pg_locks where not granted").Scan(&n) == nil && n == 1
	})
	var ok bool
	if err := admin.QueryRow(ctx, "select pg_terminate_backend($1)", wpid).Scan(&ok); err != nil || !ok {
		t.Fatal(ok, err)
	}
	err := <-done
	if pe, isPg := err.(*pgconn.PgError); err == nil || (isPg && pe.Code != "57P01") {
		t.Fatalf("waiter got %v", err)
	}
	waitFor(t, "waiter gone from pg_locks", func() bool {
		var n int
		return admin.QueryRow(ctx, "select count(*) from pg_locks where pid = $1", wpid).Scan(&n) == nil && n == 0
	})
	// the holder still holds its lock and the server carries on
	var n int
	if err := admin.QueryRow(ctx, "select count(*) from pg_locks where locktype = 'advisory' and granted").Scan(&n); err != nil || n != 1 {
		t.Fatal(n, err)
	}
}
