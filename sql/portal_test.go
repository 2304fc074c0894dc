package sql

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockd/storage"
)

// pagesOf counts the page accesses of table name so far (pg_statio's
// heap_blks_read + heap_blks_hit).
func pagesOf(t *testing.T, s *Session, name string) uint64 {
	t.Helper()
	io := s.eng.store.RelIO()[storage.RelID(s.Cat().Table(name).RelFile)]
	return io.Hits + io.Reads
}

// TestCursorRunsAsFetched: a cursor's query runs as it is fetched from,
// as PostgreSQL's does: DECLARE and FETCH 1 read the table's first page,
// not the whole table; FETCH ALL reads the rest.
func TestCursorRunsAsFetched(t *testing.T) {
	e := rowLockEngine(t)
	s := e.testSession(t)
	mustExec(t, s, "create table big (i int, pad text)")
	mustExec(t, s, "insert into big select g, repeat('x', 200) from generate_series(1, 5000) g")
	mustExec(t, s, "begin")
	before := pagesOf(t, s, "big")
	mustExec(t, s, "declare c cursor for select i from big")
	if got := queryString(t, s, "fetch 1 from c"); got != "1" {
		t.Fatalf("fetch 1: %q", got)
	}
	first := pagesOf(t, s, "big") - before
	if first != 1 {
		t.Errorf("DECLARE and FETCH 1 read %d pages, want 1", first)
	}
	rows := queryString(t, s, "fetch all from c")
	if n := strings.Count(rows, "|") + 1; n != 4999 {
		t.Fatalf("fetch all: %d rows", n)
	}
	all := pagesOf(t, s, "big") - before
	if all < 100 {
		t.Errorf("the whole scan read %d pages; the table has more than 100", all)
	}
	mustExec(t, s, "commit")
}

// TestCursorKeepsItsRows: while a cursor is open, the backend's xmin stays
// at its snapshot's, so rows deleted and vacuumed by another session
// after DECLARE are still there for its later fetches.
func TestCursorKeepsItsRows(t *testing.T) {
	e := rowLockEngine(t)
	a, b := e.testSession(t), e.testSession(t)
	mustExec(t, a, "create table t (i int, pad text)")
	mustExec(t, a, "insert into t select g, repeat('x', 500) from generate_series(1, 200) g")
	mustExec(t, a, "begin")
	mustExec(t, a, "declare c cursor for select i from t")
	if got := queryString(t, a, "fetch 1 from c"); got != "1" {
		t.Fatalf("fetch 1: %q", got)
	}
	mustExec(t, b, "delete from t where i > 1")
	queryString(t, a, "select 1") // a new statement snapshot, past the delete
	mustExec(t, b, "vacuum t")
	rows := queryString(t, a, "fetch all from c")
	if n := strings.Count(rows, "|") + 1; n != 199 || !strings.HasPrefix(rows, "2|3|") {
		t.Fatalf("fetch all after another session's delete and vacuum: %d rows (%.20s...), want 199", n, rows)
	}
	mustExec(t, a, "commit")
}

// TestCursorBeforeDDL: DDL on a table an open cursor reads makes the
// cursor read its remaining rows first (PostgreSQL refuses the DDL with
// 55006 instead); its fetches then give the rows of its snapshot.
func TestCursorBeforeDDL(t *testing.T) {
	e := rowLockEngine(t)
	s := e.testSession(t)
	mustExec(t, s, "create table t (i int)")
	mustExec(t, s, "insert into t select generate_series(1, 5)")
	mustExec(t, s, "begin")
	mustExec(t, s, "declare c cursor for select i from t")
	if got := queryString(t, s, "fetch 2 from c"); got != "1|2" {
		t.Fatalf("fetch 2: %q", got)
	}
	mustExec(t, s, "truncate t")
	if got := queryString(t, s, "fetch all from c"); got != "3|4|5" {
		t.Errorf("fetch all after TRUNCATE: %q, want 3|4|5", got)
	}
	if got := queryString(t, s, "select count(*) from t"); got != "0" {
		t.Errorf("count after TRUNCATE: %q", got)
	}
	mustExec(t, s, "commit")
}

// TestFetchIsCancellable: the statement context of the FETCH that resumes
// a cursor's query is the one its work answers to: a FETCH that runs out
// of time is cancelled, not the DECLARE's long-gone context.
func TestFetchIsCancellable(t *testing.T) {
	e := rowLockEngine(t)
	s := e.testSession(t)
	mustExec(t, s, "begin")
	mustExec(t, s, "declare c cursor for select pg_sleep(case when g = 1 then 0 else 30 end) from generate_series(1, 2) g")
	queryString(t, s, "fetch 1 from c")
	sts, params, err := s.Parse("fetch 1 from c")
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Resolve(sts[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Execute(ctx, st, params, func([]Datum) error { return nil })
	if err == nil || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "cancel") {
		t.Fatalf("FETCH past its deadline: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("FETCH took %v to notice its deadline", d)
	}
	if s.TxStatus() != TxFailed {
		t.Errorf("after the failed FETCH the block is %c, want E", s.TxStatus())
	}
	mustExec(t, s, "rollback")
}

// TestManyCursors: many cursors of one transaction run side by side,
// each at its own position.
func TestManyCursors(t *testing.T) {
	e := rowLockEngine(t)
	s := e.testSession(t)
	mustExec(t, s, "create table t (i int)")
	mustExec(t, s, "insert into t select generate_series(1, 100)")
	mustExec(t, s, "begin")
	for i := range 20 {
		mustExec(t, s, "declare c"+strconv.Itoa(i)+" cursor for select i from t where i > "+strconv.Itoa(i))
	}
	for round := range 3 {
		for i := range 20 {
			want := strconv.Itoa(i + round + 1)
			if got := queryString(t, s, "fetch 1 from c"+strconv.Itoa(i)); got != want {
				t.Fatalf("round %d, cursor %d: %q, want %s", round, i, got, want)
			}
		}
	}
	mustExec(t, s, "commit")
	if len(s.portals) != 0 || len(s.streaming) != 0 {
		t.Errorf("after commit: %d portals, %d suspended", len(s.portals), len(s.streaming))
	}
}
