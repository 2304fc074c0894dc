package server_test

import (
	"context"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// The row-lock conflict table of PostgreSQL's documentation ("Conflicting
// Row-Level Locks"), as SELECT ... NOWAIT sees it.
func TestSelectForUpdateConflicts(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	mustExec(t, a, "create table rlk (id int primary key, v text)")
	mustExec(t, a, "insert into rlk values (1, 'a'), (2, 'b')")
	modes := []string{"update", "no key update", "share", "key share"}
	conflicts := map[[2]string]bool{}
	for _, held := range modes {
		for _, want := range modes {
			c := true
			switch {
			case held == "key share":
				c = want == "update"
			case held == "share":
				c = want == "update" || want == "no key update"
			case held == "no key update":
				c = want != "key share"
			}
			conflicts[[2]string{held, want}] = c
		}
	}
	ctx := context.Background()
	for _, held := range modes {
		mustExec(t, a, "begin")
		mustExec(t, a, "select * from rlk where id = 1 for "+held)
		for _, want := range modes {
			_, err := b.Exec(ctx, "select * from rlk where id = 1 for "+want+" nowait")
			if conflicts[[2]string{held, want}] {
				pe := pgErr(t, err)
				if pe.Code != "55P03" || pe.Message != `could not obtain lock on row in relation "rlk"` {
					t.Errorf("FOR %s held, FOR %s NOWAIT: %s %q", held, want, pe.Code, pe.Message)
				}
			} else if err != nil {
				t.Errorf("FOR %s held, FOR %s NOWAIT: %v, want the row", held, want, err)
			}
		}
		// SKIP LOCKED passes over the row held, whatever the strengths
		if got := queryText(t, b, "select id from rlk order by id for update skip locked"); got != "2" {
			t.Errorf("FOR %s held, SKIP LOCKED: %q, want 2", held, got)
		}
		mustExec(t, a, "commit")
	}
	// a key-column UPDATE conflicts with FOR KEY SHARE, a plain one not
	mustExec(t, a, "begin")
	mustExec(t, a, "select * from rlk where id = 1 for key share")
	mustExec(t, b, "set lock_timeout = '100ms'")
	mustExec(t, b, "update rlk set v = 'x' where id = 1")
	_, err := b.Exec(ctx, "update rlk set id = 10 where id = 1")
	if pe := pgErr(t, err); pe.Code != "55P03" || pe.Message != "canceling statement due to lock timeout" {
		t.Errorf("key update against FOR KEY SHARE: %s %q", pe.Code, pe.Message)
	}
	mustExec(t, a, "commit")
}

// A SELECT ... FOR UPDATE that waits shows the waits PostgreSQL shows and,
// when the row it waited for was updated, returns the new version if it
// still qualifies (EvalPlanQual) and nothing if it does not.
func TestSelectForUpdateWaits(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	ctx := context.Background()
	mustExec(t, a, "create table rl (id int primary key, v text)")
	// TRUNCATE gives rl a new file: tuple locks still name the table
	mustExec(t, a, "truncate rl")
	mustExec(t, a, "insert into rl values (1, 'a'), (2, 'b')")

	run := func(sql string) chan string {
		ch := make(chan string, 1)
		go func() {
			rs, err := b.PgConn().Exec(ctx, sql).ReadAll()
			if err != nil {
				ch <- "error: " + err.Error()
				return
			}
			out := ""
			for _, r := range rs[len(rs)-1].Rows {
				for i, v := range r {
					if i > 0 {
						out += ","
					}
					out += string(v)
				}
				out += "|"
			}
			ch <- out
		}()
		return ch
	}
	bpid := queryText(t, b, "select pg_backend_pid()")

	mustExec(t, a, "begin")
	mustExec(t, a, "update rl set v = 'a2' where id = 1")
	mustExec(t, b, "begin")
	got := run("select * from rl where id = 1 for update")
	waitFor(t, "the FOR UPDATE to wait", func() bool {
		return queryText(t, obs, "select count(*) from pg_locks where pid = "+bpid+" and not granted") == "1"
	})
	// the waiter holds the tuple lock and waits for the updater's xid; it
	// takes an xid of its own only when it locks the row, as in PostgreSQL
	if w := queryText(t, obs, "select locktype, mode, granted from pg_locks where pid = "+bpid+
		" and locktype in ('tuple', 'transactionid') order by locktype, granted, mode"); w != "transactionid,ShareLock,f|tuple,AccessExclusiveLock,t" {
		t.Errorf("waiter's locks: %s", w)
	}
	if r := queryText(t, obs, "select relation::regclass, page, tuple from pg_locks where pid = "+bpid+" and locktype = 'tuple'"); r != "rl,0,1" {
		t.Errorf("tuple lock: %s, want rl's (0,1)", r)
	}
	if r := queryText(t, obs, "select mode from pg_locks where pid = "+bpid+" and locktype = 'relation' and relation = 'rl'::regclass"); r != "RowShareLock" {
		t.Errorf("relation lock of SELECT FOR UPDATE: %s", r)
	}
	mustExec(t, a, "commit")
	select {
	case r := <-got:
		if r != "1,a2|" {
			t.Errorf("FOR UPDATE after the update committed: %q, want the new version", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("FOR UPDATE still waits after the commit")
	}
	mustExec(t, b, "commit")

	// the newer version no longer qualifies: no row
	mustExec(t, a, "begin")
	mustExec(t, a, "update rl set v = 'z' where id = 2")
	mustExec(t, b, "begin")
	got = run("select * from rl where v = 'b' for update")
	waitFor(t, "the FOR UPDATE to wait", func() bool {
		return queryText(t, obs, "select count(*) from pg_locks where pid = "+bpid+" and not granted") == "1"
	})
	mustExec(t, a, "commit")
	if r := <-got; r != "" {
		t.Errorf("FOR UPDATE of a row that stopped qualifying: %q, want none", r)
	}
	mustExec(t, b, "rollback")

	// REPEATABLE READ: 40001
	mustExec(t, b, "begin isolation level repeatable read")
	mustExec(t, b, "select 1")
	mustExec(t, a, "update rl set v = 'y' where id = 1")
	_, err := b.Exec(ctx, "select * from rl where id = 1 for share")
	if pe := pgErr(t, err); pe.Code != "40001" || pe.Message != "could not serialize access due to concurrent update" {
		t.Errorf("FOR SHARE under REPEATABLE READ after a concurrent update: %s %q", pe.Code, pe.Message)
	}
	mustExec(t, b, "rollback")
}

// OFFSET rows are locked, LIMIT stops the locking, errors match
// PostgreSQL's.
func TestSelectForUpdateClauses(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	ctx := context.Background()
	mustExec(t, a, "create table rl (id int primary key, v text)")
	mustExec(t, a, "insert into rl values (1, 'a'), (2, 'b'), (3, 'c')")
	mustExec(t, a, "begin")
	if got := queryText(t, a, "select id from rl order by id limit 1 offset 1 for update"); got != "2" {
		t.Fatalf("LIMIT 1 OFFSET 1 FOR UPDATE: %q", got)
	}
	if got := queryText(t, b, "select id from rl order by id for update skip locked"); got != "3" {
		t.Errorf("after LIMIT 1 OFFSET 1 FOR UPDATE the free rows are %q, want 3 (the offset row is locked too)", got)
	}
	mustExec(t, a, "rollback")
	for _, c := range []struct{ sql, code, msg string }{
		{"select count(*) from rl for update", "0A000", "FOR UPDATE is not allowed with aggregate functions"},
		{"select distinct v from rl for share", "0A000", "FOR SHARE is not allowed with DISTINCT clause"},
		{"select v from rl group by v for update", "0A000", "FOR UPDATE is not allowed with GROUP BY clause"},
		{"select id from rl union select id from rl for key share", "0A000", "FOR KEY SHARE is not allowed with UNION/INTERSECT/EXCEPT"},
		{"select * from rl r left join rl s on s.id = r.id for update", "0A000", "FOR UPDATE cannot be applied to the nullable side of an outer join"},
		{"select * from rl r for update of rl", "42P01", `relation "rl" in FOR UPDATE clause not found in FROM clause`},
		{"select * from (select count(*) from rl) s for update", "0A000", "FOR UPDATE is not allowed with aggregate functions"},
	} {
		_, err := a.Exec(ctx, c.sql)
		if pe := pgErr(t, err); pe.Code != c.code || pe.Message != c.msg {
			t.Errorf("%s: %s %q, want %s %q", c.sql, pe.Code, pe.Message, c.code, c.msg)
		}
	}
	// a subquery in FROM inherits the clause: its table's rows are locked
	mustExec(t, a, "begin")
	if got := queryText(t, a, "select * from (select * from rl where id = 3) s for update"); got != "3,c" {
		t.Fatalf("FOR UPDATE through a subquery: %q", got)
	}
	_, err := b.Exec(ctx, "select * from rl where id = 3 for update nowait")
	if pe := pgErr(t, err); pe.Code != "55P03" {
		t.Errorf("row locked through a subquery: %v", err)
	}
	mustExec(t, a, "rollback")
}

// An error in a transaction block ends the transaction's hold on
// everything at once, as PostgreSQL's AbortTransaction does: another
// session waiting for its row goes on before the ROLLBACK, and pg_locks
// shows nothing for the failed session until the block ends.
func TestFailedBlockReleasesLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	ctx := context.Background()
	mustExec(t, a, "create table fb (id int primary key, v int)")
	mustExec(t, a, "insert into fb values (1, 0)")
	apid := queryText(t, a, "select pg_backend_pid()")
	mustExec(t, a, "begin")
	mustExec(t, a, "update fb set v = 1 where id = 1")
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "update fb set v = v + 10 where id = 1")
		done <- err
	}()
	waitFor(t, "the second update to wait", func() bool {
		return queryText(t, obs, "select count(*) from pg_locks where not granted") == "1"
	})
	if _, err := a.Exec(ctx, "select 1/0"); pgErr(t, err).Code != "22012" {
		t.Fatalf("1/0: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("waiting update: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting update still waits while the other session is in a failed block")
	}
	if n := queryText(t, obs, "select count(*) from pg_locks where pid = "+apid); n != "0" {
		t.Errorf("a session in a failed block holds %s locks, want 0", n)
	}
	if _, err := a.Exec(ctx, "select 1"); pgErr(t, err).Code != "25P02" {
		t.Errorf("in the failed block: %v", err)
	}
	mustExec(t, a, "rollback")
	if got := queryText(t, obs, "select v from fb"); got != "10" {
		t.Errorf("v = %s, want 10 (the failed transaction's update rolled back)", got)
	}
}
