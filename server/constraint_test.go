package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// conErr is an error as a client sees it: the fields PostgreSQL 15 sent
// for the same statement (its LOCATION aside). Empty fields must be empty.
type conErr struct {
	code, msg, detail, hint string
	table, constraint       string
}

func expectConErr(t *testing.T, c *pgx.Conn, sql string, w conErr) {
	t.Helper()
	_, err := c.Exec(context.Background(), sql)
	if err == nil {
		t.Errorf("%s: no error, want %s %s", sql, w.code, w.msg)
		return
	}
	pe := pgErr(t, err)
	if pe.Code != w.code || pe.Message != w.msg || pe.Detail != w.detail || pe.Hint != w.hint ||
		pe.TableName != w.table || pe.ConstraintName != w.constraint {
		t.Errorf("%s:\n got %s %q detail %q hint %q table %q constraint %q\nwant %s %q detail %q hint %q table %q constraint %q",
			sql, pe.Code, pe.Message, pe.Detail, pe.Hint, pe.TableName, pe.ConstraintName,
			w.code, w.msg, w.detail, w.hint, w.table, w.constraint)
	}
	if w.table != "" && pe.SchemaName != "public" {
		t.Errorf("%s: schema %q, want public", sql, pe.SchemaName)
	}
}

// TestCheckConstraints: names PostgreSQL generates, enforcement on INSERT,
// UPDATE, COPY and partition routing, NULL passing, validation when added.
func TestCheckConstraints(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	mustExec(t, c, "create table items (id int primary key, code varchar(10) unique not null, qty int check (qty >= 0), "+
		"price numeric(10,2) default 0 check (price < 100000), constraint price_pos check (price >= 0), "+
		"check (qty < 1000 and price < 99999), check (qty <> 13))")
	want := "items_check,c,CHECK (((qty < 1000) AND (price < (99999)::numeric)))|items_code_key,u,UNIQUE (code)|" +
		"items_pkey,p,PRIMARY KEY (id)|items_price_check,c,CHECK ((price < (100000)::numeric))|" +
		"items_qty_check,c,CHECK ((qty >= 0))|items_qty_check1,c,CHECK ((qty <> 13))|price_pos,c,CHECK ((price >= (0)::numeric))"
	if got := queryText(t, c, "select conname, contype, pg_get_constraintdef(oid) from pg_constraint where conrelid = 'items'::regclass order by conname"); got != want {
		t.Errorf("pg_constraint:\n got %s\nwant %s", got, want)
	}
	if got := queryText(t, c, "select pg_get_constraintdef(oid, true) from pg_constraint where conname = 'items_check'"); got != "CHECK (qty < 1000 AND price < 99999::numeric)" {
		t.Errorf("pretty: %s", got)
	}
	if got := queryText(t, c, "select relchecks from pg_class where relname = 'items'"); got != "5" {
		t.Errorf("relchecks: %s", got)
	}
	viol := func(name, row string) conErr {
		return conErr{code: "23514", msg: `new row for relation "items" violates check constraint "` + name + `"`,
			detail: "Failing row contains " + row + ".", table: "items", constraint: name}
	}
	// checks run in name order, after NOT NULL
	expectConErr(t, c, "insert into items values (1, 'A', -1, 0)", viol("items_qty_check", "(1, A, -1, 0.00)"))
	expectConErr(t, c, "insert into items values (1, 'A', 5, -1)", viol("price_pos", "(1, A, 5, -1.00)"))
	expectConErr(t, c, "insert into items values (1, 'A', 5000, 1)", viol("items_check", "(1, A, 5000, 1.00)"))
	expectConErr(t, c, "insert into items values (1, 'A', 13, 1)", viol("items_qty_check1", "(1, A, 13, 1.00)"))
	expectConErr(t, c, "insert into items values (2, null, -1, 1)", conErr{code: "23502",
		msg: `null value in column "code" of relation "items" violates not-null constraint`, detail: "Failing row contains (2, null, -1, 1.00).", table: "items"})
	mustExec(t, c, "insert into items values (1, 'A', null, null)") // NULL passes
	expectConErr(t, c, "update items set qty = -5 where id = 1", viol("items_qty_check", "(1, A, -5, null)"))
	mustExec(t, c, "update items set price = 5 where id = 1")

	// COPY checks each row
	_, err := c.PgConn().CopyFrom(ctx, strings.NewReader("2\tB\t-3\t1\n"), "copy items from stdin")
	if pe := pgErr(t, err); pe.Code != "23514" || pe.ConstraintName != "items_qty_check" {
		t.Errorf("COPY: %s %q constraint %q", pe.Code, pe.Message, pe.ConstraintName)
	}

	// a partition has its parent's checks; the error names the partition
	mustExec(t, c, "create table pt (k int, v int check (v > 0)) partition by range (k)")
	mustExec(t, c, "create table pt1 partition of pt for values from (0) to (10)")
	mustExec(t, c, "insert into pt values (1, 1)")
	expectConErr(t, c, "insert into pt values (2, 0)", conErr{code: "23514", msg: `new row for relation "pt1" violates check constraint "pt_v_check"`,
		detail: "Failing row contains (2, 0).", table: "pt1", constraint: "pt_v_check"})
	expectConErr(t, c, "update pt set v = -1", conErr{code: "23514", msg: `new row for relation "pt1" violates check constraint "pt_v_check"`,
		detail: "Failing row contains (1, -1).", table: "pt1", constraint: "pt_v_check"})

	// ADD CHECK validates the rows there, NOT VALID does not; VALIDATE does
	mustExec(t, c, "create table cx (x int, y int)")
	mustExec(t, c, "insert into cx values (1, 1), (1, null), (2, 77)")
	expectConErr(t, c, "alter table cx add check (x > 1)", conErr{code: "23514",
		msg: `check constraint "cx_x_check" of relation "cx" is violated by some row`, table: "cx", constraint: "cx_x_check"})
	mustExec(t, c, "alter table cx add constraint cx_chk check (x > 1) not valid")
	if got := queryText(t, c, "select convalidated, pg_get_constraintdef(oid) from pg_constraint where conname = 'cx_chk'"); got != "f,CHECK ((x > 1)) NOT VALID" {
		t.Errorf("NOT VALID: %s", got)
	}
	expectConErr(t, c, "alter table cx validate constraint cx_chk", conErr{code: "23514",
		msg: `check constraint "cx_chk" of relation "cx" is violated by some row`, table: "cx", constraint: "cx_chk"})
	expectConErr(t, c, "insert into cx values (0, 1)", conErr{code: "23514", msg: `new row for relation "cx" violates check constraint "cx_chk"`,
		detail: "Failing row contains (0, 1).", table: "cx", constraint: "cx_chk"})
	mustExec(t, c, "delete from cx where x = 1")
	mustExec(t, c, "alter table cx validate constraint cx_chk")
	if got := queryText(t, c, "select convalidated from pg_constraint where conname = 'cx_chk'"); got != "t" {
		t.Errorf("after VALIDATE: %s", got)
	}
	expectConErr(t, c, "alter table cx add constraint cx_chk check (x > 2)", conErr{code: "42710", msg: `constraint "cx_chk" for relation "cx" already exists`})
	mustExec(t, c, "alter table cx drop constraint cx_chk")
	expectConErr(t, c, "alter table cx drop constraint cx_chk", conErr{code: "42704", msg: `constraint "cx_chk" of relation "cx" does not exist`})
	mustExec(t, c, "alter table cx drop constraint if exists cx_chk")
	expectConErr(t, c, "create table bad (a int check (a))", conErr{code: "42804", msg: "argument of CHECK must be type boolean, not type integer"})
	expectConErr(t, c, "create table bad (a int check (a > (select 1)))", conErr{code: "0A000", msg: "cannot use subquery in check constraint"})
	expectConErr(t, c, "create table bad (a int check (count(*) > 0))", conErr{code: "42803", msg: "aggregate functions are not allowed in check constraints"})
	expectConErr(t, c, "create table bad (a int, constraint c1 check (a > 0), constraint c1 check (a > 1))", conErr{code: "42710", msg: `check constraint "c1" already exists`})
}

