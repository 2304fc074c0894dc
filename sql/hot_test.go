package sql

import (
	"strconv"
	"strings"
	"testing"

	"lockd/storage"
)

// An UPDATE that changes no indexed column is HOT: it adds no index
// entry, pg_stat_user_tables counts it in n_tup_hot_upd, and the row's
// versions stay on its page, which pruning keeps from growing. An
// UPDATE of an indexed column is not HOT.
func TestHotUpdates(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s, "create table hb (id int primary key, k int, n int)",
		"create index hb_k on hb (k)",
		"insert into hb select g, g, 0 from generate_series(1, 10) g",
		"set enable_seqscan = off", "set enable_bitmapscan = off")
	const n = 3000
	for i := 0; i < n; i++ {
		mustRun(t, s, "update hb set n = n + 1 where id = "+strconv.Itoa(i%10+1))
	}
	if got := queryString(t, s, "select sum(n) from hb"); got != strconv.Itoa(n) {
		t.Fatalf("sum(n) = %s, want %d", got, n)
	}
	if got := queryString(t, s, "select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relname = 'hb'"); got != "3000,3000" {
		t.Fatalf("n_tup_upd, n_tup_hot_upd = %s, want 3000,3000", got)
	}
	cat := s.Cat()
	for _, ix := range cat.TableIndexes(cat.Table("hb")) {
		if got := indexEntries(t, s, ix.Name); got != 10 {
			t.Fatalf("%s holds %d entries after %d HOT updates of 10 rows, want 10", ix.Name, got, n)
		}
	}
	if got := queryString(t, s, "select pg_relation_size('hb') / 8192"); got != "1" {
		t.Fatalf("hb has %s pages after %d HOT updates of 10 rows, want 1", got, n)
	}
	// the versions pruning removed are no longer counted as dead
	if got := queryString(t, s, "select n_dead_tup < 500 from pg_stat_user_tables where relname = 'hb'"); got != "t" {
		t.Fatalf("n_dead_tup < 500: %s after pruning kept hb on one page", got)
	}
	// through either index, the newest version, with its own ctid
	for _, q := range []string{"select n from hb where id = 4", "select n from hb where k = 4"} {
		if got := queryString(t, s, q); got != "300" {
			t.Fatalf("%s: %s, want 300", q, got)
		}
	}
	ctid := queryString(t, s, "select ctid from hb where id = 4")
	if got := queryString(t, s, "select id from hb where ctid = '"+ctid+"'"); got != "4" {
		t.Fatalf("the row at ctid %s read through the primary key: %q, want id 4", ctid, got)
	}

	// an update of an indexed column adds an entry to every index
	mustRun(t, s, "update hb set k = k + 100 where id = 4")
	if got := queryString(t, s, "select n_tup_hot_upd from pg_stat_user_tables where relname = 'hb'"); got != "3000" {
		t.Fatalf("n_tup_hot_upd = %s after a key update, want 3000", got)
	}
	if got := indexEntries(t, s, "hb_k"); got != 11 {
		t.Fatalf("hb_k holds %d entries after a key update, want 11", got)
	}
	for q, want := range map[string]string{"select n from hb where k = 104": "300", "select n from hb where k = 4": ""} {
		if got := queryString(t, s, q); got != want {
			t.Fatalf("%s: %q, want %q", q, got, want)
		}
	}
}

// A snapshot older than HOT updates still reads its version through the
// index; a new one reads the newest. An index built afterwards names the
// chain's root and finds the row. Built while the older snapshot still
// runs, it is marked as built over broken HOT chains (indcheckxmin), and
// the older snapshot, which sees the row's older value, does not get the
// row for the newer value however the index is read.
func TestHotSnapshotsAndIndexBuild(t *testing.T) {
	e, s := testEngine(t, -1)
	old := e.testSession(t)
	mustRun(t, s, "create table hs (id int primary key, v text)",
		"insert into hs select g, 'v0' from generate_series(1, 5) g")
	mustRun(t, old, "begin isolation level repeatable read", "set enable_seqscan = off", "set enable_bitmapscan = off")
	if got := queryString(t, old, "select v from hs where id = 2"); got != "v0" {
		t.Fatalf("old snapshot before the updates: %q", got)
	}
	for i := 1; i <= 5; i++ {
		mustRun(t, s, "update hs set v = 'v"+strconv.Itoa(i)+"' where id = 2")
	}
	if got := queryString(t, old, "select v from hs where id = 2"); got != "v0" {
		t.Fatalf("old snapshot after 5 HOT updates: %q, want v0", got)
	}
	mustRun(t, s, "set enable_seqscan = off", "set enable_bitmapscan = off")
	if got := queryString(t, s, "select v from hs where id = 2"); got != "v5" {
		t.Fatalf("new snapshot: %q, want v5", got)
	}
	mustRun(t, s, "create index hs_v on hs (v)")
	if got := queryString(t, s, "select indcheckxmin from pg_index where indexrelid = 'hs_v'::regclass"); got != "t" {
		t.Fatalf("hs_v indcheckxmin = %s, want t: built over a chain whose older versions a snapshot sees", got)
	}
	for _, plan := range []struct{ name, sets, q string }{
		{"Index Scan", "set enable_indexonlyscan = off", "select id, v from hs where v = 'v5'"},
		{"Index Only Scan", "set enable_indexonlyscan = on", "select v from hs where v = 'v5'"},
		{"Bitmap Heap Scan", "set enable_indexscan = off; set enable_indexonlyscan = off; set enable_bitmapscan = on", "select id, v from hs where v = 'v5'"},
	} {
		mustRun(t, old, "savepoint p")
		for _, set := range strings.Split(plan.sets, "; ") {
			mustRun(t, old, set)
		}
		if got := queryString(t, old, "explain (costs off) "+plan.q); !strings.Contains(got, plan.name) {
			t.Fatalf("%s: plan %q, want a %s", plan.q, got, plan.name)
		}
		if got := queryString(t, old, plan.q); got != "" {
			t.Fatalf("old snapshot, %s: %s returned %q, want nothing (its version of row 2 holds v0)", plan.name, plan.q, got)
		}
		mustRun(t, old, "rollback to p")
	}
	mustRun(t, old, "commit")
	for q, want := range map[string]string{
		"select id from hs where v = 'v5'":                      "2",
		"select count(*) from hs where v = 'v0'":                "4",
		"select count(*) from hs where v between 'v1' and 'v4'": "0",
	} {
		if plan := queryString(t, s, "explain (costs off) "+q); !strings.Contains(plan, "hs_v") {
			t.Fatalf("%s: plan %q does not use hs_v", q, plan)
		}
		if got := queryString(t, s, q); got != want {
			t.Fatalf("%s: %q, want %q", q, got, want)
		}
	}
	if got := indexEntries(t, s, "hs_v"); got != 5 {
		t.Fatalf("hs_v holds %d entries, want 5 (one per row, at its root)", got)
	}
}

// indexEntries counts the entries of the named index.
func indexEntries(t *testing.T, s *Session, name string) int {
	t.Helper()
	ix := s.Cat().Indexes[s.Cat().ByName[name]]
	if ix == nil {
		t.Fatalf("no index %s", name)
	}
	n, err := s.Store.IndexEntries(storage.RelID(ix.RelFile))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
