package difftest

// Exclusions keep constructs out of the generated queries. Each field is
// a known difference between lockd and PostgreSQL that the test would
// otherwise report in nearly every run, in code this test's author was
// not to change (the planner and executor) or too large to change here.
// Its comment gives a minimal query that shows it; docs/difftest.md
// lists them. An exclusion never weakens the comparison: it only stops
// the generator from writing the construct. Delete the field (and its
// uses) when the difference is gone.
type Exclusions struct {
	// FullJoinNonEquiOn: lockd runs any FULL JOIN; PostgreSQL refuses one
	// whose ON condition is not merge- or hash-joinable (unless its outer
	// join is reduced by a WHERE clause) with 0A000 "FULL JOIN is only
	// supported with merge-joinable or hash-joinable join conditions":
	//
	//	create table ta (i int); create table tb (i int);
	//	select * from ta full join tb on ta.i < tb.i;
	//
	// With the exclusion, a FULL JOIN's ON is one equality.
	FullJoinNonEquiOn bool
	// SkipLevelCorrelation: a subquery nested in a subquery and
	// correlated only to the outermost query is run again for every row
	// of the middle one (PostgreSQL runs it once per outer row), so
	// lockd takes minutes where PostgreSQL takes milliseconds and the
	// statement times out. With about 100 rows a table:
	//
	//	select count(*) from pl a2 where a2.s2 in (select a3.s1 from ta a3
	//	  where a3.s1 in (select max(a4.s) from pl a4 join pr a5 on a5.n1 = a4.i3
	//	  where a5.i4 > a2.i3 group by a4.s))  -- 154 s in lockd, 20 ms in PostgreSQL
	//
	// With the exclusion, a subquery is correlated only to the query
	// directly around it.
	SkipLevelCorrelation bool
	// NestedCorrelation: lockd runs a correlated subquery again for every
	// row of the query around it, also inside another correlated
	// subquery, where PostgreSQL turns EXISTS and IN into semi-joins; two
	// such levels over a few hundred rows take lockd seconds to minutes:
	//
	//	create table na (i int, j int);
	//	insert into na select g % 300, g % 97 from generate_series(1, 1000) g;
	//	select count(*) from na a1 where exists (select 1 from na a2 where a2.i = a1.j
	//	  and not exists (select 1 from na a3 where a3.j = a2.i and a3.i > 290));
	//	-- 524 ms in lockd, 2 ms in PostgreSQL; 250 times that with the
	//	-- tables of a generated schema and a join around it
	//
	// With the exclusion, a subquery inside a subquery is not correlated.
	NestedCorrelation bool
}

// Known is the set of exclusions in force.
var Known = Exclusions{
	FullJoinNonEquiOn:    true,
	SkipLevelCorrelation: true,
	NestedCorrelation:    true,
}
