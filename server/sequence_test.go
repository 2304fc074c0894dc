package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// nextvals calls nextval(seq) n times on each of workers connections at
// once and returns every value handed out.
func nextvals(t *testing.T, inst *lockdtest.Instance, seq string, workers, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conns := make([]*pgx.Conn, workers)
	for i := range conns {
		conns[i] = inst.Connect(t)
	}
	vals := make([][]int64, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				var v int64
				if err := conns[w].QueryRow(ctx, "select nextval($1)", seq).Scan(&v); err != nil {
					errs <- err
					return
				}
				vals[w] = append(vals[w], v)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var all []int64
	for _, v := range vals {
		all = append(all, v...)
	}
	return all
}

func distinct(t *testing.T, vals []int64) map[int64]bool {
	t.Helper()
	seen := map[int64]bool{}
	for _, v := range vals {
		if seen[v] {
			t.Fatalf("value %d handed out twice", v)
		}
		seen[v] = true
	}
	return seen
}

func TestSequenceConcurrentNextval(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create sequence s")
	mustExec(t, c, "create sequence c cache 10")
	const workers, n = 8, 1000

	seen := distinct(t, nextvals(t, inst, "s", workers, n))
	if len(seen) != workers*n {
		t.Fatalf("%d values, want %d", len(seen), workers*n)
	}
	for v := int64(1); v <= workers*n; v++ {
		if !seen[v] {
			t.Fatalf("value %d never handed out (no cache: the values are 1..%d)", v, workers*n)
		}
	}
	if got := queryText(t, c, "select last_value, is_called from s"); got != fmt.Sprintf("%d,t", workers*n) {
		t.Fatalf("s after the run: %s", got)
	}

	// with a cache every session takes 10 values at a time: distinct, and
	// at most 10 per session left unused
	seen = distinct(t, nextvals(t, inst, "c", workers, n))
	if len(seen) != workers*n {
		t.Fatalf("cached: %d values, want %d", len(seen), workers*n)
	}
	var last int64
	if err := c.QueryRow(context.Background(), "select last_value from c").Scan(&last); err != nil {
		t.Fatal(err)
	}
	for v := range seen {
		if v < 1 || v > last {
			t.Fatalf("cached: value %d outside 1..%d", v, last)
		}
	}
	if last > workers*n+workers*10 {
		t.Fatalf("cached: last_value %d, more than %d", last, workers*n+workers*10)
	}
}

func TestSerialConcurrentInserts(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create table t (id serial primary key, w int)")
	const workers, n = 4, 250
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		cw := inst.Connect(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := cw.Exec(context.Background(), "insert into t (w) values ($1)", w); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := queryText(t, c, "select count(*), count(distinct id), min(id), max(id) from t"); got != "1000,1000,1,1000" {
		t.Fatalf("serial ids: %s", got)
	}
}

func TestSequenceSurvivesRestart(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create sequence s increment 5")
	mustExec(t, c, "create sequence c cache 20")
	mustExec(t, c, "create table t (id serial, v text)")
	mustExec(t, c, "create table ti (id bigint generated always as identity, v text)")
	mustExec(t, c, "insert into t (v) values ('a'), ('b'), ('c')")
	mustExec(t, c, "insert into ti (v) values ('a'), ('b')")
	for range 3 {
		mustExec(t, c, "select nextval('s')")
	}
	mustExec(t, c, "select nextval('c')") // this session caches 1..20
	mustExec(t, c, "create sequence r")
	mustExec(t, c, "select setval('r', 41, false)")
	mustExec(t, c, "create sequence a")
	mustExec(t, c, "alter sequence a restart with 70 increment 2")
	mustExec(t, c, "begin")
	mustExec(t, c, "select nextval('s')") // not given back by the rollback
	mustExec(t, c, "rollback")
	before := queryText(t, c, "select sequencename, last_value from pg_sequences order by 1")

	inst.Restart(t)
	c = inst.Connect(t)
	if got := queryText(t, c, "select sequencename, last_value from pg_sequences order by 1"); got != before {
		t.Fatalf("pg_sequences after restart:\n%s\nwant\n%s", got, before)
	}
	if got := queryText(t, c, "select * from s"); got != "16,29,t" {
		t.Fatalf("s after restart: %s", got)
	}
	checks := []struct{ sql, want string }{
		{"select nextval('s')", "21"},
		{"select * from s", "21,32,t"}, // the first nextval after a restart logs again
		{"select nextval('c')", "21"},  // the cached values are gone with the session
		{"select nextval('r')", "41"},
		{"select nextval('a'), nextval('a')", "70,72"},
		{"insert into t (v) values ('d') returning id", "4"},
		{"insert into ti (v) values ('c') returning id", "3"},
	}
	for _, ch := range checks {
		if got := queryText(t, c, ch.sql); got != ch.want {
			t.Fatalf("%s after restart: %s, want %s", ch.sql, got, ch.want)
		}
	}
	_, err := inst.Connect(t).Exec(context.Background(), "select currval('s')")
	if pe := pgErr(t, err); pe.Code != "55000" {
		t.Fatalf("currval in a new session: %v", err)
	}
	_, err = c.Exec(context.Background(), "insert into ti values (9, 'x')")
	if pe := pgErr(t, err); pe.Code != "428C9" {
		t.Fatalf("identity after restart: %v", err)
	}
	// drops are persisted too
	mustExec(t, c, "drop table t")
	mustExec(t, c, "drop sequence s")
	inst.Restart(t)
	c = inst.Connect(t)
	if got := queryText(t, c, "select relname from pg_class where relkind = 'S' order by 1"); got != "a|c|r|ti_id_seq" {
		t.Fatalf("sequences after drops and restart: %s", got)
	}
}

// A crash (no shutdown checkpoint) loses the values handed out since the
// last checkpoint: lockd has no WAL (docs/sql-compat.md).
func TestSequenceCrashLosesValuesSinceCheckpoint(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	mustExec(t, c, "create sequence s")
	mustExec(t, c, "select nextval('s')")
	mustExec(t, c, "select nextval('s')")
	if err := inst.Server.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "select nextval('s')")
	c.Close(context.Background())
	inst.Crash(t)
	inst.Restart(t)
	c = inst.Connect(t)
	if got := queryText(t, c, "select nextval('s')"); got != "3" {
		t.Fatalf("nextval after a crash: %s, want 3 (the checkpoint had 2)", got)
	}
}

func TestSequenceAlterBlocksNextval(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b, watch := inst.Connect(t), inst.Connect(t), inst.Connect(t)
	mustExec(t, a, "create sequence s")
	mustExec(t, a, "select nextval('s')")
	// nextval in two open transactions at once: RowExclusiveLock does not
	// conflict with itself
	mustExec(t, a, "begin")
	mustExec(t, a, "select nextval('s')")
	mustExec(t, b, "begin")
	if got := queryText(t, b, "select nextval('s')"); got != "3" {
		t.Fatalf("concurrent nextval: %s", got)
	}
	mustExec(t, b, "commit")
	mustExec(t, a, "commit")

	// ALTER SEQUENCE holds ShareRowExclusiveLock to commit: nextval waits
	mustExec(t, a, "begin")
	mustExec(t, a, "alter sequence s restart with 100")
	var bPID int32
	if err := b.QueryRow(ctx, "select pg_backend_pid()").Scan(&bPID); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		var v int64
		if err := b.QueryRow(ctx, "select nextval('s')").Scan(&v); err != nil {
			got <- err.Error()
			return
		}
		got <- fmt.Sprint(v)
	}()
	for {
		w := queryText(t, watch, fmt.Sprintf("select mode from pg_locks where pid = %d and not granted", bPID))
		if w == "RowExclusiveLock" {
			break
		}
		select {
		case v := <-got:
			t.Fatalf("nextval did not wait for the ALTER: %s", v)
		case <-time.After(5 * time.Millisecond):
		}
	}
	mustExec(t, a, "commit")
	if v := <-got; v != "100" {
		t.Fatalf("nextval after the ALTER committed: %s, want 100", v)
	}
}

