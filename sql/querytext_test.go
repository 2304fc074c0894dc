package sql

import (
	"context"
	"strings"
	"testing"

	"lockd/sql/types"
)

// queryString runs one query and returns its rows as text: fields joined
// by ",", rows by "|", NULL as NULL.
func queryString(t testing.TB, s *Session, q string) string {
	t.Helper()
	sts, params, err := s.Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer s.Sync()
	st, err := s.Resolve(sts[0])
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	if _, err := s.Execute(context.Background(), st, params, func(row []types.Datum) error {
		var f []string
		for i, c := range st.Columns() {
			if row[i].Null {
				f = append(f, "NULL")
			} else {
				f = append(f, string(types.AppendText(nil, c.Type, row[i], nil)))
			}
		}
		out = append(out, strings.Join(f, ","))
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(out, "|")
}

// TestSubqueryInGroupedProjection: a subquery with aggregates of its own,
// evaluated in an aggregated query's select list, leaves the outer
// query's aggregates in place (it used to crash the session).
func TestSubqueryInGroupedProjection(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s, "create table x (a int)", "insert into x values (1), (2)")
	for q, want := range map[string]string{
		"select (select sum(a) from x), count(a) from x":                                   "3,2",
		"select (select max(a) from x) = 2, count(*), sum(a) from x group by a order by 3": "t,1,1|t,1,2",
		"select sum(a), (select sum(a) from x) - sum(a) from x":                            "3,0",
		"select a from x order by (select y.a from x y order by 1 desc limit 1), 1 desc":   "2|1",
	} {
		if got := queryString(t, s, q); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
}
