package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// execTag runs one statement and returns its command tag.
func execTag(t *testing.T, c *pgx.Conn, sql string) string {
	t.Helper()
	tag, err := c.Exec(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.String()
}

// TestSavepointRollsBackRows: inserts, updates and deletes done after a
// savepoint are undone by ROLLBACK TO, nested savepoints undo only their
// own part, RELEASE hands its work to the enclosing savepoint, and the
// innermost of two savepoints with one name is the one used.
func TestSavepointRollsBackRows(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c, other := inst.Connect(t), inst.Connect(t)
	mustExec(t, c, "create table t (id int primary key, v int)")
	mustExec(t, c, "insert into t values (1, 10), (2, 20)")
	rows := func() string { return queryText(t, c, "select id, v from t order by id") }
	steps := []struct {
		sql, tag, want string // want: rows after the statement ("" = don't check)
	}{
		{"begin", "BEGIN", ""},
		{"insert into t values (3, 30)", "INSERT 0 1", "1,10|2,20|3,30"},
		{"savepoint a", "SAVEPOINT", ""},
		{"insert into t values (4, 40)", "INSERT 0 1", ""},
		{"update t set v = v + 1 where id in (1, 3)", "UPDATE 2", ""},
		{"delete from t where id = 2", "DELETE 1", "1,11|3,31|4,40"},
		{"rollback to savepoint a", "ROLLBACK", "1,10|2,20|3,30"},
		// the savepoint survives ROLLBACK TO and can be used again
		{"insert into t values (4, 41)", "INSERT 0 1", ""},
		{"rollback to a", "ROLLBACK", "1,10|2,20|3,30"},
		// nested
		{"update t set v = 100 where id = 1", "UPDATE 1", ""},
		{"savepoint b", "SAVEPOINT", ""},
		{"update t set v = 200 where id = 1", "UPDATE 1", ""},
		{"savepoint c", "SAVEPOINT", ""},
		{"insert into t values (5, 50)", "INSERT 0 1", "1,200|2,20|3,30|5,50"},
		{"rollback to b", "ROLLBACK", "1,100|2,20|3,30"},
		{"rollback to c", "", ""}, // c went with b: 3B001, checked below
	}
	for _, st := range steps {
		if st.tag == "" {
			break
		}
		if got := execTag(t, c, st.sql); got != st.tag {
			t.Fatalf("%s: tag %q, want %q", st.sql, got, st.tag)
		}
		if st.want != "" {
			if got := rows(); got != st.want {
				t.Fatalf("after %s: rows %s, want %s", st.sql, got, st.want)
			}
		}
	}
	_, err := c.Exec(context.Background(), "rollback to c")
	if pe := pgErr(t, err); pe.Code != "3B001" || pe.Message != `savepoint "c" does not exist` {
		t.Fatalf("rollback to a destroyed savepoint: %v", err)
	}
	mustExec(t, c, "rollback to a") // out of the failed block
	if got := rows(); got != "1,10|2,20|3,30" {
		t.Fatalf("after rollback to a: %s", got)
	}

	// RELEASE then ROLLBACK TO the enclosing savepoint
	mustExec(t, c, "savepoint o1")
	mustExec(t, c, "savepoint i1")
	mustExec(t, c, "insert into t values (6, 60)")
	if got := execTag(t, c, "release savepoint i1"); got != "RELEASE" {
		t.Fatalf("release tag %q", got)
	}
	if got := rows(); got != "1,10|2,20|3,30|6,60" {
		t.Fatalf("after release: %s", got)
	}
	mustExec(t, c, "rollback to o1")
	if got := rows(); got != "1,10|2,20|3,30" {
		t.Fatalf("released work survived rollback to the enclosing savepoint: %s", got)
	}

	// repeated names: the innermost is used, RELEASE uncovers the outer one
	mustExec(t, c, "savepoint x")
	mustExec(t, c, "insert into t values (7, 70)")
	mustExec(t, c, "savepoint x")
	mustExec(t, c, "insert into t values (8, 80)")
	mustExec(t, c, "rollback to x")
	if got := rows(); got != "1,10|2,20|3,30|7,70" {
		t.Fatalf("rollback to the inner x: %s", got)
	}
	mustExec(t, c, "release x")
	mustExec(t, c, "insert into t values (9, 90)")
	mustExec(t, c, "rollback to x")
	if got := rows(); got != "1,10|2,20|3,30" {
		t.Fatalf("rollback to the outer x: %s", got)
	}

	// a key inserted and rolled back may be inserted again
	mustExec(t, c, "savepoint k")
	mustExec(t, c, "insert into t values (10, 1)")
	mustExec(t, c, "rollback to k")
	mustExec(t, c, "insert into t values (10, 2)")
	mustExec(t, c, "release k")

	if got := queryText(t, other, "select count(*) from t"); got != "2" {
		t.Fatalf("another session sees uncommitted rows: %s", got)
	}
	mustExec(t, c, "commit")
	if got := queryText(t, other, "select id, v from t order by id"); got != "1,10|2,20|3,30|10,2" {
		t.Fatalf("after commit: %s", got)
	}
}

// TestSavepointErrors: PostgreSQL's codes and messages, and the way a
// failed block is left with ROLLBACK TO.
func TestSavepointErrors(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	type step struct {
		sql, code, msg string // code "" = must succeed
		status         byte   // ReadyForQuery status afterwards
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"outside a block", []step{
			{"savepoint a", "25P01", "SAVEPOINT can only be used in transaction blocks", 'I'},
			{"release a", "25P01", "RELEASE SAVEPOINT can only be used in transaction blocks", 'I'},
			{"release savepoint a", "25P01", "RELEASE SAVEPOINT can only be used in transaction blocks", 'I'},
			{"rollback to a", "25P01", "ROLLBACK TO SAVEPOINT can only be used in transaction blocks", 'I'},
			{"rollback to savepoint a", "25P01", "ROLLBACK TO SAVEPOINT can only be used in transaction blocks", 'I'},
		}},
		{"implicit transaction", []step{
			{"select 1; savepoint a", "25P01", "SAVEPOINT can only be used in transaction blocks", 'I'},
		}},
		{"unknown names", []step{
			{"begin", "", "", 'T'},
			{"release x", "3B001", `savepoint "x" does not exist`, 'E'},
			{"rollback", "", "", 'I'},
			{"begin", "", "", 'T'},
			{"rollback to x", "3B001", `savepoint "x" does not exist`, 'E'},
			{"rollback", "", "", 'I'},
		}},
		{"released savepoint is gone", []step{
			{"begin", "", "", 'T'},
			{"savepoint a", "", "", 'T'},
			{"savepoint a", "", "", 'T'},
			{"release a", "", "", 'T'},
			{"release a", "", "", 'T'},
			{"release a", "3B001", `savepoint "a" does not exist`, 'E'},
			{"rollback", "", "", 'I'},
		}},
		{"failed block", []step{
			{"begin", "", "", 'T'},
			{"savepoint a", "", "", 'T'},
			{"select 1/0", "22012", "division by zero", 'E'},
			{"release a", "25P02", "current transaction is aborted, commands ignored until end of transaction block", 'E'},
			{"savepoint b", "25P02", "current transaction is aborted, commands ignored until end of transaction block", 'E'},
			{"rollback to x", "3B001", `savepoint "x" does not exist`, 'E'},
			{"rollback to a", "", "", 'T'},
			{"select 1", "", "", 'T'},
			{"release a", "", "", 'T'},
			{"commit", "", "", 'I'},
		}},
		{"failed outside the savepoint", []step{
			{"begin", "", "", 'T'},
			{"savepoint a", "", "", 'T'},
			{"release a", "", "", 'T'},
			{"select 1/0", "22012", "division by zero", 'E'},
			{"rollback to a", "3B001", `savepoint "a" does not exist`, 'E'},
			{"commit", "", "", 'I'},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, st := range tt.steps {
				_, err := c.PgConn().Exec(ctx, st.sql).ReadAll()
				if st.code == "" {
					if err != nil {
						t.Fatalf("%s: %v", st.sql, err)
					}
				} else if pe := pgErr(t, err); pe.Code != st.code || pe.Message != st.msg {
					t.Fatalf("%s: %s %q, want %s %q", st.sql, pe.Code, pe.Message, st.code, st.msg)
				}
				if got := c.PgConn().TxStatus(); got != st.status {
					t.Fatalf("after %s: status %c, want %c", st.sql, got, st.status)
				}
			}
		})
	}
}

