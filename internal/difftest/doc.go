// Package difftest is a randomized differential test of lockd's SELECT
// against a real PostgreSQL 15: from a seed it generates a schema (a few
// tables of int, bigint, text, numeric, bool, date and timestamp columns,
// with NULLs, duplicates, primary keys, secondary and multi-column indexes,
// and range- and list-partitioned tables with default partitions), loads
// the same rows into both servers, then generates queries over it — joins
// of up to four tables (inner, left, right, full, comma), WHERE with
// comparisons, ranges, IN lists, ANY over arrays, NULL tests, AND/OR/NOT,
// EXISTS, IN and scalar subqueries (correlated or not), ORDER BY with
// LIMIT and OFFSET, GROUP BY and HAVING with aggregates, DISTINCT and set
// operations — and runs each on both servers, comparing what a client
// sees: column names and types, rows as text, and errors by SQLSTATE.
// Some queries run as prepared statements with parameters, executed eight
// times with different values so that the plan cache's switch from custom
// to generic plans happens in both servers.
//
// How rows are compared depends on the query: as multisets when it has no
// ORDER BY; when it has one, the sort keys (always output columns) must
// come in the same sequence and the rows of each run of equal keys must
// be the same multiset — except the first run when OFFSET may cut it and
// the last when LIMIT may, whose rows PostgreSQL itself may pick among
// ties. So a query need not fully determine its order, and the test never
// needs to know whether it does.
//
// The generator only writes queries whose results do not depend on the
// plan: no volatile functions, no float arithmetic, no LIMIT without an
// ORDER BY, no scalar subquery that may return several rows, no expression
// that can raise an error for some rows only (division by a column,
// overflowing arithmetic), no numeric values that are equal but print
// differently in places where either could be kept (UNION, DISTINCT,
// GROUP BY). Anything else that differs is a difference to report, except
// lockd's 0A000 (feature not supported), which is counted by message and
// reported at the end.
//
// The generator is deterministic: the schema of a round depends on the
// seed and the round, each query on the seed and its number, so a failing
// query is reproduced from the seed and its number alone
// (TestDifferential's -difftest.seed and -difftest.query flags). Known
// lockd bugs that a fix has not reached yet are kept out of the generated
// queries by named exclusions (exclusions.go), each with a minimal
// reproducing query; docs/difftest.md lists them.
//
// The package holds the generator, the comparison and the runner; the
// test in difftest_test.go starts lockd in-process and PostgreSQL as an
// unprivileged user (pg.go) and runs them.
package difftest
