package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// TestAlterTableLockQueue is the lock queue ALTER TABLE ADD COLUMN makes
// behind a long-running reader, as PostgreSQL 15 shows it: session A's
// open transaction holds AccessShareLock, B's ALTER waits for
// AccessExclusiveLock (pg_locks: not granted; pg_blocking_pids: A), and
// C's plain SELECT queues behind B (blocked by B, whose request conflicts,
// not by A, whose lock does not). When A commits, B runs, then C, which
// sees the new column.
func TestAlterTableLockQueue(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	a, b, c, obs := inst.Connect(t), inst.Connect(t), inst.Connect(t), inst.Connect(t)
	ctx := context.Background()
	mustExec(t, a, "create table q (id int primary key, v text)")
	mustExec(t, a, "insert into q values (1, 'a'), (2, 'b')")
	apid, bpid, cpid := backendPID(t, a), backendPID(t, b), backendPID(t, c)

	mustExec(t, a, "begin")
	if got := queryText(t, a, "select count(*) from q"); got != "2" {
		t.Fatalf("count: %s", got)
	}
	run := func(conn *pgx.Conn, sql string) chan string {
		ch := make(chan string, 1)
		go func() {
			rs, err := conn.PgConn().Exec(ctx, sql).ReadAll()
			if err != nil {
				ch <- "error: " + err.Error()
				return
			}
			out := ""
			for _, f := range rs[len(rs)-1].FieldDescriptions {
				out += f.Name + " "
			}
			for _, r := range rs[len(rs)-1].Rows {
				out += "|"
				for i, v := range r {
					if i > 0 {
						out += ","
					}
					out += string(v)
				}
			}
			ch <- out + "|" + rs[len(rs)-1].CommandTag.String()
		}()
		return ch
	}
	waiting := func(pid int32) func() bool {
		return func() bool {
			return queryText(t, obs, "select count(*) from pg_locks where pid = "+itoa(pid)+" and not granted") == "1"
		}
	}

	alter := run(b, "alter table q add column w int default 7")
	waitFor(t, "the ALTER to wait", waiting(bpid))
	if got := queryText(t, obs, "select locktype, relation::regclass, mode, granted from pg_locks where pid = "+itoa(bpid)+
		" and locktype = 'relation'"); got != "relation,q,AccessExclusiveLock,f" {
		t.Errorf("ALTER's lock: %s", got)
	}
	if got := queryText(t, obs, "select pg_blocking_pids("+itoa(bpid)+")"); got != "{"+itoa(apid)+"}" {
		t.Errorf("ALTER blocked by %s, want {%d}", got, apid)
	}
	if got := queryText(t, obs, "select wait_event_type, wait_event from pg_stat_activity where pid = "+itoa(bpid)); got != "Lock,relation" {
		t.Errorf("ALTER's wait event: %s", got)
	}

	sel := run(c, "select * from q order by id")
	waitFor(t, "the SELECT to queue behind the ALTER", waiting(cpid))
	if got := queryText(t, obs, "select relation::regclass, mode, granted from pg_locks where pid = "+itoa(cpid)+
		" and locktype = 'relation' and not granted"); got != "q,AccessShareLock,f" {
		t.Errorf("SELECT's lock: %s", got)
	}
	if got := queryText(t, obs, "select pg_blocking_pids("+itoa(cpid)+")"); got != "{"+itoa(bpid)+"}" {
		t.Errorf("SELECT blocked by %s, want {%d} (the queued ALTER)", got, bpid)
	}
	select {
	case r := <-alter:
		t.Fatalf("ALTER ran while A held its lock: %s", r)
	case r := <-sel:
		t.Fatalf("SELECT ran past the queued ALTER: %s", r)
	default:
	}

	mustExec(t, a, "commit")
	if got := <-alter; got != "|ALTER TABLE" {
		t.Errorf("ALTER: %s", got)
	}
	if got := <-sel; got != "id v w |1,a,7|2,b,7|SELECT 2" {
		t.Errorf("SELECT after the ALTER: %s", got)
	}
}

