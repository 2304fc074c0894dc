package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// The locks of foreign-key checks, as pg_locks showed them on PostgreSQL
// 15 with the transaction still open.

func ownRelationLocks(t *testing.T, c *pgx.Conn) string {
	t.Helper()
	return queryText(t, c, "select relation::regclass, mode from pg_locks where pid = pg_backend_pid() and locktype = 'relation' "+
		"and relation::regclass::text <> 'pg_locks' order by relation::regclass::text, mode")
}

func fkSchema(t *testing.T, c *pgx.Conn) {
	t.Helper()
	mustExec(t, c, "create table parent (id int primary key, u int unique, name text)")
	mustExec(t, c, "create table child (id int, pid int references parent)")
	mustExec(t, c, "insert into parent values (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')")
}

// TestForeignKeyCheckLocks: a referencing INSERT takes RowShareLock on the
// referenced table and, while PostgreSQL would still plan its RI query
// afresh (six times), on all its indexes; then only on the one it reads.
// An UPDATE that leaves the key alone takes none.
func TestForeignKeyCheckLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	fkSchema(t, c)
	check := func(sql, want string) {
		t.Helper()
		mustExec(t, c, "begin")
		mustExec(t, c, sql)
		if got := ownRelationLocks(t, c); got != want {
			t.Errorf("%s:\n got %s\nwant %s", sql, got, want)
		}
		mustExec(t, c, "commit")
	}
	all := "child,RowExclusiveLock|parent,RowShareLock|parent_pkey,RowShareLock|parent_u_key,RowShareLock"
	check("insert into child values (1, null)", "child,RowExclusiveLock") // nothing to look up
	for i := 0; i < 6; i++ {
		check("insert into child values (1, 1)", all)
	}
	check("insert into child values (1, 1)", "child,RowExclusiveLock|parent,RowShareLock|parent_pkey,RowShareLock")
	check("update child set id = 2 where id = 1", "child,RowExclusiveLock")
	check("update child set pid = 2 where id = 2", "child,RowExclusiveLock|parent,RowShareLock|parent_pkey,RowShareLock")
	// deleting a referenced row: NO ACTION first looks for another row
	// with the key (RowShareLock on parent and its indexes), then for
	// referencing rows (RowShareLock on child)
	check("delete from parent where id = 3", "child,RowShareLock|parent,RowExclusiveLock|parent,RowShareLock|"+
		"parent_pkey,RowExclusiveLock|parent_pkey,RowShareLock|parent_u_key,RowExclusiveLock|parent_u_key,RowShareLock")
	check("update parent set name = 'x' where id = 2", "parent,RowExclusiveLock|parent_pkey,RowExclusiveLock|parent_u_key,RowExclusiveLock")
}

// runAsync runs sql on c in the background; the channel gets its command
// tag or error text.
func runAsync(c *pgx.Conn, sql string) chan string {
	ch := make(chan string, 1)
	go func() {
		tag, err := c.Exec(context.Background(), sql)
		if err != nil {
			ch <- "error: " + err.Error()
			return
		}
		ch <- tag.String()
	}()
	return ch
}

func waitResult(t *testing.T, ch chan string) string {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("statement did not finish")
	}
	return ""
}

// blocked waits until the backend pid waits for a lock and returns its
// locks other than relation locks.
func blocked(t *testing.T, obs *pgx.Conn, pid string) string {
	t.Helper()
	waitFor(t, "backend "+pid+" to wait", func() bool {
		return queryText(t, obs, "select count(*) from pg_locks where pid = "+pid+" and not granted") == "1"
	})
	return queryText(t, obs, "select locktype, mode, granted from pg_locks where pid = "+pid+
		" and locktype in ('tuple', 'transactionid') order by locktype, granted, mode")
}

