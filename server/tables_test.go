package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

func TestTableBasics(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int primary key, name text not null, v int default 7, c char(3), f float8, n numeric, ts timestamp)")
	mustExec(t, c, "insert into t (id, name) values (1, 'one'), (2, 'two')")
	mustExec(t, c, "insert into t values (3, 'three', 30, 'ab', 1.5, 2.25, '2024-01-02 03:04:05')")
	if got := queryText(t, c, "select id, name, v, c, f, n, ts from t order by id"); got != "1,one,7,NULL,NULL,NULL,NULL|2,two,7,NULL,NULL,NULL,NULL|3,three,30,ab ,1.5,2.25,2024-01-02 03:04:05" {
		t.Fatalf("select: %s", got)
	}
	if got := queryText(t, c, "select count(*), sum(v), avg(id), max(name) from t"); got != "3,44,2.0000000000000000,two" {
		t.Fatalf("aggregates: %s", got)
	}
	mustExec(t, c, "update t set v = v + 1 where id = 1")
	mustExec(t, c, "update t set v = v * 2 where v > 7")
	if got := queryText(t, c, "select id, v from t order by id"); got != "1,16|2,7|3,60" {
		t.Fatalf("after update: %s", got)
	}
	mustExec(t, c, "delete from t where id = 2")
	if got := queryText(t, c, "select id from t where id = 2"); got != "" {
		t.Fatalf("deleted row visible: %s", got)
	}
	// constraints
	_, err := c.Exec(context.Background(), "insert into t (id, name) values (1, 'dup')")
	pe := pgErr(t, err)
	if pe.Code != "23505" || pe.Message != `duplicate key value violates unique constraint "t_pkey"` || pe.Detail != "Key (id)=(1) already exists." {
		t.Fatalf("unique: %s %q %q", pe.Code, pe.Message, pe.Detail)
	}
	_, err = c.Exec(context.Background(), "insert into t (id) values (9)")
	pe = pgErr(t, err)
	if pe.Code != "23502" || pe.Message != `null value in column "name" of relation "t" violates not-null constraint` {
		t.Fatalf("not null: %s %q", pe.Code, pe.Message)
	}
	_, err = c.Exec(context.Background(), "insert into t (id, name, c) values (10, 'x', 'abcd')")
	if pe = pgErr(t, err); pe.Code != "22001" {
		t.Fatalf("char(3): %v", err)
	}
	// extended protocol with parameters typed from columns
	var v int32
	if err := c.QueryRow(context.Background(), "select v from t where id = $1", 3).Scan(&v); err != nil || v != 60 {
		t.Fatalf("param select: %v %v", v, err)
	}
	mustExec(t, c, "update t set v = v + $1 where id = $2", 5, 3)
	if got := queryText(t, c, "select v from t where id = 3"); got != "65" {
		t.Fatalf("param update: %s", got)
	}
	// drop and errors
	mustExec(t, c, "drop table t")
	_, err = c.Exec(context.Background(), "select * from t")
	if pe = pgErr(t, err); pe.Code != "42P01" {
		t.Fatalf("dropped: %v", err)
	}
}

func TestTransactionsAndVisibility(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	mustExec(t, a, "create table acc (id int primary key, bal int)")
	mustExec(t, a, "insert into acc values (1, 100), (2, 100)")
	mustExec(t, a, "begin")
	mustExec(t, a, "update acc set bal = bal - 10 where id = 1")
	mustExec(t, a, "insert into acc values (3, 5)")
	if got := queryText(t, a, "select id, bal from acc order by id"); got != "1,90|2,100|3,5" {
		t.Fatalf("own changes: %s", got)
	}
	if got := queryText(t, b, "select id, bal from acc order by id"); got != "1,100|2,100" {
		t.Fatalf("others see uncommitted: %s", got)
	}
	mustExec(t, a, "rollback")
	if got := queryText(t, b, "select id, bal from acc order by id"); got != "1,100|2,100" {
		t.Fatalf("after rollback: %s", got)
	}
	// a concurrent update waits on the first transaction's xid, then
	// re-reads the committed row (READ COMMITTED)
	mustExec(t, a, "begin")
	mustExec(t, a, "update acc set bal = bal + 1 where id = 1")
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(context.Background(), "update acc set bal = bal * 2 where id = 1")
		done <- err
	}()
	obs := inst.Connect(t)
	waitFor(t, "transactionid wait", func() bool {
		return queryText(t, obs, "select count(*) from pg_locks where locktype = 'transactionid' and not granted") == "1" &&
			queryText(t, obs, "select count(*) from pg_stat_activity where wait_event = 'transactionid'") == "1"
	})
	mustExec(t, a, "commit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, a, "select bal from acc where id = 1"); got != "202" {
		t.Fatalf("lost update: %s", got)
	}
	if got := queryText(t, obs, "select count(*) from pg_locks where locktype <> 'virtualxid'"); got != "0" {
		t.Fatalf("locks left: %s", got)
	}
	// repeatable read raises 40001 on a concurrent update
	mustExec(t, a, "begin isolation level repeatable read")
	if got := queryText(t, a, "select bal from acc where id = 2"); got != "100" {
		t.Fatal(got)
	}
	mustExec(t, b, "update acc set bal = 0 where id = 2")
	if got := queryText(t, a, "select bal from acc where id = 2"); got != "100" {
		t.Fatalf("repeatable read saw a later commit: %s", got)
	}
	_, err := a.Exec(context.Background(), "update acc set bal = 1 where id = 2")
	if pe := pgErr(t, err); pe.Code != "40001" || pe.Message != "could not serialize access due to concurrent update" {
		t.Fatalf("got %v", err)
	}
	mustExec(t, a, "rollback")
}

func TestRelationLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	mustExec(t, a, "create table r (id int primary key)")
	mustExec(t, a, "begin")
	mustExec(t, a, "select * from r")
	got := queryText(t, a, "select c.mode, c.fastpath from pg_locks c where c.locktype = 'relation' and c.pid = pg_backend_pid() order by relation")
	if got != "AccessShareLock,t|AccessShareLock,t" {
		t.Fatalf("select locks: %s", got)
	}
	mustExec(t, a, "insert into r values (1)")
	mustExec(t, a, "commit")
	mustExec(t, a, "begin")
	mustExec(t, a, "lock table r in access exclusive mode")
	_, err := b.Exec(context.Background(), "lock table r in share mode nowait")
	if err == nil {
		t.Fatal("nowait succeeded")
	}
	// LOCK outside a block
	mustExec(t, a, "commit")
	_, err = b.Exec(context.Background(), "lock table r")
	if pe := pgErr(t, err); pe.Code != "25P01" {
		t.Fatalf("lock outside block: %v", err)
	}
	mustExec(t, b, "begin")
	_, err = b.Exec(context.Background(), "lock table r in share mode nowait")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, b, "rollback")
}

func TestCopyTruncateVacuumRestart(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	mustExec(t, c, "create table ac (aid int not null, bid int, abalance int, filler char(84)) with (fillfactor=100)")
	var sb strings.Builder
	for i := 1; i <= 5000; i++ {
		sb.WriteString(itoa(int32(i)) + "\t1\t0\t\n")
	}
	sb.WriteString("\\.\n")
	mustExec(t, c, "begin")
	mustExec(t, c, "truncate table ac")
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(sb.String()), "copy ac from stdin with (freeze on)")
	if err != nil || tag.String() != "COPY 5000" {
		t.Fatalf("copy: %v %v", tag, err)
	}
	mustExec(t, c, "commit")
	mustExec(t, c, "vacuum analyze ac")
	mustExec(t, c, "alter table ac add primary key (aid)")
	if got := queryText(t, c, "select count(*), sum(aid), max(length(filler)) from ac"); got != "5000,12502500,0" {
		t.Fatalf("after copy: %s", got)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("1\t2\n"), "copy ac from stdin")
	if pe := pgErr(t, err); pe.Code != "22P04" {
		t.Fatalf("short row: %v", err)
	}
	// rows and sizes survive a restart
	size := queryText(t, c, "select pg_relation_size('ac')")
	mustExec(t, c, "update ac set abalance = 5 where aid = 77")
	inst.Restart(t)
	c = inst.Connect(t)
	if got := queryText(t, c, "select count(*), sum(abalance) from ac"); got != "5000,5" {
		t.Fatalf("after restart: %s", got)
	}
	if got := queryText(t, c, "select abalance from ac where aid = 77"); got != "5" {
		t.Fatalf("index after restart: %s", got)
	}
	if got := queryText(t, c, "select pg_relation_size('ac')"); got != size {
		t.Fatalf("size %s after restart, was %s", got, size)
	}
	_, err = c.Exec(ctx, "insert into ac values (77, 1, 0, '')")
	if pe := pgErr(t, err); pe.Code != "23505" {
		t.Fatalf("pk after restart: %v", err)
	}
	// truncate in a rolled-back transaction keeps the rows
	mustExec(t, c, "begin")
	mustExec(t, c, "truncate ac")
	mustExec(t, c, "rollback")
	if got := queryText(t, c, "select count(*) from ac"); got != "5000" {
		t.Fatalf("rolled-back truncate: %s", got)
	}
}

