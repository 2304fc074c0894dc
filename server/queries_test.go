package server_test

import (
	"context"
	"testing"

	"lockd/internal/lockdtest"
)

// The queries the SQL issue lists — joins (nested loop with an index
// lookup, hash join, outer, self, two hash-partitioned tables), GROUP BY
// and HAVING, DISTINCT, ORDER BY with LIMIT and OFFSET, subqueries in FROM
// and IN/NOT IN, RETURNING, INSERT ... SELECT, the functions and casts —
// through pgx, with the results PostgreSQL 15 gave for the same script.
func TestIssueQueries(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	for _, q := range []string{
		`create table dept (id int primary key, name text);`,
		`create table emp (id int primary key, name text, dept int, salary numeric(10,2), mgr int);`,
		`insert into dept values (1, 'eng'), (2, 'ops'), (3, 'hr');`,
		`insert into emp values (1, 'ann', 1, 5000, null), (2, 'bob', 1, 4000, 1), (3, 'cid', 2, 3500, 1), (4, 'dee', null, 3000, 2), (5, 'eve', 2, 4500, 3);`,
		`create table pa (k int, v text) partition by hash (k);`,
		`create table pa0 partition of pa for values with (modulus 2, remainder 0);`,
		`create table pa1 partition of pa for values with (modulus 2, remainder 1);`,
		`create table pb (k int, w text) partition by hash (k);`,
		`create table pb0 partition of pb for values with (modulus 2, remainder 0);`,
		`create table pb1 partition of pb for values with (modulus 2, remainder 1);`,
		`insert into pa select g, 'a' || g from generate_series(1, 6) g;`,
		`insert into pb select g, 'b' || g from generate_series(4, 9) g;`,
	} {
		mustExec(t, c, q)
	}
	cases := []struct{ sql, want string }{
		{`select e.name, d.name from emp e join dept d on d.id = e.dept order by e.id`, `ann,eng|bob,eng|cid,ops|eve,ops`},
		{`select e.name, d.name from emp e left join dept d on d.id = e.dept order by e.id`, `ann,eng|bob,eng|cid,ops|dee,NULL|eve,ops`},
		{`select d.name, count(e.id) from dept d left join emp e on e.dept = d.id group by d.name order by d.name`, `eng,2|hr,0|ops,2`},
		{`select e.name, m.name from emp e join emp m on m.id = e.mgr where e.salary > 3000 order by e.name`, `bob,ann|cid,ann|eve,cid`},
		{`select pa.k, v, w from pa join pb on pa.k = pb.k order by pa.k`, `4,a4,b4|5,a5,b5|6,a6,b6`},
		{`select dept, sum(salary), avg(salary)::numeric(10,2), max(name) from emp group by dept having count(*) > 1 order by dept`, `1,9000.00,4500.00,bob|2,8000.00,4000.00,eve`},
		{`select distinct dept from emp order by dept nulls first`, `NULL|1|2`},
		{`select name from emp order by salary desc limit 2 offset 1`, `eve|bob`},
		{`select * from (select dept, count(*) as n from emp group by dept) s where n > 1 order by dept`, `1,2|2,2`},
		{`select name from emp where dept in (select id from dept where name <> 'eng') order by name`, `cid|eve`},
		{`select name from emp where id not in (select mgr from emp where mgr is not null) order by name`, `dee|eve`},
		{`select count(*), sum(g), min(g), max(g) from generate_series(1, 100) g`, `100,5050,1,100`},
		{`select repeat('ab', 3), lpad('7', 4, '0'), abs(-4.5), length('héllo'), coalesce(null, 2, 3), greatest(3, 9, 1), least('b', 'a'), substr('abcdef', 2, 3), md5('lockd')`, `ababab,0007,4.5,5,2,9,a,bcd,3cc3be5c0c37da49d0c08b293ad222b4`},
		{`select '42'::int + 1, 3.7::int, '2024-02-29'::date + 1, 10::numeric / 4, 7 / 2, '1e3'::float8::bigint, 'true'::bool, 12.5::text || 'x', '  x '::char(5) || '|'`, `43,4,2024-03-01,2.5000000000000000,3,1000,t,12.5x,  x|`},
		{`insert into dept values (4, 'qa') returning id, upper(name)`, `4,QA`},
		{`insert into emp (id, name, dept, salary) select id + 10, name || '2', dept, salary * 2 from emp where dept = 1 returning id, salary`, `11,10000.00|12,8000.00`},
		{`update emp set salary = salary + 1 where dept = 2 returning id, salary`, `3,3501.00|5,4501.00`},
		{`delete from emp where id > 10 returning name`, `ann2|bob2`},
	}
	for _, tc := range cases {
		if got := queryText(t, c, tc.sql); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.sql, got, tc.want)
		}
	}
	// the same through the extended protocol, with bound parameters
	var name string
	var total float64
	if err := c.QueryRow(context.Background(), "select e.name, sum(e.salary)::float8 from emp e join dept d on d.id = e.dept where d.name = $1 and e.salary > $2 group by e.name order by 2 desc limit 1", "ops", 1000).Scan(&name, &total); err != nil || name != "eve" || total != 4501 {
		t.Errorf("bound join: %q %v %v, want eve 4501", name, total, err)
	}
}