// TestUniqueConstraints: table_cols_key names, duplicates of the primary
// key merged, 23505, and the index going with DROP CONSTRAINT only.
func TestUniqueConstraints(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table u (a int unique, b int, c int, unique (b, c))")
	mustExec(t, c, "insert into u values (1, 1, 1)")
	expectConErr(t, c, "insert into u values (1, 2, 2)", conErr{code: "23505", msg: `duplicate key value violates unique constraint "u_a_key"`,
		detail: "Key (a)=(1) already exists.", table: "u", constraint: "u_a_key"})
	expectConErr(t, c, "insert into u values (2, 1, 1)", conErr{code: "23505", msg: `duplicate key value violates unique constraint "u_b_c_key"`,
		detail: "Key (b, c)=(1, 1) already exists.", table: "u", constraint: "u_b_c_key"})
	mustExec(t, c, "insert into u values (3, null, null), (4, null, null)")
	if got := queryText(t, c, "select i.relname, x.indisunique, con.contype from pg_index x join pg_class i on i.oid = x.indexrelid "+
		"left join pg_constraint con on con.conindid = x.indexrelid where x.indrelid = 'u'::regclass order by 1"); got != "u_a_key,t,u|u_b_c_key,t,u" {
		t.Errorf("indexes: %s", got)
	}
	mustExec(t, c, "create table u2 (a int primary key, unique (a))")
	if got := queryText(t, c, "select conname from pg_constraint where conrelid = 'u2'::regclass"); got != "u2_pkey" {
		t.Errorf("unique duplicating the primary key: %s", got)
	}
	expectConErr(t, c, "drop index u_a_key", conErr{code: "2BP01", msg: "cannot drop index u_a_key because constraint u_a_key on table u requires it",
		hint: "You can drop constraint u_a_key on table u instead."})
	mustExec(t, c, "alter table u drop constraint u_a_key")
	mustExec(t, c, "insert into u values (1, 5, 5)")
	mustExec(t, c, "create table cx (x int)")
	mustExec(t, c, "insert into cx values (1), (1)")
	expectConErr(t, c, "alter table cx add unique (x)", conErr{code: "23505", msg: `could not create unique index "cx_x_key"`,
		detail: "Key (x)=(1) is duplicated.", table: "cx", constraint: "cx_x_key"})
}

