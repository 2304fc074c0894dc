package sql

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"lockd/locks"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// execTag runs one statement as a simple Query would and returns its
// command tag.
func (s *Session) execTag(query string) (string, error) {
	sts, params, err := s.Parse(query)
	if err != nil {
		s.Fail()
		s.Sync()
		return "", err
	}
	defer s.Sync()
	st, err := s.Resolve(sts[0])
	if err != nil {
		s.Fail()
		return "", err
	}
	return s.Execute(context.Background(), st, params, func([]types.Datum) error { return nil })
}

func firstValue(t *testing.T, s *Session, query string) string {
	t.Helper()
	sts, params, err := s.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Sync()
	out := ""
	if _, err := s.Execute(context.Background(), sts[0], params, func(row []types.Datum) error {
		out = string(types.AppendText(nil, sts[0].Cols[0].Type, row[0], nil))
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// waitEvent waits until s's session waits on a heavyweight lock of type
// name.
func waitEvent(t *testing.T, s *Session, name string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, n := s.Proc.WaitEvent(); n == name {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %d does not wait for a %s lock", s.PID, name)
		}
		time.Sleep(time.Millisecond)
	}
}

// pause makes the first speculative insertion that reaches step wait until
// release is closed; entered is closed when it got there.
func pause(t *testing.T, step string) (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	plan.SpecHook = func(s string) {
		if s == step && first.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
	}
	t.Cleanup(func() { plan.SpecHook = nil })
	return entered, release
}

// TestUpsertWaitsForSpeculativeToken: a session meeting an insertion that
// is still speculative waits for its speculative token (ShareLock on the
// spectoken the inserter holds ExclusiveLock on, as pg_locks shows), not
// for the inserting transaction, and then updates the row.
func TestUpsertWaitsForSpeculativeToken(t *testing.T) {
	e := rowLockEngine(t)
	a, b := e.testSession(t), e.testSession(t)
	mustExec(t, a, "create table kv (k int primary key, v int)")
	entered, release := pause(t, "indexed")
	doneA := make(chan error, 1)
	go func() { doneA <- a.exec("insert into kv values (1, 1) on conflict (k) do nothing") }()
	<-entered
	xid := a.Txn.CurrentXid()
	doneB := make(chan error, 1)
	go func() {
		doneB <- b.exec("insert into kv values (1, 2) on conflict (k) do update set v = kv.v + excluded.v")
	}()
	waitEvent(t, b, "spectoken")
	var held, waiting bool
	for _, l := range e.locks.Status() {
		if l.Tag.Type != locks.LockTagSpeculativeToken || l.Tag.Field1 != uint32(xid) {
			continue
		}
		switch {
		case l.PID == a.PID && l.Mode == locks.ExclusiveLock && l.Granted:
			held = true
		case l.PID == b.PID && l.Mode == locks.ShareLock && !l.Granted:
			waiting = true
		}
	}
	if !held || !waiting {
		t.Errorf("spectoken of xid %d: inserter holds it %v, waiter waits %v", xid, held, waiting)
	}
	close(release)
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	if got := firstValue(t, a, "select v from kv where k = 1"); got != "3" {
		t.Errorf("v = %s, want 3 (inserted by one, updated by the other)", got)
	}
}

// TestUpsertSuperDeletes: two speculative insertions of one key race past
// the pre-check; the one whose arbiter entry comes second kills its tuple
// and starts over, then finds the other's row: one row, no 23505.
func TestUpsertSuperDeletes(t *testing.T) {
	e := rowLockEngine(t)
	a, b := e.testSession(t), e.testSession(t)
	mustExec(t, a, "create table kv (k int primary key, v int)")
	entered, release := pause(t, "heap")
	type result struct {
		tag string
		err error
	}
	doneA := make(chan result, 1)
	go func() {
		tag, err := a.execTag("insert into kv values (1, 1) on conflict (k) do nothing")
		doneA <- result{tag, err}
	}()
	<-entered // a's tuple is in the heap, not yet in the index
	if tag, err := b.execTag("insert into kv values (1, 2) on conflict (k) do nothing"); err != nil || tag != "INSERT 0 1" {
		t.Fatalf("the second inserter: %q, %v", tag, err)
	}
	close(release)
	if r := <-doneA; r.err != nil || r.tag != "INSERT 0 0" {
		t.Fatalf("the first inserter: %q, %v; want INSERT 0 0", r.tag, r.err)
	}
	if got := firstValue(t, a, "select count(*)::text || ':' || sum(v) from kv"); got != "1:2" {
		t.Errorf("rows: %s, want the second inserter's one row", got)
	}
	// the killed tuple is dead to everyone: VACUUM removes it
	mustExec(t, a, "vacuum kv")
	if got := firstValue(t, a, "select count(*) from kv where k = 1"); got != "1" {
		t.Errorf("after VACUUM: %s rows", got)
	}
}

// TestUpsertLocks: the relation locks of INSERT, ON CONFLICT, UPDATE ...
// FROM and DELETE ... USING, as PostgreSQL 15 holds them after the
// statement.
func TestUpsertLocks(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s,
		"create table w (a int, b int, c int, d int)",
		"create index w_d on w (d)",
		"create unique index w_b on w (b)",
		"alter table w add constraint w_pk primary key (a)",
		"create unique index w_c on w (c)",
		"create table src (k int primary key, v int)",
		"insert into src values (1, 1)",
		"create table pu (k int primary key, n int) partition by range (k)",
		"create table pu1 partition of pu for values from (0) to (10)",
		"create table pu2 partition of pu for values from (10) to (20)",
		"create index pu_n on pu (n)")
	const wAll = "w:RowExclusive w_b:RowExclusive w_c:RowExclusive w_d:RowExclusive w_pk:RowExclusive"
	for _, c := range []struct{ stmt, want string }{
		// a plain INSERT: the executor's index locks end with the statement
		{"insert into w values (1, 1, 1, 1)", "w:RowExclusive"},
		{"insert into pu1 values (1, 1)", "pu1:RowExclusive"},
		{"insert into pu values (1, 1)", "pu:RowExclusive pu1:RowExclusive"},
		// the planner's arbiter inference opens every index and keeps it
		{"insert into w values (1, 1, 1, 1) on conflict (a) do nothing", wAll},
		{"insert into w values (1, 1, 1, 1) on conflict (a) do update set d = 2", wAll},
		// ON CONSTRAINT: the indexes up to the constraint's, in OID order
		{"insert into w values (1, 1, 1, 1) on conflict on constraint w_pk do nothing", "w:RowExclusive w_b:RowExclusive w_d:RowExclusive w_pk:RowExclusive"},
		// no inference: the executor's index locks end with the statement
		{"insert into w values (1, 1, 1, 1) on conflict do nothing", "w:RowExclusive"},
		// a partitioned table: its partitioned indexes, the partition
		// routed to; the partition's indexes only while the statement runs
		{"insert into pu values (1, 1) on conflict (k) do update set n = pu.n + 1", "pu:RowExclusive pu1:RowExclusive pu_n:RowExclusive pu_pkey:RowExclusive"},
		{"insert into pu values (1, 1) on conflict do nothing", "pu:RowExclusive pu1:RowExclusive"},
		{"update w set d = src.v from src where src.k = w.a", wAll + " src:AccessShare src_pkey:AccessShare"},
		{"delete from w using src where src.k = w.a", wAll + " src:AccessShare src_pkey:AccessShare"},
		{"update pu set n = src.v from src where src.k = pu.k and pu.k = 1", "pu:RowExclusive pu1:RowExclusive pu1_pkey:RowExclusive pu1_n_idx:RowExclusive src:AccessShare src_pkey:AccessShare"},
	} {
		lockCase(t, s, c.stmt, c.want, false)
	}

	// a cached generic plan locks the table only; its execution the
	// indexes while it runs
	mustRun(t, s, "set plan_cache_mode = force_generic_plan")
	defer mustRun(t, s, "reset plan_cache_mode")
	st, err := s.PrepareNamed("up", "insert into w values ($1, 1, 1, 1) on conflict (a) do nothing returning a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := execLocks(t, s, st, types.IntDatum(1)); got != sortedWords(wAll) {
		t.Errorf("first execution: %s", got)
	}
	mustRun(t, s, "delete from w")
	if got := execLocks(t, s, st, types.IntDatum(1)); got != "w:RowExclusive" {
		t.Errorf("cached generic plan: %s", got)
	}
}