func TestConcurrentIncrements(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table ctr (id int primary key, n int)")
	mustExec(t, c, "insert into ctr values (1, 0)")
	const workers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(context.Background(), inst.ConnString())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close(context.Background())
			for i := 0; i < each; i++ {
				if _, err := conn.Exec(context.Background(), "update ctr set n = n + 1 where id = 1"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := queryText(t, c, "select n from ctr"); got != itoa(workers*each) {
		t.Fatalf("n = %s, want %d", got, workers*each)
	}
}

func TestFastPathSlotsReload(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table fp (id int primary key)")
	relLocks := func(conn *pgx.Conn) string {
		mustExec(t, conn, "begin")
		mustExec(t, conn, "select * from fp")
		got := queryText(t, conn, "select mode, fastpath from pg_locks where locktype = 'relation' and pid = pg_backend_pid() order by relation")
		mustExec(t, conn, "commit")
		return got
	}
	if got := relLocks(c); got != "AccessShareLock,t|AccessShareLock,t" {
		t.Fatalf("default slots: %s", got)
	}
	mustExec(t, c, "alter system set fastpath_lock_slots = 0")
	if got := queryText(t, c, "select pg_reload_conf()"); got != "t" {
		t.Fatal(got)
	}
	// the running session keeps its slots; a new one has none
	if got := relLocks(c); got != "AccessShareLock,t|AccessShareLock,t" {
		t.Fatalf("old session after reload: %s", got)
	}
	if got := relLocks(inst.Connect(t)); got != "AccessShareLock,f|AccessShareLock,f" {
		t.Fatalf("new session after reload: %s", got)
	}
}

func TestCreateAndDropIndex(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	mustExec(t, c, "create table ix (id int primary key, email text, grp int)")
	mustExec(t, c, "insert into ix select g, 'u' || g, g % 3 from generate_series(1, 30) g")
	mustExec(t, c, "create unique index on ix (email)")
	mustExec(t, c, "create index ix_grp on ix (grp)")
	_, err := c.Exec(ctx, "insert into ix values (31, 'u5', 0)")
	if pe := pgErr(t, err); pe.Code != "23505" || pe.Message != `duplicate key value violates unique constraint "ix_email_idx"` {
		t.Fatalf("unique index: %v", err)
	}
	if got := queryText(t, c, "select count(*) from ix where grp = 1"); got != "10" {
		t.Fatalf("lookup by a non-unique index: %s", got)
	}
	mustExec(t, c, "update ix set grp = 7 where id = 4")
	if got := queryText(t, c, "select id from ix where grp = 7"); got != "4" {
		t.Fatalf("after update: %s", got)
	}
	mustExec(t, c, "insert into ix values (32, 'dup', 0), (33, 'dup2', 0)")
	_, err = c.Exec(ctx, "create unique index on ix (grp)")
	if pe := pgErr(t, err); pe.Code != "23505" || pe.Message != `could not create unique index "ix_grp_idx"` {
		t.Fatalf("unique over duplicates: %v", err)
	}
	// CREATE INDEX takes ShareLock: readers go on, writers wait
	mustExec(t, c, "begin")
	mustExec(t, c, "create index ix_email2 on ix (email)")
	other := inst.Connect(t)
	mustExec(t, other, "set lock_timeout = '100ms'")
	if got := queryText(t, other, "select count(*) from ix"); got != "32" {
		t.Fatalf("reader during CREATE INDEX: %s", got)
	}
	_, err = other.Exec(ctx, "insert into ix values (50, 'w', 0)")
	if pe := pgErr(t, err); pe.Code != "55P03" {
		t.Fatalf("writer during CREATE INDEX: %v", err)
	}
	mustExec(t, c, "commit")
	mustExec(t, c, "drop index ix_grp")
	mustExec(t, c, "drop index if exists ix_grp")
	_, err = c.Exec(ctx, "drop index ix_pkey")
	if pe := pgErr(t, err); pe.Code != "2BP01" {
		t.Fatalf("dropping the primary key's index: %v", err)
	}
	if got := queryText(t, c, "select count(*) from ix where grp = 1"); got != "9" { // id 4 moved to grp 7
		t.Fatalf("after drop index: %s", got)
	}
	inst.Restart(t)
	c = inst.Connect(t)
	_, err = c.Exec(ctx, "insert into ix values (40, 'u6', 0)")
	if pe := pgErr(t, err); pe.Code != "23505" {
		t.Fatalf("unique index after restart: %v", err)
	}
}
