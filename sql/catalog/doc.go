// Package catalog holds lockd's system catalog: tables with their columns
// and row layout, indexes, constraints, partitioned tables (bounds,
// descriptors, the partition tree, pruning ranges, PostgreSQL's hash
// placement), sequences and their values, the pg_catalog rows derived
// from them, object naming (ChooseConstraintName), the catalog file, and
// the row format tables store in heap tuples.
//
// A CatalogState is one immutable snapshot of the catalog. DDL clones it
// into a transaction's private state (expr.Backend applies the
// transaction's CatOps to it) and Catalog.Commit publishes a new one.
//
// What it must not do: take locks, run queries or read sessions; it knows
// values (sql/types) and nothing above.
//
// Concurrency: a published CatalogState is never modified and may be
// read by any goroutine; Catalog serialises commits and OID allocation
// under its mutex and publishes states through an atomic pointer.
// SeqStore's values are guarded by its RWMutex.
package catalog
