package sql

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

// INSERT ... ON CONFLICT [ (cols) [WHERE ...] | ON CONSTRAINT name ]
// DO NOTHING | DO UPDATE SET ... [WHERE ...], with PostgreSQL's
// speculative insertion protocol (nodeModifyTable.c ExecInsert and
// ExecOnConflictUpdate, execIndexing.c):
//
//  1. Pre-check: look the row's key up in each arbiter index with a dirty
//     snapshot (unique.go). A version another transaction is inserting or
//     deleting is waited for — its transactionid, or its speculative token
//     while its insertion is speculative — and the index looked at again.
//     A live version is the conflict: DO NOTHING skips the row; DO UPDATE
//     goes to 3.
//  2. No conflict: take ExclusiveLock on a new speculative insertion token
//     of the (sub)transaction's xid, insert the tuple speculatively
//     (storage/speculative.go) and its index entries; an arbiter index's
//     entry is checked and inserted as one step (unique.go) and any live
//     or running version under the key makes it a conflict
//     (UNIQUE_CHECK_PARTIAL).
//     Without one the insertion is confirmed; with one the tuple is
//     super-deleted and the row starts again at 1 — where it now waits
//     for the other inserter. Then the token lock is released. Of two
//     sessions racing for one key exactly one inserts; the other waits
//     and then skips or updates: never 23505, never a lost update.
//  3. DO UPDATE locks the conflicting version as UPDATE would (FOR NO KEY
//     UPDATE, FOR UPDATE when SET assigns a unique index column): the
//     tuple lock and a wait for a running locker or updater. A version
//     replaced or deleted meanwhile sends READ COMMITTED back to 1
//     (no EvalPlanQual: the newer version might not conflict any more)
//     and is 40001 under REPEATABLE READ, as is a conflicting version the
//     transaction's snapshot cannot see. A version this command inserted
//     or updated is 21000 ("cannot affect row a second time"). Then the
//     DO UPDATE WHERE clause is checked over the existing row and
//     excluded (the row proposed for insertion), and SET applied as an
//     UPDATE of the locked version; a row WHERE rejects stays locked.
//
// Relation locks are PostgreSQL's: RowExclusiveLock on the table; the
// planner's inference of the arbiter indexes opens (and keeps locked,
// RowExclusiveLock) every index of the table — for ON CONSTRAINT those up
// to the constraint's, in OID order — unless a cached generic plan runs;
// while the statement runs, every index of the table written is locked
// RowExclusiveLock and released at its end (ExecOpenIndices,
// ExecCloseIndices). A partitioned table's partitions are routed to and
// locked as INSERT does (partroute.go), its arbiters being the partitions'
// indexes of the partitioned indexes inferred.

// onConflict is a compiled ON CONFLICT clause.
type onConflict struct {
	update bool
	// arbiters are the indexes of the table named that decide a conflict;
	// nil with any: every unique index is one (DO NOTHING without an
	// inference clause)
	arbiters []uint32
	any      bool
	set      map[int]expr // DO UPDATE: column → value over the level row
	where    expr
	mode     txn.TupleLockMode // the strength of the row lock
	ncols    int
	exclOff  int     // where excluded starts in the level row
	level    []Datum // [existing row, ctid, tableoid][excluded]

	// analysis results finishOnConflict turns into arbiters
	dup        error        // two SET assignments to one column
	conIndex   uint32       // ON CONSTRAINT: its index
	inferCols  map[int]bool // (cols): the columns named
	inferExprs bool         // (cols) names an expression or system column
}

// specHook, set only by tests, runs at two steps of a speculative
// insertion: "heap" (the tuple is in, no index entry yet) and "indexed"
// (its index entries are in, the insertion not yet confirmed or undone).
var specHook func(step string)

// excludedSource is ON CONFLICT DO UPDATE's excluded: the row proposed
// for insertion, with the target's columns and no system columns.
type excludedSource struct{ cols []Column }

func (e *excludedSource) name() string                                                    { return "excluded" }
func (e *excludedSource) columns() []Column                                               { return e.cols }
func (x *Executor) scanExcluded(*evalCtx, *excludedSource, func(row []Datum) error) error { return nil }