// lockRows lists pg_locks rows of a kind as "pid mode granted" strings.
func lockRows(t *testing.T, c *pgx.Conn, where string) string {
	t.Helper()
	return queryText(t, c, "select pid, mode, granted from pg_locks where "+where+" order by pid, mode")
}

// TestSavepointReleasesLocks: a row updated in a subtransaction is waited
// for on the subtransaction's xid, and the waiter proceeds as soon as the
// subtransaction is rolled back (or fails), while the top level still
// runs; locks taken after a savepoint go with ROLLBACK TO, those taken
// before stay; RELEASE keeps the subtransaction's xid lock.
func TestSavepointReleasesLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	a, b, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	apid, bpid := itoa(backendPID(t, a)), itoa(backendPID(t, b))
	mustExec(t, a, "create table t (id int primary key, v int)")
	mustExec(t, a, "create table u (id int)")
	mustExec(t, a, "insert into t values (1, 0), (2, 0)")

	for _, end := range []string{"rollback to a", "select 1/0"} {
		t.Run(end, func(t *testing.T) {
			mustExec(t, a, "begin")
			mustExec(t, a, "update t set v = v + 1 where id = 2") // top-level xid
			mustExec(t, a, "savepoint a")
			mustExec(t, a, "update t set v = 100 where id = 1")
			if got := lockRows(t, obs, "locktype = 'transactionid' and pid = "+apid); got != apid+",ExclusiveLock,t|"+apid+",ExclusiveLock,t" {
				t.Fatalf("transactionid locks of the updater: %s", got)
			}
			done := make(chan error, 1)
			go func() {
				_, err := b.Exec(ctx, "update t set v = v + 5 where id = 1")
				done <- err
			}()
			waitFor(t, "b to wait for the subtransaction", func() bool {
				return lockRows(t, obs, "locktype = 'transactionid' and not granted") == bpid+",ShareLock,f"
			})
			// b waits for the subxid, not the top-level xid
			waited := queryText(t, obs, "select transactionid from pg_locks where locktype = 'transactionid' and not granted")
			sub := queryText(t, a, "select max(transactionid::text::int) from pg_locks where locktype = 'transactionid' and pid = pg_backend_pid()")
			if waited != sub {
				t.Fatalf("b waits on xid %s, the subtransaction has %s", waited, sub)
			}
			_, err := a.Exec(ctx, end)
			if end == "select 1/0" && err == nil {
				t.Fatal("1/0 succeeded")
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("b still waits after the subtransaction ended")
			}
			if got := lockRows(t, obs, "locktype = 'transactionid' and pid = "+apid); got != apid+",ExclusiveLock,t" {
				t.Fatalf("after the rollback the updater holds %s", got)
			}
			mustExec(t, a, "rollback")
			if got := queryText(t, a, "select id, v from t order by id"); got != "1,5|2,0" {
				t.Fatalf("rows: %s", got)
			}
			mustExec(t, a, "update t set v = 0")
		})
	}

	// LOCK TABLE, advisory xact locks and re-taken relation locks
	mustExec(t, a, "begin")
	mustExec(t, a, "lock table t in row exclusive mode")
	mustExec(t, a, "savepoint s")
	mustExec(t, a, "lock table t in row exclusive mode")
	mustExec(t, a, "lock table u in exclusive mode")
	mustExec(t, a, "select pg_advisory_xact_lock(7)")
	mustExec(t, a, "select pg_advisory_lock(8)") // session level: survives
	before := lockRows(t, obs, "pid = "+apid+" and locktype in ('relation', 'advisory')")
	if !strings.Contains(before, "ExclusiveLock,t") || strings.Count(before, "|") < 3 {
		t.Fatalf("locks before rollback: %s", before)
	}
	mustExec(t, a, "rollback to s")
	if got := queryText(t, obs, "select locktype, mode from pg_locks where pid = "+apid+" and locktype in ('relation', 'advisory') order by locktype, mode"); got != "advisory,ExclusiveLock|relation,RowExclusiveLock" {
		t.Fatalf("locks after rollback to: %s", got)
	}
	// the released LOCK TABLE no longer blocks others
	mustExec(t, b, "begin")
	mustExec(t, b, "lock table u in exclusive mode nowait")
	mustExec(t, b, "commit")
	mustExec(t, a, "commit")
	mustExec(t, a, "select pg_advisory_unlock(8)")

	// RELEASE keeps the subtransaction's xid lock until commit
	mustExec(t, a, "begin")
	mustExec(t, a, "savepoint r")
	mustExec(t, a, "update t set v = 1 where id = 1")
	mustExec(t, a, "release r")
	if got := lockRows(t, obs, "locktype = 'transactionid' and pid = "+apid); got != apid+",ExclusiveLock,t|"+apid+",ExclusiveLock,t" {
		t.Fatalf("after release the updater holds %s", got)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "update t set v = v + 5 where id = 1")
		done <- err
	}()
	waitFor(t, "b to wait", func() bool {
		return lockRows(t, obs, "locktype = 'transactionid' and not granted") == bpid+",ShareLock,f"
	})
	select {
	case err := <-done:
		t.Fatalf("b finished while the released subtransaction's top level runs: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	mustExec(t, a, "commit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, a, "select v from t where id = 1"); got != "6" {
		t.Fatalf("v = %s, want 6", got)
	}
}

