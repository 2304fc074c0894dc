package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// The locks of foreign keys that reference a partitioned table, as
// pg_locks showed them on PostgreSQL 15.18 with the transaction open (the
// same statements in one session there).

func fkPartSchema(t *testing.T, c *pgx.Conn) {
	t.Helper()
	mustExec(t, c, "create table r (id int primary key, u int, v text) partition by range (id)")
	mustExec(t, c, "create table r1 partition of r for values from (0) to (10)")
	mustExec(t, c, "create table r2 partition of r for values from (10) to (20)")
	mustExec(t, c, "create index on r (u)")
	mustExec(t, c, "create table rc (a int, rid int references r)")
	mustExec(t, c, "insert into r select i, i, 'x' from generate_series(1, 18) i")
}

// checkLocks runs sql in a transaction and compares the session's
// relation locks with want, then ends the transaction with end.
func checkLocks(t *testing.T, c *pgx.Conn, sql, want, end string) {
	t.Helper()
	mustExec(t, c, "begin")
	mustExec(t, c, sql)
	if got := ownRelationLocks(t, c); got != want {
		t.Errorf("%s:\n got %s\nwant %s", sql, got, want)
	}
	mustExec(t, c, end)
}

// TestForeignKeyPartitionedCheckLocks: the RI check of a referencing row
// reads the partitioned table pruned to the key's partition, so it locks
// the partitioned table, that partition and all its indexes
// RowShareLock. The sixth execution plans PostgreSQL's generic plan too,
// which holds every partition with its indexes; since that plan costs
// more than the pruned ones, the custom plans come back after it.
func TestForeignKeyPartitionedCheckLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	fkPartSchema(t, c)
	custom2 := "r,RowShareLock|r2,RowShareLock|r2_pkey,RowShareLock|r2_u_idx,RowShareLock|rc,RowExclusiveLock"
	generic := "r,RowShareLock|r1,RowShareLock|r1_pkey,RowShareLock|r1_u_idx,RowShareLock|" +
		"r2,RowShareLock|r2_pkey,RowShareLock|r2_u_idx,RowShareLock|rc,RowExclusiveLock"
	checkLocks(t, c, "insert into rc values (0, null)", "rc,RowExclusiveLock", "commit") // nothing to look up
	for i := 1; i <= 5; i++ {
		checkLocks(t, c, "insert into rc values (1, 11)", custom2, "commit")
	}
	checkLocks(t, c, "insert into rc values (1, 11)", generic, "commit")
	checkLocks(t, c, "insert into rc values (1, 12)", custom2, "commit")
	checkLocks(t, c, "insert into rc values (1, 1)", "r,RowShareLock|r1,RowShareLock|r1_pkey,RowShareLock|r1_u_idx,RowShareLock|rc,RowExclusiveLock", "commit")
	// an UPDATE leaving the key alone checks nothing; a key UPDATE does
	checkLocks(t, c, "update rc set a = 2 where rid = 1", "rc,RowExclusiveLock", "rollback")
	checkLocks(t, c, "update rc set rid = 3 where rid = 1", "r,RowShareLock|r1,RowShareLock|r1_pkey,RowShareLock|r1_u_idx,RowShareLock|rc,RowExclusiveLock", "rollback")
	if got := queryText(t, c, "select count(*) from rc"); got != "9" {
		t.Errorf("rc holds %s rows, want 9", got)
	}
}