func TestSequenceExtendedProtocol(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	mustExec(t, c, "create sequence s start 10")
	// a text parameter is looked up when the call runs
	var v int64
	if err := c.QueryRow(ctx, "select nextval($1::text)", "s").Scan(&v); err != nil || v != 10 {
		t.Fatalf("nextval($1::text): %d %v", v, err)
	}
	if err := c.QueryRow(ctx, "select setval($1, $2, $3)", "s", int64(50), true).Scan(&v); err != nil || v != 50 {
		t.Fatalf("setval($1, $2, $3): %d %v", v, err)
	}
	if err := c.QueryRow(ctx, "select nextval('s'::regclass)").Scan(&v); err != nil || v != 51 {
		t.Fatalf("nextval: %d %v", v, err)
	}
	_, err := c.Exec(ctx, "select nextval($1::text)", "nope")
	if pe := pgErr(t, err); pe.Code != "42P01" || pe.Message != `relation "nope" does not exist` {
		t.Fatalf("unknown sequence: %v", err)
	}
	// a prepared INSERT keeps taking values from the serial's sequence
	mustExec(t, c, "create table t (id serial, v int)")
	for i := range 5 {
		mustExec(t, c, "insert into t (v) values ($1)", i)
	}
	if got := queryText(t, c, "select string_agg(id::text, ',' order by id) from t"); got != "1,2,3,4,5" {
		t.Fatalf("serial through the extended protocol: %s", got)
	}
}
