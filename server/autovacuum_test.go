package server_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"lockd/internal/lockdtest"
	"lockd/sql/commands"
	"lockd/storage"
)

// TestAutoAnalyze: autovacuum analyses a table once its changes pass
// autovacuum_analyze_threshold + autovacuum_analyze_scale_factor ×
// reltuples, not before, and records it as an autoanalyze.
func TestAutoAnalyze(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"autovacuum_naptime=1",
		"autovacuum_analyze_threshold=100", "autovacuum_analyze_scale_factor=0.5"}})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int primary key, v int)")
	mustExec(t, c, "insert into t select g, g % 10 from generate_series(1, 1000) g")
	waitFor(t, "an automatic analyze", func() bool {
		return queryText(t, c, "select autoanalyze_count from pg_stat_user_tables where relname = 't'") == "1"
	})
	got := queryText(t, c, `select n_mod_since_analyze, analyze_count, last_autoanalyze is not null, last_analyze is null,
		(select reltuples from pg_class where relname = 't'), (select count(*) from pg_stats where tablename = 't')
		from pg_stat_user_tables where relname = 't'`)
	if got != "0,0,t,t,1000,2" {
		t.Fatalf("after the automatic analyze: %s", got)
	}
	// 100 + 0.5 × 1000 = 600 changes are not enough; 601 are
	mustExec(t, c, "update t set v = v + 1 where id <= 600")
	time.Sleep(2500 * time.Millisecond) // two rounds
	if got := queryText(t, c, "select autoanalyze_count, n_mod_since_analyze from pg_stat_user_tables where relname = 't'"); got != "1,600" {
		t.Fatalf("below the threshold: autoanalyze_count, n_mod_since_analyze = %s, want 1,600", got)
	}
	mustExec(t, c, "delete from t where id = 1000")
	waitFor(t, "a second automatic analyze", func() bool {
		return queryText(t, c, "select autoanalyze_count from pg_stat_user_tables where relname = 't'") == "2"
	})
}

// TestAutoAnalyzeNeverBlocks: autovacuum passes over a table a session
// has locked, without waiting (the session's own statements go on), and
// analyses it once the lock is gone; autovacuum = off stops it.
func TestAutoAnalyzeNeverBlocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"autovacuum_naptime=1"}})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int)")
	mustExec(t, c, "insert into t select generate_series(1, 200)")
	locker := inst.Connect(t)
	mustExec(t, locker, "begin")
	mustExec(t, locker, "lock table t in share update exclusive mode")
	time.Sleep(2500 * time.Millisecond)
	if got := queryText(t, c, "select autoanalyze_count from pg_stat_user_tables where relname = 't'"); got != "0" {
		t.Fatalf("a locked table was analysed: autoanalyze_count %s", got)
	}
	// no worker waits for the lock
	if got := queryText(t, c, "select count(*) from pg_locks where not granted"); got != "0" {
		t.Fatalf("%s lock requests wait", got)
	}
	mustExec(t, locker, "commit")
	waitFor(t, "the automatic analyze", func() bool {
		return queryText(t, c, "select autoanalyze_count from pg_stat_user_tables where relname = 't'") == "1"
	})

	mustExec(t, c, "alter system set autovacuum = off")
	mustExec(t, c, "select pg_reload_conf()")
	waitFor(t, "autovacuum off", func() bool { return queryText(t, c, "show autovacuum") == "off" })
	mustExec(t, c, "insert into t select generate_series(1, 500)")
	time.Sleep(2500 * time.Millisecond)
	if got := queryText(t, c, "select autoanalyze_count from pg_stat_user_tables where relname = 't'"); got != "1" {
		t.Fatalf("with autovacuum off: autoanalyze_count %s, want 1", got)
	}
}

// TestAutoAnalyzeGivesWay: a statement that comes to wait for a lock the
// autovacuum worker holds makes the worker give the table up, so the
// statement does not wait for a whole ANALYZE.
func TestAutoAnalyzeGivesWay(t *testing.T) {
	// every sampled block takes 5 ms: analysing the whole table would
	// take about 5 s
	commands.SampleBlockHook = func() { time.Sleep(5 * time.Millisecond) }
	t.Cleanup(func() { commands.SampleBlockHook = nil })
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"autovacuum_naptime=1"}})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int, v text)")
	mustExec(t, c, "insert into t select g, repeat('x', 40) from generate_series(1, 100000) g")
	ctx := context.Background()
	waitFor(t, "the worker's lock on t", func() bool {
		return queryText(t, c, "select count(*) from pg_locks l join pg_stat_activity a using (pid) where l.relation = 't'::regclass and a.backend_type = 'autovacuum worker'") == "1"
	})
	start := time.Now()
	if _, err := c.Exec(ctx, "alter table t add column w int"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("ALTER TABLE waited %v behind autovacuum", d)
	}
	if got := queryText(t, c, "select autoanalyze_count from pg_stat_user_tables where relname = 't'"); got != "0" {
		t.Errorf("autoanalyze_count %s: the worker finished instead of giving way", got)
	}
	n, _ := strconv.Atoi(queryText(t, c, "select count(*) from pg_locks where not granted"))
	if n != 0 {
		t.Errorf("%d lock requests wait", n)
	}
}