// TestForeignKeyPartitionedPlanCacheMode: plan_cache_mode applies to the
// RI query's plan too. force_generic_plan plans the generic plan at the
// first execution and then reuses it, locking every partition (its range
// table) but only the index of the partition run-time pruning leaves;
// force_custom_plan prunes at every execution.
func TestForeignKeyPartitionedPlanCacheMode(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	fkPartSchema(t, c)
	mustExec(t, c, "set plan_cache_mode = force_generic_plan")
	checkLocks(t, c, "insert into rc values (1, 11)", "r,RowShareLock|r1,RowShareLock|r1_pkey,RowShareLock|r1_u_idx,RowShareLock|"+
		"r2,RowShareLock|r2_pkey,RowShareLock|r2_u_idx,RowShareLock|rc,RowExclusiveLock", "commit")
	checkLocks(t, c, "insert into rc values (1, 11)", "r,RowShareLock|r1,RowShareLock|r2,RowShareLock|r2_pkey,RowShareLock|rc,RowExclusiveLock", "commit")
	checkLocks(t, c, "insert into rc values (1, 1)", "r,RowShareLock|r1,RowShareLock|r1_pkey,RowShareLock|r2,RowShareLock|rc,RowExclusiveLock", "commit")
	mustExec(t, c, "set plan_cache_mode = force_custom_plan")
	mustExec(t, c, "create table rc2 (a int, rid int references r)")
	for i := 0; i < 7; i++ {
		checkLocks(t, c, "insert into rc2 values (1, 11)", "r,RowShareLock|r2,RowShareLock|r2_pkey,RowShareLock|r2_u_idx,RowShareLock|rc2,RowExclusiveLock", "commit")
	}
}

// TestForeignKeyPartitionedActionLocks: deleting a referenced row of a
// partition fires that partition's clone of the foreign key: NO ACTION
// looks for another row with the key in the partition alone (ONLY r1:
// RowShareLock on it and its indexes; only the index it reads from the
// seventh execution on), then for referencing rows. A key UPDATE that
// moves the row to another partition fires the foreign key itself, whose
// "another row with the key?" query reads the partitioned table pruned to
// the old key's partition (the generic plan at the sixth holds r2 too).
// PostgreSQL also takes AccessShareLock on r at the first move of the
// session, building r1's partition constraint into its relcache; lockd
// has no relcache (docs/partitions.md).
func TestForeignKeyPartitionedActionLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	fkPartSchema(t, c)
	del := "r,RowExclusiveLock|r1,RowExclusiveLock|r1,RowShareLock|r1_pkey,RowExclusiveLock|r1_pkey,RowShareLock|" +
		"r1_u_idx,RowExclusiveLock|r1_u_idx,RowShareLock|rc,RowShareLock"
	for i := 1; i <= 6; i++ {
		checkLocks(t, c, "delete from r where id = 2", del, "rollback")
	}
	checkLocks(t, c, "delete from r where id = 2", strings.Replace(del, "|r1_u_idx,RowShareLock", "", 1), "rollback")
	move := "r,RowExclusiveLock|r,RowShareLock|r1,RowExclusiveLock|r1,RowShareLock|r1_pkey,RowExclusiveLock|r1_pkey,RowShareLock|" +
		"r1_u_idx,RowExclusiveLock|r1_u_idx,RowShareLock|r2,RowExclusiveLock|rc,RowShareLock"
	for i := 1; i <= 5; i++ {
		checkLocks(t, c, "update r set id = 19 where id = 2", move, "rollback")
	}
	checkLocks(t, c, "update r set id = 19 where id = 2", strings.Replace(move, "r2,RowExclusiveLock", "r2,RowExclusiveLock|r2,RowShareLock|r2_pkey,RowShareLock|r2_u_idx,RowShareLock", 1), "rollback")
	checkLocks(t, c, "update r set id = 19 where id = 2", move, "rollback")
	// the referencing row stops both, naming the partition and its clone,
	// or the partitioned table and the foreign key
	mustExec(t, c, "insert into rc values (1, 2)")
	_, err := c.Exec(context.Background(), "delete from r where id = 2")
	if pe := pgErr(t, err); pe.Code != "23503" || pe.Message != `update or delete on table "r1" violates foreign key constraint "rc_rid_fkey1" on table "rc"` {
		t.Errorf("DELETE of a referenced row: %s %q", pe.Code, pe.Message)
	}
	_, err = c.Exec(context.Background(), "update r set id = 19 where id = 2")
	if pe := pgErr(t, err); pe.Code != "23503" || pe.Message != `update or delete on table "r" violates foreign key constraint "rc_rid_fkey" on table "rc"` ||
		pe.Detail != `Key (id)=(2) is still referenced from table "rc".` {
		t.Errorf("moving a referenced row: %s %q %q", pe.Code, pe.Message, pe.Detail)
	}
}