// TestSavepointSettings: SET and SET LOCAL after a savepoint are undone by
// ROLLBACK TO and kept by RELEASE.
func TestSavepointSettings(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	show := func() string { return queryText(t, c, "show lock_timeout") }
	mustExec(t, c, "begin")
	mustExec(t, c, "set lock_timeout = '1s'")
	mustExec(t, c, "savepoint a")
	mustExec(t, c, "set lock_timeout = '2s'")
	mustExec(t, c, "set local statement_timeout = '3s'")
	mustExec(t, c, "rollback to a")
	if got, st := show(), queryText(t, c, "show statement_timeout"); got != "1s" || st != "0" {
		t.Fatalf("after rollback to: lock_timeout %s statement_timeout %s", got, st)
	}
	mustExec(t, c, "set local lock_timeout = '4s'")
	mustExec(t, c, "release a")
	if got := show(); got != "4s" {
		t.Fatalf("after release: %s", got)
	}
	mustExec(t, c, "commit")
	if got := show(); got != "1s" {
		t.Fatalf("after commit: %s", got)
	}
}

// TestSavepointDDL: CREATE TABLE, CREATE INDEX and DROP TABLE done after a
// savepoint are undone by ROLLBACK TO.
func TestSavepointDDL(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	mustExec(t, c, "create table keep (id int)")
	mustExec(t, c, "insert into keep values (1)")
	mustExec(t, c, "begin")
	mustExec(t, c, "create table early (id int)")
	mustExec(t, c, "savepoint a")
	mustExec(t, c, "create table gone (id int primary key)")
	mustExec(t, c, "insert into gone values (1)")
	mustExec(t, c, "insert into early values (1)")
	mustExec(t, c, "create unique index keep_id on keep (id)")
	mustExec(t, c, "drop table keep")
	mustExec(t, c, "rollback to a")
	_, err := c.Exec(ctx, "insert into gone values (2)")
	if pe := pgErr(t, err); pe.Code != "42P01" || pe.Message != `relation "gone" does not exist` {
		t.Fatalf("table created after the savepoint: %v", err)
	}
	mustExec(t, c, "rollback to a")
	mustExec(t, c, "insert into keep values (1)") // the unique index is gone too
	if got := queryText(t, c, "select count(*) from keep"); got != "2" {
		t.Fatalf("dropped table after rollback to: %s", got)
	}
	mustExec(t, c, "insert into early values (2)")
	mustExec(t, c, "create table gone (id int)") // the name is free again
	mustExec(t, c, "commit")
	if got := queryText(t, c, "select count(*) from early"); got != "1" {
		t.Fatalf("early: %s", got)
	}
	if got := queryText(t, c, "select count(*) from gone"); got != "0" {
		t.Fatalf("gone: %s", got)
	}
}

