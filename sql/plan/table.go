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

// useIndex reads the table through an index when where (over the
// table's own row: UPDATE, DELETE, a partition's scan) pins one. The
// WHERE clause stays in force as a recheck.
func (ts *TableSource) useIndex(cat *catalog.CatalogState, where expr.Expr) {
	if where == nil {
		return
	}
	cs := condSet{}
	cs.add(where, tableColumn(ts.cols, 0, len(ts.Defs)), isRowFree)
	ts.chooseIndex(cat, cs)
}

// UseIndexKeys turns the scan into a lookup of an index pinned by eq
// (column position → key expression) and returns the columns whose keys
// it used.
func (ts *TableSource) UseIndexKeys(cat *catalog.CatalogState, eq map[int]expr.Expr) []int {
	cs := condSet{}
	for c, e := range eq {
		cs.at(c).eq = e
	}
	return ts.chooseIndex(cat, cs)
}

// isRowFree reports whether e reads no column of the current row.
func isRowFree(e expr.Expr) bool {
	switch x := e.(type) {
	case *expr.ConstExpr, *expr.ParamExpr, *expr.OuterExpr, *expr.LevelExpr, *NullKey:
		return true
	case *expr.FuncExpr:
		if x.Volatile {
			return false
		}
		for _, a := range x.Args {
			if !isRowFree(a) {
				return false
			}
		}
		return true
	case *expr.CastExpr:
		return isRowFree(x.Arg)
	case *expr.NegExpr:
		return isRowFree(x.Arg)
	case *expr.BinopExpr:
		return isRowFree(x.L) && isRowFree(x.R)
	}
	return false
}

// tableLocks lists the lock set for reading or writing table t: the table
// and every index, as the planner opens them.
func tableLocks(cat *catalog.CatalogState, t *catalog.TableDef, mode locks.LockMode) []expr.RelLock {
	out := []expr.RelLock{{Oid: t.OID, Mode: mode}}
	for _, ix := range cat.TableIndexes(t) {
		out = append(out, expr.RelLock{Oid: ix.OID, Mode: mode})
	}
	return out
}
