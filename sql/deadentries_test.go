package sql

import (
	"strconv"
	"strings"
	"testing"

	"lockd/storage"
)

// A non-HOT UPDATE that does not read its row through the index it
// keeps unchanged (here a bitmap scan, which is what a heap bloated by
// non-HOT updates makes cheapest) still leaves the key's index entries
// few: the unique check of the new entry removes the entries of versions
// dead to every transaction, as PostgreSQL's _bt_check_unique marks them.
// Before, every update added an entry that only VACUUM removed, each
// later update walked them all, and pgbench's tpcb-like at 32 clients
// fell from 3,000 to 500 tps within a minute. The rows are wide, so that
// a new version never fits its old one's page and no update is HOT.
func TestUpdateKeepsUniqueIndexSmall(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s, "create table br (bid int primary key, bbalance int, filler text)",
		"insert into br select g, 0, repeat('x', 5000) from generate_series(1, 10) g",
		"set enable_indexscan = off", "set enable_seqscan = off")
	if plan := queryString(t, s, "explain (costs off) update br set bbalance = bbalance + 1 where bid = 3"); !strings.Contains(plan, "Bitmap Heap Scan") {
		t.Fatalf("plan %q: want a bitmap scan", plan)
	}
	const n = 2000
	for i := 0; i < n; i++ {
		mustRun(t, s, "update br set bbalance = bbalance + 1 where bid = "+strconv.Itoa(i%10+1))
	}
	if got := queryString(t, s, "select sum(bbalance) from br"); got != strconv.Itoa(n) {
		t.Fatalf("sum(bbalance) = %s, want %d", got, n)
	}
	if got := queryString(t, s, "select n_tup_hot_upd from pg_stat_user_tables where relname = 'br'"); got != "0" {
		t.Fatalf("n_tup_hot_upd = %s, want 0: the updates were meant not to be HOT", got)
	}
	// 10 keys, a live and at most a few not yet dead versions each
	if entries := onlyIndexEntries(t, s, "br"); entries > 40 {
		t.Fatalf("br_pkey holds %d entries after %d updates of 10 rows", entries, n)
	}
}

// A lookup through an index that no unique check prunes (a non-unique
// one) removes the entries of versions dead to every transaction as it
// meets them, as PostgreSQL's kill_prior_tuple marks them: updates that
// each add an entry, with a lookup between them, leave few entries. The
// rows are wide, so that no update is HOT and each adds an entry.
func TestLookupRemovesDeadEntries(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s, "create table ev (id int, k int, n int, filler text)",
		"create index ev_k on ev (k)",
		"insert into ev select g, g % 10, 0, repeat('x', 5000) from generate_series(1, 10) g",
		"set enable_seqscan = off", "set enable_bitmapscan = off")
	if plan := queryString(t, s, "explain (costs off) select n from ev where k = 3"); !strings.Contains(plan, "Index Scan using ev_k") {
		t.Fatalf("plan %q: want an index scan on ev_k", plan)
	}
	const n = 500
	for i := 0; i < n; i++ {
		k := strconv.Itoa(i % 10)
		mustRun(t, s, "update ev set n = n + 1 where id = "+strconv.Itoa(i%10+1))
		if got := queryString(t, s, "select count(n) from ev where k = "+k); got != "1" {
			t.Fatalf("k = %s: count %s, want 1", k, got)
		}
	}
	if got := queryString(t, s, "select sum(n) from ev"); got != strconv.Itoa(n) {
		t.Fatalf("sum(n) = %s, want %d", got, n)
	}
	// 10 keys, a live and at most a few not yet dead versions each
	if entries := onlyIndexEntries(t, s, "ev"); entries > 40 {
		t.Fatalf("ev_k holds %d entries after %d updates of 10 rows", entries, n)
	}
}

// onlyIndexEntries counts the entries of table's one index.
func onlyIndexEntries(t *testing.T, s *Session, table string) int {
	t.Helper()
	ixs := s.Cat().TableIndexes(s.Cat().Table(table))
	if len(ixs) != 1 {
		t.Fatalf("%d indexes on %s", len(ixs), table)
	}
	entries, err := s.Store.IndexEntries(storage.RelID(ixs[0].RelFile))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
