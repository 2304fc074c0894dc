package server_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

// TestVacuumCostDelay: with vacuum_cost_delay set, a VACUUM naps as it
// goes, under wait event Timeout/VacuumDelay, as PostgreSQL's does; a
// cancel ends it in its nap.
func TestVacuumCostDelay(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"autovacuum=off"}})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int, pad text)")
	mustExec(t, c, "insert into t select g, repeat('x', 200) from generate_series(1, 20000) g")
	mustExec(t, c, "delete from t where id % 2 = 0")
	v := inst.Connect(t)
	// a nap after every page: 4 × 20 ms (the longest nap), 600 pages
	mustExec(t, v, "set vacuum_cost_delay = '20ms'")
	mustExec(t, v, "set vacuum_cost_limit = 1")
	pid := queryText(t, v, "select pg_backend_pid()")
	done := make(chan error, 1)
	go func() {
		_, err := v.Exec(context.Background(), "vacuum t")
		done <- err
	}()
	waitFor(t, "VACUUM's nap", func() bool {
		return queryText(t, c, "select wait_event_type || '/' || wait_event from pg_stat_activity where pid = "+pid) == "Timeout/VacuumDelay"
	})
	mustExec(t, c, "select pg_cancel_backend("+pid+")")
	var pe *pgconn.PgError
	if err := <-done; !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("cancelled VACUUM: %v, want 57014", err)
	}
	// a manual VACUUM with the default vacuum_cost_delay (0) never naps;
	// it runs to the end
	mustExec(t, v, "reset vacuum_cost_delay")
	mustExec(t, v, "vacuum t")
	if got := queryText(t, c, "select n_dead_tup from pg_stat_user_tables where relname = 't'"); got != "0" {
		t.Fatalf("after VACUUM: n_dead_tup %s", got)
	}
}

// TestAutovacuumCostDelay: autovacuum paces itself by
// autovacuum_vacuum_cost_delay and autovacuum_vacuum_cost_limit (its
// worker shows the nap in pg_stat_activity).
func TestAutovacuumCostDelay(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"autovacuum_naptime=1",
		"autovacuum_vacuum_cost_delay=20ms", "autovacuum_vacuum_cost_limit=1"}})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int, pad text)")
	mustExec(t, c, "insert into t select g, repeat('x', 200) from generate_series(1, 20000) g")
	mustExec(t, c, "delete from t where id % 2 = 0")
	waitFor(t, "the autovacuum worker's nap", func() bool {
		return queryText(t, c, "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker' and wait_event = 'VacuumDelay'") == "1"
	})
}