// TestForeignKeys: PostgreSQL 15's errors for defining, violating and
// dropping foreign keys, and the referential actions.
func TestForeignKeys(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table parent (id int primary key, name text)")
	mustExec(t, c, "create table child (id int primary key, parent_id int references parent(id), note text)")
	mustExec(t, c, "insert into parent values (1, 'p1'), (2, 'p2'), (3, 'p3')")
	mustExec(t, c, "insert into child values (10, 1, 'ok'), (12, null, 'null fk ok')")
	notPresent := func(table, con, key string) conErr {
		return conErr{code: "23503", msg: `insert or update on table "` + table + `" violates foreign key constraint "` + con + `"`,
			detail: key + ` is not present in table "parent".`, table: table, constraint: con}
	}
	stillRef := func(con, table, key string) conErr {
		return conErr{code: "23503", msg: `update or delete on table "parent" violates foreign key constraint "` + con + `" on table "` + table + `"`,
			detail: key + ` is still referenced from table "` + table + `".`, table: table, constraint: con}
	}
	expectConErr(t, c, "insert into child values (11, 99, 'bad')", notPresent("child", "child_parent_id_fkey", "Key (parent_id)=(99)"))
	expectConErr(t, c, "update child set parent_id = 98 where id = 10", notPresent("child", "child_parent_id_fkey", "Key (parent_id)=(98)"))
	mustExec(t, c, "update child set parent_id = 2 where id = 10")
	expectConErr(t, c, "delete from parent where id = 2", stillRef("child_parent_id_fkey", "child", "Key (id)=(2)"))
	expectConErr(t, c, "update parent set id = 5 where id = 2", stillRef("child_parent_id_fkey", "child", "Key (id)=(2)"))
	mustExec(t, c, "update parent set name = 'renamed' where id = 2")
	mustExec(t, c, "delete from parent where id = 3")

	// the actions
	mustExec(t, c, "create table c_cascade (id int, pid int references parent on delete cascade on update cascade)")
	mustExec(t, c, "create table c_setnull (id int, pid int references parent on delete set null)")
	mustExec(t, c, "create table c_setdef (id int, pid int default 1 references parent on delete set default)")
	mustExec(t, c, "create table c_restrict (id int, pid int references parent on delete restrict)")
	mustExec(t, c, "insert into parent values (7, 'p7'), (8, 'p8'), (9, 'p9'), (6, 'p6')")
	mustExec(t, c, "insert into c_cascade values (1, 7), (2, 7), (3, 8)")
	mustExec(t, c, "insert into c_setnull values (1, 8), (2, 9)")
	mustExec(t, c, "insert into c_setdef values (1, 9)")
	mustExec(t, c, "insert into c_restrict values (1, 6)")
	mustExec(t, c, "delete from parent where id = 7")
	if got := queryText(t, c, "select id, pid from c_cascade order by id"); got != "3,8" {
		t.Errorf("ON DELETE CASCADE: %s", got)
	}
	// c_setnull's NO ACTION on update refuses before the cascade helps
	expectConErr(t, c, "update parent set id = 80 where id = 8", stillRef("c_setnull_pid_fkey", "c_setnull", "Key (id)=(8)"))
	mustExec(t, c, "delete from c_setnull where pid = 8")
	mustExec(t, c, "update parent set id = 80 where id = 8")
	if got := queryText(t, c, "select id, pid from c_cascade order by id"); got != "3,80" {
		t.Errorf("ON UPDATE CASCADE: %s", got)
	}
	mustExec(t, c, "delete from parent where id = 9")
	if got := queryText(t, c, "select id, pid from c_setnull order by id"); got != "2,NULL" {
		t.Errorf("ON DELETE SET NULL: %s", got)
	}
	if got := queryText(t, c, "select id, pid from c_setdef order by id"); got != "1,1" {
		t.Errorf("ON DELETE SET DEFAULT: %s", got)
	}
	expectConErr(t, c, "delete from parent where id = 6", stillRef("c_restrict_pid_fkey", "c_restrict", "Key (id)=(6)"))
	// SET DEFAULT to the key being deleted: the recheck refuses
	expectConErr(t, c, "delete from parent where id = 1", stillRef("c_setdef_pid_fkey", "c_setdef", "Key (id)=(1)"))

	// composite keys, MATCH SIMPLE and FULL
	mustExec(t, c, "create table cp (a int, b int, primary key (a, b))")
	mustExec(t, c, "create table cc (x int, a int, b int, foreign key (a, b) references cp (a, b))")
	mustExec(t, c, "create table cc_full (x int, a int, b int, foreign key (a, b) references cp match full)")
	mustExec(t, c, "insert into cp values (1, 1), (1, 2)")
	mustExec(t, c, "insert into cc values (1, 1, 1), (3, 1, null), (4, null, 99)")
	expectConErr(t, c, "insert into cc values (2, 2, 1)", conErr{code: "23503", msg: `insert or update on table "cc" violates foreign key constraint "cc_a_b_fkey"`,
		detail: `Key (a, b)=(2, 1) is not present in table "cp".`, table: "cc", constraint: "cc_a_b_fkey"})
	expectConErr(t, c, "insert into cc_full values (1, 1, null)", conErr{code: "23503", msg: `insert or update on table "cc_full" violates foreign key constraint "cc_full_a_b_fkey"`,
		detail: "MATCH FULL does not allow mixing of null and nonnull key values.", table: "cc_full", constraint: "cc_full_a_b_fkey"})
	mustExec(t, c, "insert into cc_full values (1, null, null)")
	expectConErr(t, c, "delete from cp where a = 1 and b = 1", conErr{code: "23503",
		msg:    `update or delete on table "cp" violates foreign key constraint "cc_a_b_fkey" on table "cc"`,
		detail: `Key (a, b)=(1, 1) is still referenced from table "cc".`, table: "cc", constraint: "cc_a_b_fkey"})

	// definition errors
	mustExec(t, c, "create table t1 (id int, name text)")
	expectConErr(t, c, "create table bad1 (x text references t1(name))", conErr{code: "42830", msg: `there is no unique constraint matching given keys for referenced table "t1"`})
	expectConErr(t, c, "create table bad2 (x int references t1)", conErr{code: "42704", msg: `there is no primary key for referenced table "t1"`})
	expectConErr(t, c, "create table bad3 (x text references parent(id))", conErr{code: "42804", msg: `foreign key constraint "bad3_x_fkey" cannot be implemented`,
		detail: `Key columns "x" and "id" are of incompatible types: text and integer.`})
	expectConErr(t, c, "create table bad4 (x int references nope(id))", conErr{code: "42P01", msg: `relation "nope" does not exist`})
	expectConErr(t, c, "create table bad5 (x int references parent(nope))", conErr{code: "42703", msg: `column "nope" referenced in foreign key constraint does not exist`})
	expectConErr(t, c, "create table bad6 (a int, b int, foreign key (a, b) references parent)", conErr{code: "42830", msg: "number of referencing and referenced columns for foreign key disagree"})
	expectConErr(t, c, "create table bad7 (a int references parent deferrable)", conErr{code: "0A000", msg: "DEFERRABLE constraints are not supported"})
	mustExec(t, c, "create table ok8 (a int references parent not deferrable)")
	mustExec(t, c, "create table pp (id int primary key) partition by range (id)")
	mustExec(t, c, "create table ok9 (a int references pp)") // fkpartlock_test.go

	// ALTER TABLE ADD FOREIGN KEY validates the rows
	mustExec(t, c, "create table cx (x int, y int)")
	mustExec(t, c, "insert into cx values (1, 1), (1, null), (2, 77)")
	expectConErr(t, c, "alter table cx add constraint cx_fk foreign key (y) references parent(id)", conErr{code: "23503",
		msg: `insert or update on table "cx" violates foreign key constraint "cx_fk"`, detail: `Key (y)=(77) is not present in table "parent".`, table: "cx", constraint: "cx_fk"})
	mustExec(t, c, "alter table cx add constraint cx_fk foreign key (y) references parent(id) not valid")
	expectConErr(t, c, "alter table cx validate constraint cx_fk", conErr{code: "23503",
		msg: `insert or update on table "cx" violates foreign key constraint "cx_fk"`, detail: `Key (y)=(77) is not present in table "parent".`, table: "cx", constraint: "cx_fk"})
	if got := queryText(t, c, "select pg_get_constraintdef(oid) from pg_constraint where conname = 'cx_fk'"); got != "FOREIGN KEY (y) REFERENCES parent(id) NOT VALID" {
		t.Errorf("NOT VALID foreign key: %s", got)
	}
	mustExec(t, c, "alter table cx drop constraint cx_fk")

	// DROP and TRUNCATE of referenced tables
	expectConErr(t, c, "drop table cp", conErr{code: "2BP01", msg: "cannot drop table cp because other objects depend on it",
		detail: "constraint cc_a_b_fkey on table cc depends on table cp\nconstraint cc_full_a_b_fkey on table cc_full depends on table cp",
		hint:   "Use DROP ... CASCADE to drop the dependent objects too."})
	expectConErr(t, c, "truncate cp", conErr{code: "0A000", msg: "cannot truncate a table referenced in a foreign key constraint",
		detail: `Table "cc" references "cp".`, hint: `Truncate table "cc" at the same time, or use TRUNCATE ... CASCADE.`})
	mustExec(t, c, "truncate cp, cc, cc_full")
	mustExec(t, c, "drop table cp cascade")
	if got := queryText(t, c, "select count(*) from pg_constraint where conrelid in ('cc'::regclass, 'cc_full'::regclass)"); got != "0" {
		t.Errorf("DROP ... CASCADE left %s foreign keys", got)
	}
	expectConErr(t, c, "alter table parent drop constraint parent_pkey", conErr{code: "2BP01",
		msg:    "cannot drop constraint parent_pkey on table parent because other objects depend on it",
		detail: "constraint child_parent_id_fkey on table child depends on index parent_pkey\nconstraint c_cascade_pid_fkey on table c_cascade depends on index parent_pkey\nconstraint c_setnull_pid_fkey on table c_setnull depends on index parent_pkey\nconstraint c_setdef_pid_fkey on table c_setdef depends on index parent_pkey\nconstraint c_restrict_pid_fkey on table c_restrict depends on index parent_pkey\nconstraint ok8_a_fkey on table ok8 depends on index parent_pkey",
		hint:   "Use DROP ... CASCADE to drop the dependent objects too."})
	mustExec(t, c, "drop table child, c_cascade, c_setnull, c_setdef, c_restrict, ok8, parent")
}

