package sql

import "testing"

// ctid compares and hashes as a TID: block, then offset. Before, tid
// values compared as empty strings, so `where ctid = '(0,3)'` returned
// every row and DISTINCT ctid one.
func TestCtidComparisons(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s, "create table ct (id int)", "insert into ct select g from generate_series(1, 5) g")
	for q, want := range map[string]string{
		"select id from ct where ctid = '(0,3)'":                     "3",
		"select id from ct where ctid > '(0,3)' order by ctid desc":  "5|4",
		"select count(distinct ctid) from ct":                        "5",
		"select count(*) from (select distinct ctid from ct) d":      "5",
		"select '(1,2)'::tid < '(2,1)'::tid, '(0,9)'::tid < '(1,0)'": "t,t",
	} {
		if got := queryString(t, s, q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
}
