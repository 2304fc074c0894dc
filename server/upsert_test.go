package server_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// upsertWorkers runs fn in n goroutines, each with its own connection
// (every other one on the simple protocol), and fails on any error.
func upsertWorkers(t *testing.T, inst *lockdtest.Instance, n int, fn func(w int, c *pgx.Conn) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := 0; w < n; w++ {
		cfg, err := pgx.ParseConfig(inst.ConnString())
		if err != nil {
			t.Fatal(err)
		}
		if w%2 == 1 {
			cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		}
		c, err := pgx.ConnectConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(context.Background())
			if err := fn(w, c); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Eight sessions racing ON CONFLICT DO UPDATE increments on a few keys
// lose no update and never see 23505; racing DO NOTHING inserts leave one
// row per key, each inserted by exactly one statement.
func TestUpsertRaces(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table ctr (k int primary key, n int not null)")
	const workers, each, keys = 8, 60, 4
	upsertWorkers(t, inst, workers, func(w int, c *pgx.Conn) error {
		for i := 0; i < each; i++ {
			k := (w + i) % keys
			if _, err := c.Exec(context.Background(), "insert into ctr values ($1, 1) on conflict (k) do update set n = ctr.n + 1", k); err != nil {
				return err
			}
		}
		return nil
	})
	want := make([]string, keys)
	for k := range want {
		want[k] = fmt.Sprintf("%d,%d", k, workers*each/keys)
	}
	if got := queryText(t, c, "select k, n from ctr order by k"); got != strings.Join(want, "|") {
		t.Errorf("counts: %s, want %s", got, strings.Join(want, "|"))
	}

	mustExec(t, c, "create table once (k int primary key, w int)")
	const nkeys = 150
	var mu sync.Mutex
	inserted := 0
	upsertWorkers(t, inst, workers, func(w int, c *pgx.Conn) error {
		for k := 0; k < nkeys; k++ {
			tag, err := c.Exec(context.Background(), "insert into once values ($1, $2) on conflict do nothing", k, w)
			if err != nil {
				return err
			}
			mu.Lock()
			inserted += int(tag.RowsAffected())
			mu.Unlock()
		}
		return nil
	})
	if got := queryText(t, c, "select count(*), count(distinct k) from once"); got != fmt.Sprintf("%d,%d", nkeys, nkeys) {
		t.Errorf("rows, keys: %s, want %d of each", got, nkeys)
	}
	if inserted != nkeys {
		t.Errorf("statements that inserted: %d, want %d", inserted, nkeys)
	}
}

// runAsyncRows runs sql on c in a goroutine; the channel gets its last
// result's rows ("a,b|c,d"), tag after a space, or "error: ...".
func runAsyncRows(c *pgx.Conn, sql string) chan string {
	ch := make(chan string, 1)
	go func() {
		rs, err := c.PgConn().Exec(context.Background(), sql).ReadAll()
		if err != nil {
			ch <- "error: " + err.Error()
			return
		}
		last := rs[len(rs)-1]
		var rows []string
		for _, r := range last.Rows {
			var f []string
			for _, v := range r {
				f = append(f, string(v))
			}
			rows = append(rows, strings.Join(f, ","))
		}
		ch <- strings.Join(rows, "|") + " " + last.CommandTag.String()
	}()
	return ch
}

func result(t *testing.T, ch chan string) string {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("statement still waits")
	}
	return ""
}

// An upsert that meets a row another transaction inserted waits for that
// transaction (pg_locks: ShareLock on its transactionid, not granted), then
// skips the row or updates it if the inserter committed, and inserts if it
// rolled back; one that meets a row locked FOR UPDATE waits holding the
// tuple lock, as PostgreSQL's do.
func TestUpsertWaits(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	mustExec(t, a, "create table kv (k int primary key, v int)")
	bpid := queryText(t, b, "select pg_backend_pid()")
	waiting := func(what string) string {
		waitFor(t, what, func() bool {
			return queryText(t, obs, "select count(*) from pg_locks where pid = "+bpid+" and not granted") == "1"
		})
		return queryText(t, obs, "select locktype, mode, granted from pg_locks where pid = "+bpid+
			" and locktype in ('tuple', 'transactionid', 'spectoken') order by locktype, granted, mode")
	}
	for _, c := range []struct {
		name, upsert, end, want string
	}{
		{"do nothing, commit", "insert into kv values (1, 10) on conflict (k) do nothing returning *", "commit", " INSERT 0 0"},
		{"do update, commit", "insert into kv values (2, 10) on conflict (k) do update set v = kv.v + excluded.v returning *", "commit", "2,11 INSERT 0 1"},
		{"do nothing, rollback", "insert into kv values (3, 10) on conflict do nothing returning *", "rollback", "3,10 INSERT 0 1"},
		{"do update, rollback", "insert into kv values (4, 10) on conflict (k) do update set v = 0 returning *", "rollback", "4,10 INSERT 0 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := strings.TrimPrefix(c.upsert, "insert into kv values (")[:1]
			mustExec(t, a, "begin")
			mustExec(t, a, "insert into kv values ("+k+", 1)")
			axid := queryText(t, a, "select transactionid from pg_locks where pid = pg_backend_pid() and locktype = 'transactionid'")
			got := runAsyncRows(b, c.upsert)
			if w := waiting("the upsert to wait"); w != "transactionid,ShareLock,f" {
				t.Errorf("waiter's locks: %s", w)
			}
			if x := queryText(t, obs, "select transactionid from pg_locks where pid = "+bpid+" and not granted"); x != axid {
				t.Errorf("waits for xid %s, the inserter is %s", x, axid)
			}
			mustExec(t, a, c.end)
			if r := result(t, got); r != c.want {
				t.Errorf("after %s: %q, want %q", c.end, r, c.want)
			}
		})
	}

	// a row locked FOR UPDATE: the tuple lock (ExclusiveLock: FOR NO KEY
	// UPDATE strength) and a wait for the locker; no xid of its own yet
	mustExec(t, a, "begin")
	mustExec(t, a, "select * from kv where k = 1 for update")
	got := runAsyncRows(b, "insert into kv values (1, 5) on conflict (k) do update set v = kv.v + 1 returning v")
	if w := waiting("the DO UPDATE to wait"); w != "transactionid,ShareLock,f|tuple,ExclusiveLock,t" {
		t.Errorf("DO UPDATE waiting for a FOR UPDATE lock holds %s", w)
	}
	mustExec(t, a, "commit")
	if r := result(t, got); r != "2 INSERT 0 1" {
		t.Errorf("DO UPDATE after the lock went: %q", r)
	}
	// SET of a key column: FOR UPDATE strength
	mustExec(t, a, "begin")
	mustExec(t, a, "select * from kv where k = 1 for key share")
	got = runAsyncRows(b, "insert into kv values (1, 5) on conflict (k) do update set k = 100 returning k")
	if w := waiting("the key DO UPDATE to wait"); w != "transactionid,ShareLock,f|tuple,AccessExclusiveLock,t" {
		t.Errorf("key DO UPDATE waiting for FOR KEY SHARE holds %s", w)
	}
	mustExec(t, a, "commit")
	if r := result(t, got); r != "100 INSERT 0 1" {
		t.Errorf("key DO UPDATE: %q", r)
	}
	// a row updated by a running DO UPDATE: the next one waits for it in
	// the pre-check and then updates the newest version
	mustExec(t, a, "begin")
	mustExec(t, a, "insert into kv values (2, 1) on conflict (k) do update set v = kv.v + 1")
	got = runAsyncRows(b, "insert into kv values (2, 1) on conflict (k) do update set v = kv.v + 1 returning v")
	if w := waiting("the second DO UPDATE to wait"); w != "transactionid,ShareLock,f" {
		t.Errorf("DO UPDATE behind DO UPDATE holds %s", w)
	}
	mustExec(t, a, "commit")
	if r := result(t, got); r != "13 INSERT 0 1" {
		t.Errorf("DO UPDATE after DO UPDATE: %q", r)
	}
}

// Under REPEATABLE READ a conflict with a row the snapshot does not see
// is 40001, for DO NOTHING and DO UPDATE, and so is a row updated since.
func TestUpsertRepeatableRead(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	ctx := context.Background()
	mustExec(t, a, "create table kv (k int primary key, v int)")
	mustExec(t, a, "insert into kv values (1, 1)")
	for _, c := range []struct{ setup, upsert string }{
		{"insert into kv values (2, 1)", "insert into kv values (2, 5) on conflict do nothing"},
		{"insert into kv values (3, 1)", "insert into kv values (3, 5) on conflict (k) do update set v = excluded.v"},
		{"update kv set v = 2 where k = 1", "insert into kv values (1, 5) on conflict (k) do update set v = excluded.v"},
	} {
		mustExec(t, b, "begin isolation level repeatable read")
		mustExec(t, b, "select 1")
		mustExec(t, a, c.setup)
		_, err := b.Exec(ctx, c.upsert)
		if pe := pgErr(t, err); pe.Code != "40001" || pe.Message != "could not serialize access due to concurrent update" {
			t.Errorf("%s after %s: %s %q", c.upsert, c.setup, pe.Code, pe.Message)
		}
		mustExec(t, b, "rollback")
	}
	// its own rows are no conflict of that kind
	mustExec(t, b, "begin isolation level repeatable read")
	mustExec(t, b, "insert into kv values (9, 1)")
	mustExec(t, b, "insert into kv values (9, 1) on conflict (k) do update set v = kv.v + 1")
	if got := queryText(t, b, "select v from kv where k = 9"); got != "2" {
		t.Errorf("own row updated: v = %s", got)
	}
	mustExec(t, b, "commit")
}

// UPDATE ... FROM and DELETE ... USING wait for a row being changed and,
// under READ COMMITTED, re-check the newest version against the same rows
// of the other table (EvalPlanQual); REPEATABLE READ gives 40001.
func TestUpdateFromConcurrent(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	ctx := context.Background()
	mustExec(t, a, "create table acc (id int primary key, bal int)")
	mustExec(t, a, "create table pay (id int, amount int)")
	mustExec(t, a, "insert into acc values (1, 100), (2, 200)")
	mustExec(t, a, "insert into pay values (1, 5), (2, 7)")

	mustExec(t, a, "begin")
	mustExec(t, a, "update acc set bal = bal + 1 where id = 1")
	got := runAsyncRows(b, "update acc set bal = acc.bal + pay.amount from pay where pay.id = acc.id returning acc.id, acc.bal")
	waitFor(t, "UPDATE ... FROM to wait", func() bool {
		return queryText(t, a, "select count(*) from pg_locks where locktype = 'transactionid' and not granted") == "1"
	})
	mustExec(t, a, "commit")
	if r := result(t, got); r != "2,207|1,106 UPDATE 2" && r != "1,106|2,207 UPDATE 2" {
		t.Errorf("UPDATE ... FROM after a concurrent update: %q", r)
	}

	// the newest version no longer qualifies
	mustExec(t, a, "begin")
	mustExec(t, a, "update acc set bal = 0 where id = 1")
	got = runAsyncRows(b, "delete from acc using pay where pay.id = acc.id and acc.bal > 100 returning acc.id")
	waitFor(t, "DELETE ... USING to wait", func() bool {
		return queryText(t, a, "select count(*) from pg_locks where locktype = 'transactionid' and not granted") == "1"
	})
	mustExec(t, a, "commit")
	if r := result(t, got); r != "2 DELETE 1" {
		t.Errorf("DELETE ... USING after the row stopped qualifying: %q", r)
	}

	mustExec(t, b, "begin isolation level repeatable read")
	mustExec(t, b, "select 1")
	mustExec(t, a, "update acc set bal = 50 where id = 1")
	_, err := b.Exec(ctx, "update acc set bal = pay.amount from pay where pay.id = acc.id")
	if pe := pgErr(t, err); pe.Code != "40001" || pe.Message != "could not serialize access due to concurrent update" {
		t.Errorf("REPEATABLE READ UPDATE ... FROM: %s %q", pe.Code, pe.Message)
	}
	mustExec(t, b, "rollback")
}

// INSERT and COPY keep only the table's lock after the statement, as
// PostgreSQL's executor releases the index locks it took to insert
// (ExecCloseIndices); COPY TO locks no index at all.
func TestInsertCopyIndexLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	mustExec(t, c, "create table r (id int primary key, v int)")
	mustExec(t, c, "create index r_v on r (v)")
	held := "select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' order by relation::regclass::text"
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"r"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{1, 1}, {2, 2}})); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "insert into r values (3, 3)"); err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, c, held); got != "r,RowExclusiveLock" {
		t.Errorf("after COPY FROM and INSERT: %s", got)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "begin")
	if _, err := c.PgConn().CopyTo(ctx, io.Discard, "copy r to stdout"); err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, c, held); got != "r,AccessShareLock" {
		t.Errorf("after COPY TO: %s", got)
	}
	mustExec(t, c, "rollback")
}