// TestForeignKeyDeleteWaits: a DELETE of a referenced row waits for a
// transaction whose INSERT locked it FOR KEY SHARE; when that commits the
// DELETE fails the constraint, when it rolls back the DELETE goes through.
// And the other way round: an INSERT waits for the DELETE of the row it
// references.
func TestForeignKeyDeleteWaits(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	fkSchema(t, a)
	bpid := queryText(t, b, "select pg_backend_pid()")
	waiting := "transactionid,ShareLock,f|transactionid,ExclusiveLock,t|tuple,AccessExclusiveLock,t"
	for _, commit := range []bool{true, false} {
		mustExec(t, a, "begin")
		mustExec(t, a, "insert into child values (100, 1)")
		got := runAsync(b, "delete from parent where id = 1")
		if w := blocked(t, obs, bpid); w != waiting {
			t.Errorf("DELETE waiting for the key-share locker: %s", w)
		}
		if commit {
			mustExec(t, a, "commit")
			if r := waitResult(t, got); !strings.Contains(r, `update or delete on table "parent" violates foreign key constraint "child_pid_fkey" on table "child" (SQLSTATE 23503)`) {
				t.Errorf("DELETE after the INSERT committed: %s", r)
			}
			mustExec(t, a, "delete from child")
		} else {
			mustExec(t, a, "rollback")
			if r := waitResult(t, got); r != "DELETE 1" {
				t.Errorf("DELETE after the INSERT rolled back: %s", r)
			}
			mustExec(t, a, "insert into parent values (1, 1, 'a')")
		}
	}
	// an INSERT referencing a row being deleted waits for the deleter
	for _, commit := range []bool{true, false} {
		mustExec(t, a, "begin")
		mustExec(t, a, "delete from parent where id = 3")
		got := runAsync(b, "insert into child values (300, 3)")
		if w := blocked(t, obs, bpid); w != "transactionid,ShareLock,f|transactionid,ExclusiveLock,t|tuple,AccessShareLock,t" {
			t.Errorf("INSERT waiting for the deleter: %s", w)
		}
		if commit {
			mustExec(t, a, "commit")
			if r := waitResult(t, got); !strings.Contains(r, `insert or update on table "child" violates foreign key constraint "child_pid_fkey" (SQLSTATE 23503)`) {
				t.Errorf("INSERT after the DELETE committed: %s", r)
			}
			mustExec(t, a, "insert into parent values (3, 3, 'c')")
		} else {
			mustExec(t, a, "rollback")
			if r := waitResult(t, got); r != "INSERT 0 1" {
				t.Errorf("INSERT after the DELETE rolled back: %s", r)
			}
		}
	}
}

// TestForeignKeyShareCompatibility: FOR KEY SHARE, what a foreign-key check
// takes, does not conflict with an UPDATE that leaves the key alone (FOR NO
// KEY UPDATE strength) nor with other key-share lockers, in either order;
// a key UPDATE waits.
func TestForeignKeyShareCompatibility(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	fkSchema(t, a)
	mustExec(t, b, "set lock_timeout = '200ms'")
	mustExec(t, a, "begin")
	mustExec(t, a, "insert into child values (1, 1)")
	mustExec(t, b, "begin")
	mustExec(t, b, "insert into child values (2, 1)")           // a second key-share locker
	mustExec(t, b, "update parent set name = 'x' where id = 1") // a non-key update
	mustExec(t, b, "commit")
	_, err := b.Exec(context.Background(), "update parent set u = 10 where id = 1")
	if pe := pgErr(t, err); pe.Code != "55P03" || pe.Message != "canceling statement due to lock timeout" {
		t.Errorf("key update of a key-share locked row: %s %q", pe.Code, pe.Message)
	}
	mustExec(t, a, "commit")
	// the other order: the row is being updated, the check locks it anyway
	mustExec(t, a, "begin")
	mustExec(t, a, "update parent set name = 'y' where id = 2")
	mustExec(t, b, "insert into child values (3, 2)")
	mustExec(t, a, "commit")
	if got := queryText(t, a, "select name from parent where id = 2"); got != "y" {
		t.Errorf("name: %s", got)
	}
}

// TestForeignKeyRepeatableRead: the referenced side's check sees rows
// committed after a REPEATABLE READ transaction's snapshot (PostgreSQL's
// RI queries take the latest snapshot there), so a referencing row
// inserted meanwhile still stops the DELETE.
func TestForeignKeyRepeatableRead(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b := inst.Connect(t), inst.Connect(t)
	fkSchema(t, a)
	mustExec(t, a, "begin isolation level repeatable read")
	if got := queryText(t, a, "select count(*) from child"); got != "0" {
		t.Fatalf("child: %s", got)
	}
	mustExec(t, b, "insert into child values (1, 2)")
	_, err := a.Exec(context.Background(), "delete from parent where id = 2")
	if pe := pgErr(t, err); pe.Code != "23503" || pe.Message != `update or delete on table "parent" violates foreign key constraint "child_pid_fkey" on table "child"` ||
		pe.Detail != `Key (id)=(2) is still referenced from table "child".` {
		t.Errorf("DELETE under REPEATABLE READ: %s %q %q", pe.Code, pe.Message, pe.Detail)
	}
	mustExec(t, a, "rollback")
}
