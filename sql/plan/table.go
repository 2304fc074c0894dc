package plan

import (
	"sort"

	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
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

// useIndex looks for `col = value` conjuncts covering an index and, if
// found, turns the scan into an index lookup. The WHERE clause stays in
// force as a recheck. where reads the table's own row (UPDATE, DELETE).
func (ts *TableSource) useIndex(cat *catalog.CatalogState, where expr.Expr) {
	if where == nil {
		return
	}
	eq := map[int]expr.Expr{}
	var collect func(e expr.Expr)
	collect = func(e expr.Expr) {
		switch x := e.(type) {
		case *expr.BoolExpr:
			if x.Op == expr.BoolAnd {
				for _, a := range x.Args {
					collect(a)
				}
			}
		case *expr.BinopExpr:
			if x.Op != "=" {
				return
			}
			if c, ok := x.L.(*expr.ColExpr); ok && isRowFree(x.R) {
				eq[c.I] = x.R
			} else if c, ok := x.R.(*expr.ColExpr); ok && isRowFree(x.L) {
				eq[c.I] = x.L
			}
		}
	}
	collect(where)
	ts.UseIndexKeys(cat, eq)
}

// useIndexKeys turns the scan into a lookup of an index whose every
// column is pinned by eq (column position → key expression), preferring
// unique indexes, and returns the columns whose keys it used.
func (ts *TableSource) UseIndexKeys(cat *catalog.CatalogState, eq map[int]expr.Expr) []int {
	if len(eq) == 0 {
		return nil
	}
	// unique indexes first: a lookup there finds at most one live row
	ixs := cat.TableIndexes(ts.T)
	sort.SliceStable(ixs, func(i, j int) bool { return ixs[i].Unique && !ixs[j].Unique })
	for _, ix := range ixs {
		args := make([]expr.Expr, len(ix.Cols))
		typs := make([]types.Type, len(ix.Cols))
		ok := true
		for i, c := range ix.Cols {
			a, found := eq[c]
			if !found || a.Type().OID != ts.cols[c].Type.OID {
				ok = false
				break
			}
			args[i] = a
			typs[i] = ts.cols[c].Type
		}
		if ok {
			ts.Index, ts.KeyArgs, ts.KeyTyps = ix, args, typs
			return ix.Cols
		}
	}
	return nil
}

// isRowFree reports whether e reads no column of the current row.
func isRowFree(e expr.Expr) bool {
	switch x := e.(type) {
	case *expr.ConstExpr, *expr.ParamExpr, *expr.OuterExpr:
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
