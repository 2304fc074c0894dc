package sql

import (
	"context"
	"sort"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

// relLock is a relation lock a statement takes at every execution, as
// PostgreSQL's parser and AcquireExecutorLocks do: the table and each of
// its indexes, in the given mode.
type relLock struct {
	oid  uint32
	mode locks.LockMode
	// planOnly: the planner opens this relation (an index of a table the
	// plan reads without it) but a cached generic plan does not lock it
	// again (AcquireExecutorLocks locks the range table; the executor
	// opens only the indexes it scans).
	planOnly bool
}

// tableSource scans a user table, or looks up an index when the WHERE
// clause (or a join) pins every key column to a value. Its rows hold the
// table's columns followed by the system columns ctid and tableoid.
type tableSource struct {
	t     *TableDef
	alias string
	cols  []Column
	defs  []ColumnDef
	// index lookup: when set, only tuples found under key are read
	index   *IndexDef
	keyArgs []expr
	keyTyps []Type
	// keysReadLevel: keyArgs read other FROM items of the level row (an
	// index nested loop)
	keysReadLevel bool
}

// System columns every table row carries after its own columns, with
// PostgreSQL's attribute numbers.
const (
	sysColCtid     = 0
	sysColTableoid = 1
	numSysCols     = 2
)

func (ts *tableSource) name() string      { return ts.alias }
func (ts *tableSource) columns() []Column { return ts.cols }
func (ts *tableSource) readsLevel() bool  { return ts.keysReadLevel }

func newTableSource(t *TableDef, alias string) *tableSource {
	ts := &tableSource{t: t, alias: alias, defs: t.Cols}
	for i := range t.Cols {
		ts.cols = append(ts.cols, Column{Name: t.Cols[i].Name, Type: t.Cols[i].Type(), TableOID: t.OID, Attnum: t.attnum(i)})
	}
	ts.cols = append(ts.cols,
		Column{Name: "ctid", Type: TypeTid, TableOID: t.OID, Attnum: -1},
		Column{Name: "tableoid", Type: TypeOid, TableOID: t.OID, Attnum: -6})
	return ts
}

// scan calls fn for every tuple visible to the statement's snapshot.
func (x *Executor) scanTable(ec *evalCtx, ts *tableSource, fn func([]Datum) error) error {
	return x.scanTableLevel(ec, ts, nil, fn)
}

// scanLevel is scan with the index keys evaluated over the level row.
func (x *Executor) scanTableLevel(ec *evalCtx, ts *tableSource, level []Datum, fn func([]Datum) error) error {
	return x.scanTableTIDsLevel(ec, ts, level, func(_ storage.TID, row []Datum) error { return fn(row) })
}

func (x *Executor) scanTableTIDs(ec *evalCtx, ts *tableSource, fn func(storage.TID, []Datum) error) error {
	return x.scanTableTIDsLevel(ec, ts, nil, fn)
}

func tidDatum(tid storage.TID) Datum { return intDatum(int64(tid.Block)<<16 | int64(tid.Offset)) }

func (x *Executor) scanTableTIDsLevel(ec *evalCtx, ts *tableSource, level []Datum, fn0 func(storage.TID, []Datum) error) error {
	s := x
	n := len(ts.defs)
	row := make([]Datum, n+numSysCols)
	row[n+sysColTableoid] = intDatum(int64(ts.t.OID))
	fn := func(tid storage.TID, row []Datum) error {
		row[n+sysColCtid] = tidDatum(tid)
		return fn0(tid, row)
	}
	st := s.store
	relfile := storage.RelID(ts.t.RelFile)
	if ts.index != nil {
		key, ok, err := x.tableLookupKey(ec, ts, level)
		if err != nil || !ok {
			return err
		}
		var tids []storage.TID
		if err := st.IndexLookup(s.proc, storage.RelID(ts.index.RelFile), key, func(tid storage.TID) bool {
			tids = append(tids, tid)
			return true
		}); err != nil {
			return err
		}
		// Like PostgreSQL's kill_prior_tuple, index entries whose tuple
		// is dead to every transaction are removed as the lookup meets
		// them, so a row updated many times does not make every lookup
		// walk all of its old versions until the next VACUUM.
		var dead []storage.TID
		var horizon txn.Xid
		for _, tid := range tids {
			var derr error
			visible, err := st.Fetch(s.proc, &s.txn, relfile, tid, func(_ *txnHeader, data []byte) {
				derr = decodeRow(data, ts.t, row)
			})
			if err != nil {
				return err
			}
			if derr != nil {
				return derr
			}
			if visible {
				if err := fn(tid, row); err != nil {
					return err
				}
				continue
			}
			if len(tids) > 1 {
				if horizon == 0 {
					horizon = s.txns.OldestXmin()
				}
				if _, err := st.FetchAny(s.proc, relfile, tid, func(h *txn.TupleHeader, _ storage.TID, _ []byte) {
					if s.txns.SatisfiesVacuum(h, horizon) == txn.HeapTupleDead {
						dead = append(dead, tid)
					}
				}); err != nil {
					return err
				}
			}
		}
		for _, tid := range dead {
			if err := st.IndexDelete(s.proc, storage.RelID(ts.index.RelFile), key, tid); err != nil {
				return err
			}
		}
		return nil
	}
	return st.Scan(ec.ctx, s.proc, &s.txn, relfile, func(tid storage.TID, data []byte) error {
		if err := decodeRow(data, ts.t, row); err != nil {
			return err
		}
		return fn(tid, row)
	})
}

// lookupKey evaluates the key values; a NULL key matches nothing.
func (x *Executor) tableLookupKey(ec *evalCtx, ts *tableSource, level []Datum) ([]byte, bool, error) {
	vals := make([]Datum, len(ts.keyArgs))
	for i, a := range ts.keyArgs {
		v, err := a.eval(ec, level)
		if err != nil {
			return nil, false, err
		}
		if v.Null {
			return nil, false, nil
		}
		vals[i] = v
	}
	return appendKey(nil, ts.keyTyps, vals), true, nil
}

// useIndex looks for `col = value` conjuncts covering an index and, if
// found, turns the scan into an index lookup. The WHERE clause stays in
// force as a recheck. where reads the table's own row (UPDATE, DELETE).
func (ts *tableSource) useIndex(cat *catalogState, where expr) {
	if where == nil {
		return
	}
	eq := map[int]expr{}
	var collect func(e expr)
	collect = func(e expr) {
		switch x := e.(type) {
		case *boolExpr:
			if x.op == boolAnd {
				for _, a := range x.args {
					collect(a)
				}
			}
		case *binopExpr:
			if x.op != "=" {
				return
			}
			if c, ok := x.l.(*colExpr); ok && isRowFree(x.r) {
				eq[c.i] = x.r
			} else if c, ok := x.r.(*colExpr); ok && isRowFree(x.l) {
				eq[c.i] = x.l
			}
		}
	}
	collect(where)
	ts.useIndexKeys(cat, eq)
}

// useIndexKeys turns the scan into a lookup of an index whose every
// column is pinned by eq (column position → key expression), preferring
// unique indexes, and returns the columns whose keys it used.
func (ts *tableSource) useIndexKeys(cat *catalogState, eq map[int]expr) []int {
	if len(eq) == 0 {
		return nil
	}
	// unique indexes first: a lookup there finds at most one live row
	ixs := cat.tableIndexes(ts.t)
	sort.SliceStable(ixs, func(i, j int) bool { return ixs[i].Unique && !ixs[j].Unique })
	for _, ix := range ixs {
		args := make([]expr, len(ix.Cols))
		typs := make([]Type, len(ix.Cols))
		ok := true
		for i, c := range ix.Cols {
			a, found := eq[c]
			if !found || a.typ().OID != ts.cols[c].Type.OID {
				ok = false
				break
			}
			args[i] = a
			typs[i] = ts.cols[c].Type
		}
		if ok {
			ts.index, ts.keyArgs, ts.keyTyps = ix, args, typs
			return ix.Cols
		}
	}
	return nil
}

// isRowFree reports whether e reads no column of the current row.
func isRowFree(e expr) bool {
	switch x := e.(type) {
	case *constExpr, *paramExpr, *outerExpr:
		return true
	case *funcExpr:
		if x.volatile {
			return false
		}
		for _, a := range x.args {
			if !isRowFree(a) {
				return false
			}
		}
		return true
	case *castExpr:
		return isRowFree(x.arg)
	case *negExpr:
		return isRowFree(x.arg)
	case *binopExpr:
		return isRowFree(x.l) && isRowFree(x.r)
	}
	return false
}

// lockRelations takes the statement's relation locks.
func (s *Backend) lockRelations(ctx context.Context, rels []relLock, generic bool) error {
	for _, r := range rels {
		if generic && r.planOnly {
			continue
		}
		err := s.locks.Lock(ctx, s.proc, locks.RelationTag(DatabaseOID, r.oid), r.mode, s.lockOptions(false, false))
		if err != nil {
			return err
		}
	}
	return nil
}

// tableLocks lists the lock set for reading or writing table t: the table
// and every index, as the planner opens them.
func tableLocks(cat *catalogState, t *TableDef, mode locks.LockMode) []relLock {
	out := []relLock{{oid: t.OID, mode: mode}}
	for _, ix := range cat.tableIndexes(t) {
		out = append(out, relLock{oid: ix.OID, mode: mode})
	}
	return out
}

func tableNotFound(name string, loc int32) error {
	return posErr(pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name), loc)
}
