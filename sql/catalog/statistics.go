package catalog

import "lockd/sql/stats"

// The planner's statistics, reached through the session's catalog state
// (package stats describes what they hold and how ANALYZE makes them).
// None of these takes a lock or allocates; a planner may call them per
// relation per plan.

// TableStats returns what VACUUM, ANALYZE and CREATE INDEX last recorded
// of relation oid (a table, or a partitioned table's whole tree), nil if
// none of them has seen it (its reltuples is -1). The result is immutable.
func (c *CatalogState) TableStats(oid uint32) *stats.TableStats { return c.stats.Table(oid) }

// ColumnStats returns the statistics of the column at position pos
// (an index into t.Cols) of table t, nil if it has none — never analysed,
// or analysed when it had another type.
func (c *CatalogState) ColumnStats(t *TableDef, pos int) *stats.ColumnStats {
	cs := c.stats.Table(t.OID).Col(int(t.Attnum(pos)))
	if cs == nil || cs.TypeOID != t.Cols[pos].TypeOID {
		return nil
	}
	return cs
}

// IndexStats returns index oid's pg_class.reltuples and relpages as
// CREATE INDEX, VACUUM or ANALYZE last set them; tuples is -1 when
// unknown (an index made before lockd kept statistics, or truncated).
func (c *CatalogState) IndexStats(oid uint32) (tuples, pages float64) {
	if ts := c.stats.Table(oid); ts != nil {
		return ts.RelTuples, ts.RelPages
	}
	return -1, 0
}