// TestAutoVacuum: autovacuum vacuums a table once its dead rows pass
// autovacuum_vacuum_threshold + autovacuum_vacuum_scale_factor ×
// reltuples, not before, and records it as an autovacuum; a table that
// only grows is vacuumed once its inserts pass
// autovacuum_vacuum_insert_threshold + its scale factor × reltuples
// (the first table's 1,000 inserts are not more than the default 1,000).
func TestAutoVacuum(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"autovacuum_naptime=1",
		"autovacuum_vacuum_threshold=100"}})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int primary key, v int)")
	mustExec(t, c, "insert into t select g, 0 from generate_series(1, 1000) g")
	waitFor(t, "the automatic analyze", func() bool {
		return queryText(t, c, "select autoanalyze_count from pg_stat_user_tables where relname = 't'") == "1"
	})
	// 100 + 0.2 × 1000 = 300 dead rows are not enough; 301 are
	mustExec(t, c, "update t set v = 1 where id <= 300")
	time.Sleep(2500 * time.Millisecond) // two rounds
	if got := queryText(t, c, "select autovacuum_count, n_dead_tup from pg_stat_user_tables where relname = 't'"); got != "0,300" {
		t.Fatalf("below the threshold: autovacuum_count, n_dead_tup = %s, want 0,300", got)
	}
	mustExec(t, c, "delete from t where id = 1000")
	waitFor(t, "an automatic vacuum", func() bool {
		return queryText(t, c, "select autovacuum_count from pg_stat_user_tables where relname = 't'") == "1"
	})
	got := queryText(t, c, `select n_dead_tup, vacuum_count, last_autovacuum is not null, last_vacuum is null,
		(select reltuples from pg_class where relname = 't'), (select relallvisible > 0 from pg_class where relname = 't')
		from pg_stat_user_tables where relname = 't'`)
	if got != "0,0,t,t,999,t" {
		t.Fatalf("after the automatic vacuum: %s", got)
	}
	// the space of the dead rows is used again: updating every row once
	// more does not double the table
	before := queryText(t, c, "select pg_relation_size('t')")
	mustExec(t, c, "update t set v = 2 where id <= 300")
	if after := queryText(t, c, "select pg_relation_size('t')"); after != before {
		t.Errorf("pg_relation_size went from %s to %s: the vacuumed space was not reused", before, after)
	}

	// 1000 + 0.2 × 0 inserts
	mustExec(t, c, "create table grows (id int)")
	mustExec(t, c, "insert into grows select generate_series(1, 1500)")
	waitFor(t, "an insert-driven automatic vacuum", func() bool {
		return queryText(t, c, "select autovacuum_count, n_ins_since_vacuum from pg_stat_user_tables where relname = 'grows'") == "1,0"
	})
}

// TestAutoVacuumGivesWay: a statement that comes to wait for a lock an
// autovacuum VACUUM holds makes the worker give the table up.
func TestAutoVacuumGivesWay(t *testing.T) {
	// every page takes 5 ms: vacuuming the whole table would take
	// several seconds
	storage.VacuumPageHook = func() { time.Sleep(5 * time.Millisecond) }
	t.Cleanup(func() { storage.VacuumPageHook = nil })
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"autovacuum_naptime=1", "autovacuum_analyze_threshold=2000000000"}})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id int, v text)")
	mustExec(t, c, "insert into t select g, repeat('x', 40) from generate_series(1, 100000) g")
	ctx := context.Background()
	waitFor(t, "the worker's lock on t", func() bool {
		return queryText(t, c, "select count(*) from pg_locks l join pg_stat_activity a using (pid) where l.relation = 't'::regclass and a.backend_type = 'autovacuum worker'") == "1"
	})
	start := time.Now()
	if _, err := c.Exec(ctx, "alter table t add column w int"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("ALTER TABLE waited %v behind autovacuum", d)
	}
	if got := queryText(t, c, "select autovacuum_count from pg_stat_user_tables where relname = 't'"); got != "0" {
		t.Errorf("autovacuum_count %s: the worker finished instead of giving way", got)
	}
}