// compileOnConflict compiles ins's ON CONFLICT clause for table t under
// alias, and returns the scope RETURNING may not see (excluded). The
// arbiter indexes are inferred by finishOnConflict, after RETURNING, as
// PostgreSQL's planner infers them after parse analysis.
func (s *planner) compileOnConflict(ins *pg.InsertStmt, t *TableDef, alias string, params *[]Type) (*onConflict, *scope, error) {
	occ := ins.OnConflictClause
	oc := &onConflict{update: occ.Action == pg.OnConflictAction_ONCONFLICT_UPDATE, ncols: len(t.Cols),
		mode: txn.LockTupleNoKeyExclusive}
	infer := occ.Infer
	if oc.update && infer == nil {
		return nil, nil, posErr(pgerr.New(pgerr.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name").
			WithHint("For example, ON CONFLICT (column_name)."), occ.Location)
	}
	if infer != nil {
		if err := s.inferArbiters(infer, t, alias, params, oc); err != nil {
			return nil, nil, err
		}
	} else {
		oc.any = true
	}
	if !oc.update {
		return oc, nil, nil
	}
	if err := identitySetList(t, occ.TargetList); err != nil { // seqcols.go
		return nil, nil, err
	}

	// DO UPDATE: SET and WHERE see the existing row under the table's
	// alias and the proposed one as excluded
	a := newAnalyzer(&s.Backend, params)
	sc := newScope(nil)
	la := a.level(sc)
	fb := &fromBuilder{a: la, sc: sc}
	if _, err := fb.addLeaf(newTableSource(t, alias), alias, nil, len(t.Cols), t, -1); err != nil {
		return nil, nil, err
	}
	excl := &excludedSource{}
	for i := range t.Cols {
		excl.cols = append(excl.cols, Column{Name: t.Cols[i].Name, Type: t.Cols[i].Type()})
	}
	oc.exclOff = sc.width
	// added nameless, then named: PostgreSQL does not check excluded
	// against the target's alias ("INSERT INTO t AS excluded" works)
	if _, err := fb.addLeaf(excl, "", nil, len(excl.cols), nil, -1); err != nil {
		return nil, nil, err
	}
	sc.rels[len(sc.rels)-1].alias = "excluded"
	var dup error
	var err error
	if oc.set, dup, err = s.compileSetList(la.noAggs("UPDATE"), t, occ.TargetList); err != nil {
		return nil, nil, err
	}
	if occ.WhereClause != nil {
		wa := la.noAggs("WHERE")
		w, err := wa.expr(occ.WhereClause)
		if err != nil {
			return nil, nil, err
		}
		if oc.where, err = wa.asBool(w, "WHERE", exprLocation(occ.WhereClause)); err != nil {
			return nil, nil, err
		}
	}
	oc.dup = dup
	oc.level = make([]Datum, sc.width)
	// FOR UPDATE strength when SET assigns a key column
	// (ExecUpdateLockMode)
	for _, ix := range s.cat().tableIndexes(t) {
		if !ix.Unique {
			continue
		}
		for _, c := range ix.Cols {
			if _, ok := oc.set[c]; ok {
				oc.mode = txn.LockTupleExclusive
			}
		}
	}
	hidden := newScope(nil)
	hidden.rels = []*nsRel{{alias: "excluded", item: -1}}
	return oc, hidden, nil
}

// inferArbiters resolves the inference clause: ON CONSTRAINT's name, or
// the columns (transformOnConflictArbiter). The indexes they match are
// found by finishOnConflict.
func (s *planner) inferArbiters(infer *pg.InferClause, t *TableDef, alias string, params *[]Type, oc *onConflict) error {
	cat := s.cat()
	ixs := cat.tableIndexes(t)
	sort.Slice(ixs, func(i, j int) bool { return ixs[i].OID < ixs[j].OID })
	if infer.Conname != "" {
		for _, ix := range ixs {
			if ix.Name == infer.Conname && (ix.IsConstraint || ix.Primary) {
				oc.conIndex = ix.OID
				return nil
			}
		}
		for _, con := range cat.Constraints {
			if con.Table == t.OID && con.Name == infer.Conname { // a CHECK or FOREIGN KEY
				return pgerr.New(pgerr.WrongObjectType, "constraint in ON CONFLICT clause has no associated index")
			}
		}
		return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" for table \"%s\" does not exist", infer.Conname, t.Name)
	}
	a := newAnalyzer(&s.Backend, params)
	singleTable(a, newTableSource(t, alias), alias)
	cols := map[int]bool{}
	exprs := false // an element that is no plain column: no index of lockd's matches
	for _, n := range infer.IndexElems {
		el := n.GetIndexElem()
		switch {
		case el.Ordering != pg.SortByDir_SORTBY_DEFAULT:
			return posErr(pgerr.New(pgerr.InvalidColumnReference, "ASC/DESC is not allowed in ON CONFLICT clause"), infer.Location)
		case el.NullsOrdering != pg.SortByNulls_SORTBY_NULLS_DEFAULT:
			return posErr(pgerr.New(pgerr.InvalidColumnReference, "NULLS FIRST/LAST is not allowed in ON CONFLICT clause"), infer.Location)
		}
		var e expr
		var err error
		if el.Expr != nil {
			e, err = a.expr(el.Expr)
		} else {
			// a bare column, resolved where the clause stands
			e, _, _, err = a.sc.lookupColumn("", el.Name, infer.Location)
		}
		if err != nil {
			return err
		}
		match, err := inferCollationOpclass(el, e, infer.Location)
		if err != nil {
			return err
		}
		c, ok := e.(*colExpr)
		switch {
		case !ok || !match:
			exprs = true
		case c.i < len(t.Cols):
			cols[c.i] = true
		default:
			exprs = true // a system column
		}
	}
	if infer.WhereClause != nil {
		wa := a.noAggs("index predicates")
		w, err := wa.expr(infer.WhereClause)
		if err != nil {
			return err
		}
		if _, err := wa.asBool(w, "WHERE", exprLocation(infer.WhereClause)); err != nil {
			return err
		}
		// lockd has no partial indexes: every unique index satisfies it
	}
	oc.inferCols, oc.inferExprs = cols, exprs
	return nil
}