// TestPgbenchForeignKeys: pgbench -i --foreign-keys's statements, and that
// its drop of all four tables in one statement works with the keys there.
func TestPgbenchForeignKeys(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	for _, sql := range []string{
		"create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))",
		"create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)",
		"create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)",
		"create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)",
		"insert into pgbench_branches(bid,bbalance) values(1,0)",
		"insert into pgbench_tellers(tid,bid,tbalance) values (1,1,0)",
		"insert into pgbench_accounts(aid,bid,abalance,filler) select aid, 1, 0, '' from generate_series(1, 1000) as aid",
		"alter table pgbench_branches add primary key (bid)",
		"alter table pgbench_tellers add primary key (tid)",
		"alter table pgbench_accounts add primary key (aid)",
		"alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
		"alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
		"alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
		"alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
		"alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
		"insert into pgbench_history (tid, bid, aid, delta, mtime) values (1, 1, 7, 5, now())",
	} {
		mustExec(t, c, sql)
	}
	expectConErr(t, c, "insert into pgbench_history (tid, bid, aid, delta, mtime) values (1, 1, 7000, 5, now())", conErr{code: "23503",
		msg:    `insert or update on table "pgbench_history" violates foreign key constraint "pgbench_history_aid_fkey"`,
		detail: `Key (aid)=(7000) is not present in table "pgbench_accounts".`, table: "pgbench_history", constraint: "pgbench_history_aid_fkey"})
	if got := queryText(t, c, "select conname, pg_get_constraintdef(oid, true) from pg_constraint where contype = 'f' order by conname"); got !=
		"pgbench_accounts_bid_fkey,FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)|"+
			"pgbench_history_aid_fkey,FOREIGN KEY (aid) REFERENCES pgbench_accounts(aid)|"+
			"pgbench_history_bid_fkey,FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)|"+
			"pgbench_history_tid_fkey,FOREIGN KEY (tid) REFERENCES pgbench_tellers(tid)|"+
			"pgbench_tellers_bid_fkey,FOREIGN KEY (bid) REFERENCES pgbench_branches(bid)" {
		t.Errorf("foreign keys: %s", got)
	}
	mustExec(t, c, "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
}

// TestConstraintsSurviveRestart: the catalog file keeps CHECK and FOREIGN
// KEY constraints, and they are enforced after a restart.
func TestConstraintsSurviveRestart(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table parent (id int primary key)")
	mustExec(t, c, "create table child (id int check (id > 0), pid int references parent on delete cascade)")
	mustExec(t, c, "insert into parent values (1), (2)")
	mustExec(t, c, "insert into child values (1, 1), (2, 2)")
	c.Close(context.Background())
	inst.Restart(t)
	c = inst.Connect(t)
	if got := queryText(t, c, "select conname, pg_get_constraintdef(oid) from pg_constraint where conrelid = 'child'::regclass order by 1"); got !=
		"child_id_check,CHECK ((id > 0))|child_pid_fkey,FOREIGN KEY (pid) REFERENCES parent(id) ON DELETE CASCADE" {
		t.Errorf("after restart: %s", got)
	}
	expectConErr(t, c, "insert into child values (0, 1)", conErr{code: "23514", msg: `new row for relation "child" violates check constraint "child_id_check"`,
		detail: "Failing row contains (0, 1).", table: "child", constraint: "child_id_check"})
	expectConErr(t, c, "insert into child values (3, 3)", conErr{code: "23503", msg: `insert or update on table "child" violates foreign key constraint "child_pid_fkey"`,
		detail: `Key (pid)=(3) is not present in table "parent".`, table: "child", constraint: "child_pid_fkey"})
	mustExec(t, c, "delete from parent where id = 1")
	if got := queryText(t, c, "select id, pid from child"); got != "2,2" {
		t.Errorf("cascade after restart: %s", got)
	}
}