// TestSavepointRestart: data written in released subtransactions survives
// a clean restart, data of rolled-back ones does not come back.
func TestSavepointRestart(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int primary key, v int)")
	mustExec(t, c, "begin")
	mustExec(t, c, "insert into t values (1, 1)")
	mustExec(t, c, "savepoint a")
	mustExec(t, c, "insert into t values (2, 2)")
	mustExec(t, c, "savepoint b")
	mustExec(t, c, "update t set v = 20 where id = 2")
	mustExec(t, c, "release b")
	mustExec(t, c, "savepoint c")
	mustExec(t, c, "insert into t values (3, 3)")
	mustExec(t, c, "rollback to c")
	mustExec(t, c, "release a")
	mustExec(t, c, "commit")
	inst.Stop(t)
	inst = lockdtest.Start(t, lockdtest.Options{DataDir: inst.DataDir})
	c = inst.Connect(t)
	if got := queryText(t, c, "select id, v from t order by id"); got != "1,1|2,20" {
		t.Fatalf("after restart: %s", got)
	}
	mustExec(t, c, "insert into t values (3, 3)")
}

// TestOwnDDLReplans: a plan made against the session's own uncommitted
// catalog is made again once that catalog changes or is rolled back (the
// plan cache used to keep it: an INSERT into a rolled-back table reached
// the storage layer, and a unique index created in the same transaction
// was not checked).
func TestOwnDDLReplans(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	mustExec(t, c, "create table t0 (a int)")
	mustExec(t, c, "begin")
	mustExec(t, c, "create table t (a int)")
	mustExec(t, c, "insert into t values (1)")
	mustExec(t, c, "rollback")
	_, err := c.Exec(ctx, "insert into t values (1)")
	if pe := pgErr(t, err); pe.Code != "42P01" {
		t.Fatalf("insert into a rolled-back table: %v", err)
	}
	mustExec(t, c, "begin")
	mustExec(t, c, "insert into t0 values (1)")
	mustExec(t, c, "create unique index t0a on t0 (a)")
	_, err = c.Exec(ctx, "insert into t0 values (1)")
	if pe := pgErr(t, err); pe.Code != "23505" {
		t.Fatalf("duplicate after CREATE UNIQUE INDEX in the same transaction: %v", err)
	}
	mustExec(t, c, "rollback")
}