// finishOnConflict ends the analysis with what PostgreSQL's rewriter and
// planner find: two assignments to one column, then the arbiter indexes
// (infer_arbiter_indexes; 42P10 when none matches). It returns the plan's
// relation locks: the table and the indexes the inference opens.
func (s *planner) finishOnConflict(oc *onConflict, t *TableDef) ([]relLock, error) {
	if oc.dup != nil {
		return nil, oc.dup
	}
	rels := []relLock{{oid: t.OID, mode: locks.RowExclusiveLock}}
	if oc.any {
		return rels, nil
	}
	ixs := s.cat().tableIndexes(t)
	sort.Slice(ixs, func(i, j int) bool { return ixs[i].OID < ixs[j].OID })
	for _, ix := range ixs {
		rels = append(rels, relLock{oid: ix.OID, mode: locks.RowExclusiveLock, planOnly: true})
		if oc.conIndex != 0 {
			if ix.OID == oc.conIndex {
				oc.arbiters = []uint32{ix.OID}
				return rels, nil
			}
			continue
		}
		if ix.Unique && !oc.inferExprs && sameColumnsAs(ix.Cols, oc.inferCols) {
			oc.arbiters = append(oc.arbiters, ix.OID)
		}
	}
	if len(oc.arbiters) == 0 {
		return nil, pgerr.New(pgerr.InvalidColumnReference, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
	}
	return rels, nil
}

func sameColumnsAs(cols []int, set map[int]bool) bool {
	for _, c := range cols {
		if !set[c] {
			return false
		}
	}
	for c := range set {
		found := false
		for _, x := range cols {
			found = found || x == c
		}
		if !found {
			return false
		}
	}
	return true
}

// leafArbiters picks the arbiters among the indexes of the table a row
// goes in: the indexes inferred, or a partition's indexes of them.
func (oc *onConflict) leafArbiters(cat *catalogState, indexes []*IndexDef) []*IndexDef {
	var out []*IndexDef
	for _, ix := range indexes {
		if !ix.Unique {
			continue
		}
		if oc.any || oc.isArbiter(cat, ix) {
			out = append(out, ix)
		}
	}
	return out
}

func (oc *onConflict) isArbiter(cat *catalogState, ix *IndexDef) bool {
	for x := ix; x != nil; x = cat.Indexes[x.Parent] {
		for _, a := range oc.arbiters {
			if x.OID == a {
				return true
			}
		}
		if x.Parent == 0 {
			break
		}
	}
	return false
}

func containsIndex(list []*IndexDef, ix *IndexDef) bool {
	for _, x := range list {
		if x == ix {
			return true
		}
	}
	return false
}

// upsertRow inserts row (a full row of the table named) or resolves its
// conflict; done says it was inserted or updated, and so counts and was
// returned.
func (s *Executor) upsertRow(ec *evalCtx, p *insertPlan, row []Datum, emit func([]Datum) error) (done bool, err error) {
	oc := p.conflict
	t, indexes := p.t, p.indexes
	switch {
	case t.Partitioned():
		lf, err := s.routeRow(ec, p.route, t, row)
		if err != nil {
			return false, err
		}
		t, indexes = lf.t, lf.indexes
		if err := checkNotNull(t, row); err != nil {
			return false, err
		}
	case t.Parent != 0:
		if err := checkNotNull(t, row); err != nil {
			return false, err
		}
		if !fitsPartition(s.cat(), t, row) {
			return false, partitionViolation(t, row)
		}
	default:
		if err := checkNotNull(t, row); err != nil {
			return false, err
		}
	}
	arbiters := oc.leafArbiters(s.cat(), indexes)
	if len(arbiters) == 0 {
		tid, err := s.insertRow(ec, t, indexes, row)
		if err != nil {
			return false, err
		}
		return true, s.emitReturning(ec, p.ret, row, tid, t, emit)
	}
	for {
		tid, found, err := s.conflictPrecheck(ec, t, arbiters, row)
		if err != nil {
			return false, err
		}
		if found {
			if !oc.update {
				return false, s.checkConflictVisible(t, tid)
			}
			done, retry, err := s.conflictUpdate(ec, p, t, indexes, tid, row, emit)
			if err != nil || !retry {
				return done, err
			}
			continue
		}
		if err := s.checkConstraints(ec, t, row); err != nil { // CHECK constraints (check.go)
			return false, err
		}
		tid, inserted, err := s.insertSpeculative(ec, t, indexes, arbiters, row)
		if err != nil {
			return false, err
		}
		if inserted {
			if err := s.afterInsertRow(t, tid, row); err != nil { // foreign keys (ri.go)
				return false, err
			}
			return true, s.emitReturning(ec, p.ret, row, tid, t, emit)
		}
	}
}

// conflictPrecheck is ExecCheckIndexConstraints: the first live version
// under row's key in an arbiter index, after waiting for every running
// inserter or deleter met there.
func (s *Executor) conflictPrecheck(ec *evalCtx, t *TableDef, arbiters []*IndexDef, row []Datum) (storage.TID, bool, error) {
	for _, ix := range arbiters {
		key := s.indexKey(t, ix, row)
		if key == nil {
			continue // NULLs never conflict
		}
		for {
			f, _, _, err := s.uniqueScan(t, ix, key, storage.TID{}, true)
			if err != nil {
				return storage.TID{}, false, err
			}
			if f.found {
				return f.tid, true, nil
			}
			if f.wait == 0 {
				break
			}
			if err := s.waitInserter(ec, f.wait, f.token); err != nil {
				return storage.TID{}, false, err
			}
		}
	}
	return storage.TID{}, false, nil
}

// checkConflictVisible is DO NOTHING's check under REPEATABLE READ
// (ExecCheckTIDVisible): a conflicting version the transaction's snapshot
// cannot see, not inserted by the transaction itself, is 40001.
func (s *Executor) checkConflictVisible(t *TableDef, tid storage.TID) error {
	if s.txn.Isolation() == txn.ReadCommitted {
		return nil
	}
	rel := storage.RelID(t.RelFile)
	visible, err := s.store.Fetch(s.proc, &s.txn, rel, tid, nil)
	if err != nil || visible {
		return err
	}
	var xmin txn.Xid
	if _, err := s.store.FetchAny(s.proc, rel, tid, func(h *txn.TupleHeader, _ storage.TID, _ []byte) { xmin = h.Xmin }); err != nil {
		return err
	}
	if s.txn.IsCurrent(xmin) {
		return nil
	}
	return pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent update")
}

// conflictUpdate is ExecOnConflictUpdate for the conflicting version at
// tid of t: lock it, check it, apply SET. retry asks the caller to start
// the row over (READ COMMITTED, the version was replaced meanwhile).
func (s *Executor) conflictUpdate(ec *evalCtx, p *insertPlan, t *TableDef, indexes []*IndexDef, tid storage.TID, excluded []Datum, emit func([]Datum) error) (done, retry bool, err error) {
	oc := p.conflict
	rel := storage.RelID(t.RelFile)
	st := s.store
	out, err := st.LockTuple(ec.ctx, s.proc, &s.txn, rel, tid, oc.mode, s.rowWait(storage.WaitBlock, t))
	if err != nil {
		return false, false, err
	}
	switch out.Result {
	case txn.TMOk:
	case txn.TMUpdated, txn.TMDeleted:
		if s.txn.Isolation() != txn.ReadCommitted {
			what := "update"
			if out.Result == txn.TMDeleted {
				what = "delete"
			}
			return false, false, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
		}
		return false, true, nil
	case txn.TMInvisible:
		var xmin txn.Xid
		if _, err := st.FetchAny(s.proc, rel, tid, func(h *txn.TupleHeader, _ storage.TID, _ []byte) { xmin = h.Xmin }); err != nil {
			return false, false, err
		}
		if s.txn.IsCurrent(xmin) {
			// a row this command inserted or updated: the rows proposed
			// for insertion share a key
			return false, false, pgerr.New(pgerr.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").
				WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
		}
		return false, false, pgerr.New(pgerr.InternalError, "attempted to lock invisible tuple")
	default:
		return false, false, pgerr.New(pgerr.InternalError, "unexpected result %s locking the conflicting tuple", out.Result)
	}

	// locked: the version the snapshot must see under REPEATABLE READ
	// (ExecCheckTupleVisible), its values, then WHERE and SET
	nc := len(t.Cols)
	level := oc.level
	var xmin txn.Xid
	var derr error
	found, err := st.FetchAny(s.proc, rel, tid, func(h *txn.TupleHeader, _ storage.TID, data []byte) {
		xmin = h.Xmin
		derr = decodeRow(data, t, level[:nc])
	})
	if err = firstErr(err, derr); err != nil {
		return false, false, err
	}
	if !found {
		return false, true, nil
	}
	if s.txn.Isolation() != txn.ReadCommitted && !s.txn.IsCurrent(xmin) {
		visible, err := st.Fetch(s.proc, &s.txn, rel, tid, nil)
		if err != nil {
			return false, false, err
		}
		if !visible {
			return false, false, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent update")
		}
	}
	level[nc+sysColCtid] = tidDatum(tid)
	level[nc+sysColTableoid] = intDatum(int64(t.OID))
	copy(level[oc.exclOff:], excluded)
	if oc.where != nil {
		v, err := oc.where.eval(ec, level)
		if err != nil {
			return false, false, err
		}
		if v.Null || v.I == 0 {
			return false, false, nil // not updated; the row stays locked
		}
	}
	newRow := make([]Datum, nc)
	for i := range newRow {
		if e, ok := oc.set[i]; ok {
			v, err := e.eval(ec, level)
			if err != nil {
				return false, false, err
			}
			newRow[i] = v
		} else {
			newRow[i] = level[i]
		}
	}
	if t.Parent != 0 && !fitsPartition(s.cat(), t, newRow) {
		return false, false, pgerr.NotSupported("invalid ON UPDATE specification").
			WithDetail("The result tuple would appear in a different partition than the original tuple.")
	}
	if err := checkNotNull(t, newRow); err != nil {
		return false, false, err
	}
	if err := s.checkConstraints(ec, t, newRow); err != nil { // check.go
		return false, false, err
	}
	mp := modifyPlan{t: t, indexes: indexes, set: oc.set}
	s.rowBuf = appendRow(s.rowBuf[:0], t, newRow)
	out, err = st.Update(ec.ctx, s.proc, &s.txn, rel, tid, s.rowBuf, fillfactor(t), mp.keysChanged(level[:nc], newRow), s.rowWait(storage.WaitBlock, t))
	if err != nil {
		return false, false, err
	}
	switch out.Result {
	case txn.TMOk:
	case txn.TMSelfModified:
		return false, false, nil
	default:
		return false, false, pgerr.New(pgerr.InternalError, "unexpected result %s updating the locked conflicting tuple", out.Result)
	}
	if err := s.insertIndexEntries(ec, t, indexes, newRow, out.NewTID); err != nil {
		return false, false, err
	}
	if err := s.afterUpdateRow(t, oc.set, level[:nc], out.NewTID, newRow); err != nil { // foreign keys (ri.go)
		return false, false, err
	}
	return true, false, s.emitReturning(ec, p.ret, newRow, out.NewTID, t, emit)
}

// insertSpeculative inserts row into t speculatively (step 2 above):
// inserted is false when an arbiter index met a conflict and the
// insertion was undone.
func (s *Executor) insertSpeculative(ec *evalCtx, t *TableDef, indexes, arbiters []*IndexDef, row []Datum) (tid storage.TID, inserted bool, err error) {
	if _, err := s.txn.AssignXid(); err != nil {
		return tid, false, err
	}
	s.specToken++
	if s.specToken == 0 {
		s.specToken = 1
	}
	token := s.specToken
	tag := locks.SpeculativeTokenTag(uint32(s.txn.CurrentXid()), token)
	if err := s.locks.Lock(ec.ctx, s.proc, tag, locks.ExclusiveLock, s.lockOptions(false, false)); err != nil {
		return tid, false, err
	}
	// On an error the token stays locked until the (sub)transaction
	// aborts: waiters then find the tuple's inserter aborted.
	rel := storage.RelID(t.RelFile)
	st := s.store
	s.rowBuf = appendRow(s.rowBuf[:0], t, row)
	if tid, err = st.InsertSpeculative(ec.ctx, s.proc, &s.txn, rel, s.rowBuf, fillfactor(t), token); err != nil {
		return tid, false, err
	}
	if specHook != nil {
		specHook("heap")
	}
	conflict := false
	for _, ix := range indexes {
		key := s.indexKey(t, ix, row)
		if key == nil {
			continue
		}
		switch {
		case containsIndex(arbiters, ix):
			ok, err := s.insertArbiter(t, ix, key, tid)
			if err != nil {
				return tid, false, err
			}
			conflict = conflict || !ok
		case ix.Unique:
			if err := s.insertUnique(ec, t, ix, row, key, tid); err != nil {
				return tid, false, err
			}
		default:
			if err := st.IndexInsert(s.proc, storage.RelID(ix.RelFile), key, tid); err != nil {
				return tid, false, err
			}
		}
	}
	if specHook != nil {
		specHook("indexed")
	}
	if conflict {
		err = st.AbortSpeculative(s.proc, &s.txn, rel, tid)
	} else {
		err = st.FinishSpeculative(s.proc, rel, tid)
	}
	if err != nil {
		return tid, false, err
	}
	s.locks.Unlock(s.proc, tag, locks.ExclusiveLock, false)
	return tid, !conflict, nil
}

// btreeOpclassInput is the input type of each built-in btree operator
// class lockd's types have, for ON CONFLICT inference; 0 for the pattern
// classes, which no index of lockd's uses.
var btreeOpclassInput = map[string]uint32{
	"bool_ops": OIDBool, "bytea_ops": OIDBytea, "char_ops": OIDChar, "name_ops": OIDName,
	"int2_ops": OIDInt2, "int4_ops": OIDInt4, "int8_ops": OIDInt8, "oid_ops": OIDOid, "tid_ops": OIDTid,
	"float4_ops": OIDFloat4, "float8_ops": OIDFloat8, "numeric_ops": OIDNumeric,
	"text_ops": OIDText, "varchar_ops": OIDText, "bpchar_ops": OIDBpchar,
	"date_ops": OIDDate, "timestamp_ops": OIDTimestamp, "timestamptz_ops": OIDTimestamptz, "interval_ops": OIDInterval,
	"text_pattern_ops": 0, "varchar_pattern_ops": 0, "bpchar_pattern_ops": 0,
}

// inferCollationOpclass reports whether an inference element's COLLATE
// and operator class match what lockd's indexes have for the element's
// type — the default collation for text types, the type's default btree
// class (infer_collation_opclass_match); unknown names are PostgreSQL's
// 42704 errors.
func inferCollationOpclass(el *pg.IndexElem, e expr, loc int32) (bool, error) {
	typ := e.typ().OID
	match := true
	if n := len(el.Collation); n > 0 {
		name := el.Collation[n-1].GetString_().GetSval()
		switch name {
		case "default":
			match = typ == OIDText || typ == OIDVarchar || typ == OIDBpchar
		case "C", "POSIX", "ucs_basic":
			match = typ == OIDName && name == "C"
		default:
			return false, posErr(pgerr.New(pgerr.UndefinedObject, "collation \"%s\" for encoding \"UTF8\" does not exist", name), loc)
		}
	}
	if n := len(el.Opclass); n > 0 {
		name := el.Opclass[n-1].GetString_().GetSval()
		in, ok := btreeOpclassInput[name]
		if !ok {
			return false, pgerr.New(pgerr.UndefinedObject, "operator class \"%s\" does not exist for access method \"btree\"", name)
		}
		if typ == OIDVarchar {
			typ = OIDText // a varchar column's index uses text_ops
		}
		match = match && in == typ
	}
	return match, nil
}
