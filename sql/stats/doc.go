// Package stats holds the planner's statistics and the table activity
// counters: what PostgreSQL keeps in pg_class.reltuples/relpages,
// pg_statistic and the cumulative statistics behind pg_stat_all_tables.
//
// # What is computed (ANALYZE, sql/commands/analyze.go)
//
// ANALYZE samples SampleRows(target) rows — 300 × the largest statistics
// target of the columns analysed, 30,000 at default_statistics_target =
// 100 — in two stages, as acquire_sample_rows does: BlockSampler picks up
// to that many blocks (Knuth's Algorithm S), and a Reservoir keeps a
// uniform sample of the live rows on them (Algorithm R; PostgreSQL uses
// Vitter's Algorithm Z, which draws fewer random numbers for the same
// distribution). Rows are classified as HeapTupleSatisfiesVacuum does:
// live rows, the analysing transaction's own inserts and rows others
// are deleting are sampled; dead ones are counted. reltuples is
// live rows / sampled pages × pages. ComputeColumn then computes per
// column what compute_scalar_stats computes:
//
//   - null_frac and avg_width (a variable-width value's stored size: its
//     bytes plus a 1- or 4-byte header, a numeric's base-10000 digits);
//   - n_distinct: −(1 − null_frac) when no value repeats, the sample's
//     count when every value repeats, else Haas and Stokes's Duj1
//     estimate; stored as minus a fraction of the rows when above 10 %
//     of them;
//   - the most common values (values seen at least twice, at most
//     target of them): all of them if they are every value of the sample,
//     else those analyze_mcv_list finds significantly more common than
//     the rest;
//   - histogram bounds: up to target + 1 evenly spaced values of the rest;
//   - the correlation of the values' order with their physical order.
//
// Values wider than 1 kB are counted but neither sorted nor kept. A
// partitioned table gets statistics of its whole tree (inherited), from
// a sample drawn from its leaf partitions in proportion to their sizes.
//
// # The planner's API
//
// CatalogState.TableStats(oid), .ColumnStats(t, pos) and .IndexStats(oid)
// (sql/catalog) read a Store that every CatalogState points to: a map
// lookup behind an atomic pointer, no lock and no allocation. A
// TableStats and its ColumnStats are immutable once published.
// Fractions are float4-rounded as pg_statistic stores them. The current
// size of a relation is Store.RelationPages (lockd/storage), an index's the
// size PostgreSQL's B-tree would have (expr.Backend.IndexSize).
//
// # Differences from PostgreSQL
//
//   - ANALYZE's results are published when it finishes each table,
//     whatever becomes of its transaction: PostgreSQL's pg_class counts
//     are updated in place like that too, but its pg_statistic rows are
//     transactional (a rolled-back ANALYZE leaves the old ones). The same
//     holds for the counts VACUUM and CREATE INDEX record; TRUNCATE's reset
//     waits for its commit.
//   - The types lockd stores all have "<", so every column gets
//     compute_scalar_stats's statistics; there are no array element
//     statistics (most_common_elems and friends are NULL), no extended
//     statistics, and no expression-index statistics.
//   - Stored widths do not model TOAST compression of values over 2 kB.
//   - Statistics and activity counters are written to
//     global/lockd_statistics.json at every checkpoint and clean
//     shutdown; after a crash those of the last checkpoint come back
//     (PostgreSQL's pg_statistic is WAL-logged, and its cumulative
//     statistics are reset after a crash).
//   - Activity counts are exact and visible at commit (activity.go);
//     lockd does not count scans (seq_scan, idx_scan, ... are NULL).
//
// # Concurrency
//
// A Store is safe for concurrent use: readers of statistics take no lock;
// writers (ANALYZE, VACUUM, DDL commits) serialise on its mutex. An Xact
// belongs to its session's goroutine; a Backend's totals are written by
// its session under the Backend's own mutex and read by anyone.
package stats
