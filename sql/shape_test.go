package sql

import "testing"

func TestShapeOf(t *testing.T) {
	cases := []struct {
		q, key string
		lits   int
		ok     bool
	}{
		{"UPDATE pgbench_accounts SET abalance = abalance + -4525 WHERE aid = 7548;", "ii|UPDATE pgbench_accounts SET abalance = abalance + -$1 WHERE aid = $2;", 2, true},
		{"SELECT abalance FROM pgbench_accounts WHERE aid = 3000000000", "l|SELECT abalance FROM pgbench_accounts WHERE aid = $1", 1, true},
		{"INSERT INTO h (a, b, m) VALUES (1, 2.5, 'it''s')", "ins|INSERT INTO h (a, b, m) VALUES ($1, $2, $3)", 3, true},
		{"select t1.a from t1 where x = 1e3", "n|select t1.a from t1 where x = $1", 1, true},
		{"select 'a'::char(3)", "s|select $1::char(3)", 1, true},
		{"select 1.5::numeric(10,2)", "n|select $1::numeric(10,2)", 1, true},
		{"select interval '1 day'", "", 0, false},
		{"select E'\\n'", "", 0, false},
		{"select $1", "", 0, false},
		{"select 1; select 2", "", 0, false},
		{"select 1 -- comment", "", 0, false},
		{"create table t (a char(84))", "", 0, false},
		{"select name from pg_settings", "", 0, false},
		{"select a, b from t where a = 5 order by 1", "", 0, false},
		{"select a, count(*) from t group by 1", "", 0, false},
		{"select a from t order by a, 2", "", 0, false},
		{"select a from t where a = 5 order by a limit 10", "ii|select a from t where a = $1 order by a limit $2", 2, true},
		// a subquery's FROM inside ORDER BY does not end the ORDER BY
		{"select a in (select b from u), a from t order by a in (select b from u), 2", "", 0, false},
		{"select a from t group by a, (select max(b) from u where b > 1), 2", "", 0, false},
		{"select a from t order by (1)", "", 0, false},
		{"select a from t order by a is distinct from 3, 1", "", 0, false},
		{"select a from t group by a is not distinct from 3 order by a limit 1", "ii|select a from t group by a is not distinct from $1 order by a limit $2", 2, true},
		{"select a from t where a in (select b from u order by 1) and a > 2", "", 0, false},
		{"select a from t where a in (select b from u where b > 1) order by a limit 3", "ii|select a from t where a in (select b from u where b > $1) order by a limit $2", 2, true},
	}
	for _, c := range cases {
		key, lits, ok := shapeOf(c.q)
		if ok != c.ok || key != c.key || len(lits) != c.lits {
			t.Errorf("shapeOf(%q) = %q, %d literals, %v; want %q, %d, %v", c.q, key, len(lits), ok, c.key, c.lits, c.ok)
		}
	}
}
