package server_test

import (
	"context"
	"testing"

	"lockd/internal/lockdtest"
	"lockd/server"
)

func TestPanicInSessionIsContained(t *testing.T) {
	server.SetTestHook(func(q string) {
		if q == "select 'boom'" {
			panic("test panic")
		}
	})
	defer server.SetTestHook(nil)
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	victim, other := inst.Connect(t), inst.Connect(t)
	mustExec(t, victim, "begin")
	mustExec(t, victim, "select pg_advisory_lock(11)")
	mustExec(t, victim, "select pg_advisory_xact_lock(12)")
	_, err := victim.PgConn().Exec(ctx, "select 'boom'").ReadAll()
	pe := pgErr(t, err)
	if pe.Code != "XX000" || pe.Severity != "FATAL" {
		t.Fatalf("got %s %s %q", pe.Severity, pe.Code, pe.Message)
	}
	// the session is gone, its locks with it; the server carries on
	waitFor(t, "session gone", func() bool { return inst.Server.ActiveSessions() == 1 })
	if got := queryText(t, other, "select count(*) from pg_locks where locktype = 'advisory'"); got != "0" {
		t.Fatalf("advisory locks left: %s", got)
	}
	if got := queryText(t, other, "select pg_try_advisory_lock(11)"); got != "t" {
		t.Fatalf("lock 11 not free: %s", got)
	}
}
