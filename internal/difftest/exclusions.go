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
}

// Known is the set of exclusions in force.
var Known = Exclusions{
	FullJoinNonEquiOn: true,
}
