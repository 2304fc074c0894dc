package plan

import (
	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// relationLocks is the lock set a statement takes on its target or FROM
// relation at every execution before it runs: for an ordinary table the
// table and its indexes (tableLocks); for a partitioned table only the
// table, since PostgreSQL's planner opens no index of a partitioned table
// (the partitions and their indexes are locked when the statement runs,
// after pruning — see partitionedSource).
func relationLocks(cat *catalog.CatalogState, t *catalog.TableDef, mode locks.LockMode) []expr.RelLock {
	if t.Partitioned() {
		return []expr.RelLock{{Oid: t.OID, Mode: mode}}
	}
	return tableLocks(cat, t, mode)
}