// TestForeignKeyPartitionedRowLock: the checked row is locked FOR KEY
// SHARE in its partition: a DELETE of it waits for the inserting
// transaction and then fails the partition's clone; a non-key UPDATE of
// it does not wait.
func TestForeignKeyPartitionedRowLock(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	fkPartSchema(t, a)
	bpid := queryText(t, b, "select pg_backend_pid()")
	mustExec(t, a, "begin")
	mustExec(t, a, "insert into rc values (1, 11)")
	mustExec(t, b, "update r set v = 'y' where id = 11")
	got := runAsync(b, "delete from r where id = 11")
	if w := blocked(t, obs, bpid); w != "transactionid,ShareLock,f|transactionid,ExclusiveLock,t|tuple,AccessExclusiveLock,t" {
		t.Errorf("DELETE waiting for the key-share locker: %s", w)
	}
	if rel := queryText(t, obs, "select relation::regclass from pg_locks where pid = "+bpid+" and locktype = 'tuple'"); rel != "r2" {
		t.Errorf("the tuple lock is on %s, want r2", rel)
	}
	mustExec(t, a, "commit")
	if r := waitResult(t, got); !strings.Contains(r, `update or delete on table "r2" violates foreign key constraint "rc_rid_fkey2" on table "rc" (SQLSTATE 23503)`) {
		t.Errorf("DELETE after the INSERT committed: %s", r)
	}
}

// TestForeignKeyPartitionedDDLLocks: the DDL that makes and removes the
// clones of a foreign key referencing a partitioned table (PostgreSQL's
// CREATE TABLE also locks the new table's TOAST table and its index,
// which lockd does not have).
func TestForeignKeyPartitionedDDLLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	fkPartSchema(t, c)
	mustExec(t, c, "create table sc (a int, rid int)")
	mustExec(t, c, "insert into sc values (1, 1), (2, 11)")
	// ADD FOREIGN KEY: every partition ShareRowExclusiveLock (their clones'
	// triggers), and the validating join's planner locks
	checkLocks(t, c, "alter table sc add foreign key (rid) references r",
		"r,AccessShareLock|r,RowShareLock|r,ShareRowExclusiveLock|r1,AccessShareLock|r1,ShareRowExclusiveLock|"+
			"r1_pkey,AccessShareLock|r1_u_idx,AccessShareLock|r2,AccessShareLock|r2,ShareRowExclusiveLock|"+
			"r2_pkey,AccessShareLock|r2_u_idx,AccessShareLock|sc,AccessShareLock|sc,ShareRowExclusiveLock", "rollback")
	// a new partition gets the clones: the referencing table
	// ShareRowExclusiveLock and AccessShareLock, the partition
	// ShareRowExclusiveLock
	checkLocks(t, c, "create table r3 partition of r for values from (20) to (30)",
		"r,AccessExclusiveLock|r3,AccessExclusiveLock|r3,ShareLock|r3,ShareRowExclusiveLock|r3_pkey,AccessExclusiveLock|"+
			"r3_u_idx,AccessExclusiveLock|r_pkey,ShareUpdateExclusiveLock|r_u_idx,ShareUpdateExclusiveLock|"+
			"rc,AccessShareLock|rc,ShareRowExclusiveLock", "rollback")
	// DETACH: the referencing table ShareLock and the check's join, then
	// the clone dropped (AccessExclusiveLock on both tables)
	checkLocks(t, c, "alter table r detach partition r1",
		"r,AccessExclusiveLock|r,AccessShareLock|r1,AccessExclusiveLock|r1,AccessShareLock|r1_pkey,AccessExclusiveLock|"+
			"r1_pkey,AccessShareLock|r1_u_idx,AccessExclusiveLock|r1_u_idx,AccessShareLock|"+
			"rc,AccessExclusiveLock|rc,AccessShareLock|rc,ShareLock", "rollback")
	// dropping the referencing table (or its foreign key) drops the clones'
	// triggers on every partition
	checkLocks(t, c, "alter table rc drop constraint rc_rid_fkey",
		"r,AccessExclusiveLock|r1,AccessExclusiveLock|r2,AccessExclusiveLock|rc,AccessExclusiveLock", "rollback")
	mustExec(t, c, "insert into rc values (1, 1)")
	_, err := c.Exec(context.Background(), "alter table r detach partition r1")
	if pe := pgErr(t, err); pe.Code != "23503" || pe.Message != `removing partition "r1" violates foreign key constraint "rc_rid_fkey1"` ||
		pe.Detail != `Key (rid)=(1) is still referenced from table "rc".` {
		t.Errorf("DETACH of a referenced partition: %s %q %q", pe.Code, pe.Message, pe.Detail)
	}
	_, err = c.Exec(context.Background(), "drop table r2")
	if pe := pgErr(t, err); pe.Code != "2BP01" || pe.Message != "cannot drop table r2 because other objects depend on it" ||
		pe.Detail != "constraint rc_rid_fkey on table rc depends on table r2" {
		t.Errorf("DROP of a referenced partition: %s %q %q", pe.Code, pe.Message, pe.Detail)
	}
}

