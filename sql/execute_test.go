package sql

import (
	"strings"
	"testing"
)

// TestStatementEvalCtxKept: a statement's evaluation context is the
// session's kept one, and an EXECUTE's inner statement, which runs while
// the EXECUTE holds it, has its own: the results, the errors and the
// foreign-key checks of statements run inside EXECUTE, after errors and
// in between are as if each had a fresh one, and none is held after.
func TestStatementEvalCtxKept(t *testing.T) {
	e := rowLockEngine(t)
	s := e.testSession(t)
	mustExec(t, s, "create table p (id int primary key)")
	mustExec(t, s, "create table c (id int, pid int references p)")
	mustExec(t, s, "insert into p select generate_series(1, 5)")
	mustExec(t, s, "prepare sel(int) as select id * 10 from p where id <= $1 order by id")
	mustExec(t, s, "prepare ins(int, int) as insert into c values ($1, $2)")
	mustExec(t, s, "prepare div(int) as select 10 / (id - $1) from p order by id")
	check := func(q, want string) {
		t.Helper()
		if got := queryString(t, s, q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
		if s.stmtECBusy || s.stmtEC.Params != nil || s.stmtEC.Ctx != nil {
			t.Errorf("after %s: the statement context is still held", q)
		}
	}
	fails := func(q, want string) {
		t.Helper()
		err := s.exec(q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", q, err, want)
		}
		if s.stmtECBusy || s.stmtEC.Params != nil || s.stmtEC.Ctx != nil {
			t.Errorf("after %s: the statement context is still held", q)
		}
	}
	check("execute sel(3)", "10|20|30")
	check("select count(*) from p", "5")
	mustExec(t, s, "execute ins(1, 2)")
	fails("execute ins(2, 9)", "foreign key")
	fails("execute div(3)", "division by zero")
	fails("select 10 / (id - 4) from p order by id", "division by zero")
	check("execute sel(1)", "10")
	mustExec(t, s, "begin")
	check("execute sel(2)", "10|20")
	fails("execute div(1)", "division by zero")
	fails("select 1", "current transaction is aborted")
	mustExec(t, s, "rollback")
	check("select id, pid from c", "1,2")
	check("execute sel(5)", "10|20|30|40|50")
}
