package server_test

import (
	"context"
	"testing"

	"lockd/internal/lockdtest"
)

// Statements a client prepares with a named Parse and those SQL PREPARE
// makes share one namespace: each side can execute, list and drop the
// other's, as in PostgreSQL.
func TestPreparedNamespace(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	mustExec(t, c, "create table acc (aid int primary key, abalance int)")
	mustExec(t, c, "insert into acc select g, g * 10 from generate_series(1, 10) g")

	// a protocol-level statement, run by SQL EXECUTE
	if _, err := pc.Prepare(ctx, "byaid", "select abalance from acc where aid = $1", nil); err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, c, "execute byaid(4)"); got != "40" {
		t.Fatalf("execute byaid(4) = %q", got)
	}
	if got := queryText(t, c, "select name, statement, parameter_types, from_sql from pg_prepared_statements"); got != "byaid,select abalance from acc where aid = $1,{integer},f" {
		t.Fatalf("pg_prepared_statements: %q", got)
	}
	// a SQL statement, run through Bind/Execute
	mustExec(t, c, "prepare total as select sum(abalance) from acc where aid <= $1")
	rr := pc.ExecPrepared(ctx, "total", [][]byte{[]byte("3")}, nil, nil).Read()
	if rr.Err != nil || len(rr.Rows) != 1 || string(rr.Rows[0][0]) != "60" {
		t.Fatalf("Bind of SQL-prepared total: %v %q", rr.Err, rr.Rows)
	}
	// one namespace: a Parse may not reuse a SQL name, nor PREPARE a Parse's
	if _, err := pc.Prepare(ctx, "total", "select 1", nil); err == nil {
		t.Fatal("Parse of an existing name succeeded")
	} else if pe := pgErr(t, err); pe.Code != "42P05" || pe.Message != `prepared statement "total" already exists` {
		t.Fatalf("Parse of an existing name: %s %s", pe.Code, pe.Message)
	}
	_, err := c.Exec(ctx, "prepare byaid as select 1")
	if pe := pgErr(t, err); pe.Code != "42P05" {
		t.Fatalf("PREPARE of a Parse's name: %s %s", pe.Code, pe.Message)
	}
	// DEALLOCATE drops a protocol statement; Close a SQL one
	mustExec(t, c, "deallocate byaid")
	if err := pc.Deallocate(ctx, "total"); err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, c, "select count(*) from pg_prepared_statements"); got != "0" {
		t.Fatalf("after DEALLOCATE and Close: %s statements", got)
	}
	_, err = c.Exec(ctx, "execute byaid(1)")
	if pe := pgErr(t, err); pe.Code != "26000" || pe.Message != `prepared statement "byaid" does not exist` {
		t.Fatalf("execute of a deallocated statement: %s %s", pe.Code, pe.Message)
	}
	// the plan cache counts of a protocol statement: pgbench -M prepared
	if _, err := pc.Prepare(ctx, "sel", "select abalance from acc where aid = $1", nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		if rr := pc.ExecPrepared(ctx, "sel", [][]byte{[]byte("2")}, nil, nil).Read(); rr.Err != nil {
			t.Fatal(rr.Err)
		}
	}
	if got := queryText(t, c, "select generic_plans, custom_plans from pg_prepared_statements where name = 'sel'"); got != "3,5" {
		t.Fatalf("plan counts after 8 executions: %s", got)
	}
}