// TestForeignKeyPartitionedMovedRow: a check waiting for a transaction
// that moves the referenced row to another partition fails with 40001
// when that commits, as PostgreSQL's LockRows does; under REPEATABLE READ
// the check looks into the partitioned table with a snapshot as of now
// (RI_FKey_check's detectNewRows), so a row moved away since the
// transaction's snapshot is not found, and one inserted since is.
func TestForeignKeyPartitionedMovedRow(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	fkPartSchema(t, a)
	bpid := queryText(t, b, "select pg_backend_pid()")
	mustExec(t, a, "begin")
	mustExec(t, a, "update r set id = 0 where id = 11")
	got := runAsync(b, "insert into rc values (1, 11)")
	blocked(t, obs, bpid)
	mustExec(t, a, "commit")
	if r := waitResult(t, got); !strings.Contains(r, "tuple to be locked was already moved to another partition due to concurrent update (SQLSTATE 40001)") {
		t.Errorf("check of a row moved meanwhile: %s", r)
	}
	mustExec(t, a, "update r set id = 11 where id = 0")

	mustExec(t, b, "begin isolation level repeatable read")
	if got := queryText(t, b, "select count(*) from r"); got != "18" {
		t.Fatalf("r: %s rows", got)
	}
	mustExec(t, a, "update r set id = 0 where id = 11")
	mustExec(t, a, "insert into r values (19, 19, 'new')")
	_, err := b.Exec(context.Background(), "insert into rc values (1, 11)")
	if pe := pgErr(t, err); pe.Code != "23503" || pe.Detail != `Key (rid)=(11) is not present in table "r".` {
		t.Errorf("REPEATABLE READ check of a row moved since the snapshot: %s %q %q", pe.Code, pe.Message, pe.Detail)
	}
	mustExec(t, b, "rollback")
	mustExec(t, b, "begin isolation level repeatable read")
	queryText(t, b, "select count(*) from r")
	mustExec(t, a, "delete from r where id = 19")
	mustExec(t, a, "insert into r values (19, 19, 'again')")
	mustExec(t, b, "insert into rc values (1, 19)")
	mustExec(t, b, "commit")
}