// TestAlterTableRestart: rows written before ADD COLUMN and DROP COLUMN
// read correctly after a clean restart, and the catalog keeps dropped
// attributes, attribute numbers and missing values.
func TestAlterTableRestart(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table r (a int primary key, b text, c int)")
	mustExec(t, c, "insert into r select g, 'b' || g, g * 10 from generate_series(1, 300) g")
	mustExec(t, c, "alter table r add column d int default 5")
	mustExec(t, c, "insert into r values (301, 'b301', 3010, 6)")
	mustExec(t, c, "alter table r drop column b")
	mustExec(t, c, "alter table r add column e text default 'x', add column f timestamptz")
	mustExec(t, c, "insert into r values (302, 3020, 7, 'y', '2024-01-02 03:04:05+00')")
	mustExec(t, c, "alter table r alter column c type bigint")
	mustExec(t, c, "alter table r drop column d")
	mustExec(t, c, "alter table r add column g int default 9")
	mustExec(t, c, "create table p (k int, v int) partition by range (k)")
	mustExec(t, c, "create table p1 partition of p for values from (0) to (100)")
	mustExec(t, c, "insert into p values (1, 10), (2, 20)")
	mustExec(t, c, "alter table p add column w int default 3")
	mustExec(t, c, "alter table p drop column v")
	mustExec(t, c, "insert into p values (3, 4)")
	check := func(when string) {
		t.Helper()
		if got := queryText(t, c, "select count(*), sum(a), sum(c), count(e), count(f), sum(g) from r"); got != "302,45753,457530,302,1,2718" {
			t.Errorf("%s: aggregates %s", when, got)
		}
		if got := queryText(t, c, "select * from r where a in (1, 301, 302) order by a"); got !=
			"1,10,x,NULL,9|301,3010,x,NULL,9|302,3020,y,2024-01-02 03:04:05+00,9" {
			t.Errorf("%s: rows %s", when, got)
		}
		if got := queryText(t, c, "select attname, attnum, attisdropped, atthasmissing from pg_attribute where attrelid = 'r'::regclass and attnum > 0 order by attnum"); got !=
			"a,1,f,f|........pg.dropped.2........,2,t,f|c,3,f,f|........pg.dropped.4........,4,t,f|e,5,f,f|f,6,f,f|g,7,f,t" {
			t.Errorf("%s: pg_attribute %s", when, got)
		}
		if got := queryText(t, c, "select * from p order by k"); got != "1,3|2,3|3,4" {
			t.Errorf("%s: partitioned %s", when, got)
		}
	}
	check("before restart")
	c.Close(context.Background())
	inst.Restart(t)
	c = inst.Connect(t)
	check("after restart")
	// and the table takes more columns and rows as before
	mustExec(t, c, "alter table r add column h int default 1")
	mustExec(t, c, "insert into r (a) values (303)")
	if got := queryText(t, c, "select a, c, e, g, h from r where a >= 302 order by a"); got != "302,3020,y,9,1|303,NULL,x,9,1" {
		t.Errorf("after a restart and ADD COLUMN: %s", got)
	}
}

// TestDDLReadsRowsCommittedWhileWaiting: DDL that waited for its lock
// behind a writer reads the rows that writer committed, as PostgreSQL's
// index builds (SnapshotAny) and validation scans (GetLatestSnapshot) do:
// the new index has them, a new CHECK is checked against them.
func TestDDLReadsRowsCommittedWhileWaiting(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	w, d := inst.Connect(t), inst.Connect(t)
	ctx := context.Background()
	mustExec(t, w, "create table lw (a int, b int)")
	mustExec(t, w, "insert into lw values (1, 1)")
	dpid := backendPID(t, d)
	for _, tc := range []struct {
		insert, ddl, check, want string
	}{
		{"insert into lw (a, b) values (100, 100)", "create unique index lw_a on lw (a)",
			"select b from lw where a = 100", "100"},
		{"insert into lw (a, b) values (200, 200)", "alter table lw add column c int default 3, add constraint lw_b_key unique (b)",
			"select a, c from lw where b = 200", "200,3"},
		{"insert into lw (a, b) values (-1, -1)", "alter table lw add constraint lw_pos check (a > 0)",
			`error: ERROR: check constraint "lw_pos" of relation "lw" is violated by some row (SQLSTATE 23514)`, ""},
	} {
		mustExec(t, w, "begin")
		mustExec(t, w, tc.insert)
		done := make(chan string, 1)
		go func() {
			if _, err := d.Exec(ctx, tc.ddl); err != nil {
				done <- "error: " + err.Error()
				return
			}
			done <- ""
		}()
		waitFor(t, "the DDL to wait", func() bool {
			return queryText(t, w, "select count(*) from pg_locks where pid = "+itoa(dpid)+" and not granted") == "1"
		})
		mustExec(t, w, "commit")
		got := <-done
		if strings.HasPrefix(tc.check, "error: ") {
			if got != tc.check {
				t.Errorf("%s: %q, want %q", tc.ddl, got, tc.check)
			}
			continue
		}
		if got != "" {
			t.Fatalf("%s: %s", tc.ddl, got)
		}
		if r := queryText(t, w, tc.check); r != tc.want {
			t.Errorf("after %s: %s gives %q, want %q", tc.ddl, tc.check, r, tc.want)
		}
	}
}
