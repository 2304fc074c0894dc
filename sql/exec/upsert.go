package exec

import (
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// upsertRow inserts row (a full row of the table named) or resolves its
// conflict; done says it was inserted or updated, and so counts and was
// returned.
func (s *Executor) upsertRow(ec *expr.EvalCtx, p *plan.InsertPlan, row []types.Datum, emit func([]types.Datum) error) (done bool, err error) {
	oc := p.Conflict
	t, indexes := p.T, p.Indexes
	switch {
	case t.Partitioned():
		lf, err := s.routeRow(ec, p.Route, t, row)
		if err != nil {
			return false, err
		}
		t, indexes = lf.T, lf.Indexes
		if err := plan.CheckNotNull(t, row); err != nil {
			return false, err
		}
	case t.Parent != 0:
		if err := plan.CheckNotNull(t, row); err != nil {
			return false, err
		}
		if !fitsPartition(s.Cat(), t, row) {
			return false, partitionViolation(t, row)
		}
	default:
		if err := plan.CheckNotNull(t, row); err != nil {
			return false, err
		}
	}
	arbiters := oc.LeafArbiters(s.Cat(), indexes)
	if len(arbiters) == 0 {
		tid, err := s.InsertRow(ec, t, indexes, row)
		if err != nil {
			return false, err
		}
		return true, s.emitReturning(ec, p.Ret, row, tid, t, emit)
	}
	for {
		tid, found, err := s.conflictPrecheck(ec, t, arbiters, row)
		if err != nil {
			return false, err
		}
		if found {
			if !oc.Update {
				return false, s.checkConflictVisible(t, tid)
			}
			done, retry, err := s.conflictUpdate(ec, p, t, indexes, tid, row, emit)
			if err != nil || !retry {
				return done, err
			}
			continue
		}
		if err := s.checkConstraints(ec, t, row); err != nil { // CHECK constraints (insert.go)
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
			return true, s.emitReturning(ec, p.Ret, row, tid, t, emit)
		}
	}
}

// conflictPrecheck is ExecCheckIndexConstraints: the first live version
// under row's key in an arbiter index, after waiting for every running
// inserter or deleter met there.
func (s *Executor) conflictPrecheck(ec *expr.EvalCtx, t *catalog.TableDef, arbiters []*catalog.IndexDef, row []types.Datum) (storage.TID, bool, error) {
	for _, ix := range arbiters {
		key, null := s.IndexKey(t, ix, row)
		if null {
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
func (s *Executor) checkConflictVisible(t *catalog.TableDef, tid storage.TID) error {
	if s.Txn.Isolation() == txn.ReadCommitted {
		return nil
	}
	rel := storage.RelID(t.RelFile)
	visible, err := s.Store.Fetch(s.Proc, &s.Txn, rel, tid, nil)
	if err != nil || visible {
		return err
	}
	var xmin txn.Xid
	if _, err := s.Store.FetchAny(s.Proc, rel, tid, func(h *txn.TupleHeader, _ storage.TID, _ []byte) { xmin = h.Xmin }); err != nil {
		return err
	}
	if s.Txn.IsCurrent(xmin) {
		return nil
	}
	return pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent update")
}

// conflictUpdate is ExecOnConflictUpdate for the conflicting version at
// tid of t: lock it, check it, apply SET. retry asks the caller to start
// the row over (READ COMMITTED, the version was replaced meanwhile).
func (s *Executor) conflictUpdate(ec *expr.EvalCtx, p *plan.InsertPlan, t *catalog.TableDef, indexes []*catalog.IndexDef, tid storage.TID, excluded []types.Datum, emit func([]types.Datum) error) (done, retry bool, err error) {
	oc := p.Conflict
	rel := storage.RelID(t.RelFile)
	st := s.Store
	out, err := st.LockTuple(ec.Ctx, s.Proc, &s.Txn, rel, tid, oc.Mode, s.rowWait(storage.WaitBlock, t))
	if err != nil {
		return false, false, err
	}
	switch out.Result {
	case txn.TMOk:
	case txn.TMUpdated, txn.TMDeleted:
		if s.Txn.Isolation() != txn.ReadCommitted {
			what := "update"
			if out.Result == txn.TMDeleted {
				what = "delete"
			}
			return false, false, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
		}
		return false, true, nil
	case txn.TMInvisible:
		var xmin txn.Xid
		if _, err := st.FetchAny(s.Proc, rel, tid, func(h *txn.TupleHeader, _ storage.TID, _ []byte) { xmin = h.Xmin }); err != nil {
			return false, false, err
		}
		if s.Txn.IsCurrent(xmin) {
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
	level := oc.Level
	var xmin txn.Xid
	var derr error
	found, err := st.FetchAny(s.Proc, rel, tid, func(h *txn.TupleHeader, _ storage.TID, data []byte) {
		xmin = h.Xmin
		derr = catalog.DecodeRow(data, t, level[:nc])
	})
	if err = plan.FirstErr(err, derr); err != nil {
		return false, false, err
	}
	if !found {
		return false, true, nil
	}
	if s.Txn.Isolation() != txn.ReadCommitted && !s.Txn.IsCurrent(xmin) {
		visible, err := st.Fetch(s.Proc, &s.Txn, rel, tid, nil)
		if err != nil {
			return false, false, err
		}
		if !visible {
			return false, false, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent update")
		}
	}
	level[nc+plan.SysColCtid] = tidDatum(tid)
	level[nc+plan.SysColTableoid] = types.IntDatum(int64(t.OID))
	copy(level[oc.ExclOff:], excluded)
	if oc.Where != nil {
		v, err := oc.Where.Eval(ec, level)
		if err != nil {
			return false, false, err
		}
		if v.Null || v.I == 0 {
			return false, false, nil // not updated; the row stays locked
		}
	}
	newRow := make([]types.Datum, nc)
	for i := range newRow {
		if e, ok := oc.Set[i]; ok {
			v, err := e.Eval(ec, level)
			if err != nil {
				return false, false, err
			}
			newRow[i] = v
		} else {
			newRow[i] = level[i]
		}
	}
	if t.Parent != 0 && !fitsPartition(s.Cat(), t, newRow) {
		return false, false, pgerr.NotSupported("invalid ON UPDATE specification").
			WithDetail("The result tuple would appear in a different partition than the original tuple.")
	}
	if err := plan.CheckNotNull(t, newRow); err != nil {
		return false, false, err
	}
	if err := s.checkConstraints(ec, t, newRow); err != nil { // insert.go
		return false, false, err
	}
	mp := plan.ModifyPlan{T: t, Indexes: indexes, Set: oc.Set}
	s.rowBuf = catalog.AppendRow(s.rowBuf[:0], t, newRow)
	out, err = st.Update(ec.Ctx, s.Proc, &s.Txn, rel, tid, s.rowBuf, plan.Fillfactor(t), mp.KeysChanged(level[:nc], newRow), mp.HotAllowed(level[:nc], newRow), s.rowWait(storage.WaitBlock, t))
	if err != nil {
		return false, false, err
	}
	switch out.Result {
	case txn.TMOk:
		s.TabStats.Updated(t.OID, 1)
		if out.HOT {
			s.TabStats.HotUpdated(t.OID)
		}
	case txn.TMSelfModified:
		return false, false, nil
	default:
		return false, false, pgerr.New(pgerr.InternalError, "unexpected result %s updating the locked conflicting tuple", out.Result)
	}
	if !out.HOT {
		if err := s.insertIndexEntries(ec, t, indexes, newRow, out.NewTID); err != nil {
			return false, false, err
		}
	}
	if err := s.afterUpdateRow(t, oc.Set, level[:nc], out.NewTID, newRow); err != nil { // foreign keys (ri.go)
		return false, false, err
	}
	return true, false, s.emitReturning(ec, p.Ret, newRow, out.NewTID, t, emit)
}

// insertSpeculative inserts row into t speculatively (step 2 above):
// inserted is false when an arbiter index met a conflict and the
// insertion was undone.
func (s *Executor) insertSpeculative(ec *expr.EvalCtx, t *catalog.TableDef, indexes, arbiters []*catalog.IndexDef, row []types.Datum) (tid storage.TID, inserted bool, err error) {
	if _, err := s.Txn.AssignXid(); err != nil {
		return tid, false, err
	}
	s.specToken++
	if s.specToken == 0 {
		s.specToken = 1
	}
	token := s.specToken
	tag := locks.SpeculativeTokenTag(uint32(s.Txn.CurrentXid()), token)
	if err := s.Locks.Lock(ec.Ctx, s.Proc, tag, locks.ExclusiveLock, s.LockOptions(false, false)); err != nil {
		return tid, false, err
	}
	// On an error the token stays locked until the (sub)transaction
	// aborts: waiters then find the tuple's inserter aborted.
	rel := storage.RelID(t.RelFile)
	st := s.Store
	s.rowBuf = catalog.AppendRow(s.rowBuf[:0], t, row)
	if tid, err = st.InsertSpeculative(ec.Ctx, s.Proc, &s.Txn, rel, s.rowBuf, plan.Fillfactor(t), token); err != nil {
		return tid, false, err
	}
	s.TabStats.Inserted(t.OID, 1) // as heap_insert counts it, kept or not
	if plan.SpecHook != nil {
		plan.SpecHook("heap")
	}
	conflict := false
	for _, ix := range indexes {
		key, null := s.IndexKey(t, ix, row)
		switch {
		case null:
			if err := st.IndexInsert(s.Proc, storage.RelID(ix.RelFile), key, tid); err != nil {
				return tid, false, err
			}
		case plan.ContainsIndex(arbiters, ix):
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
			if err := st.IndexInsert(s.Proc, storage.RelID(ix.RelFile), key, tid); err != nil {
				return tid, false, err
			}
		}
	}
	if plan.SpecHook != nil {
		plan.SpecHook("indexed")
	}
	if conflict {
		err = st.AbortSpeculative(s.Proc, &s.Txn, rel, tid)
		s.TabStats.Deleted(t.OID, 1) // as heap_abort_speculative: the insertion was counted
	} else {
		err = st.FinishSpeculative(s.Proc, rel, tid)
	}
	if err != nil {
		return tid, false, err
	}
	s.Locks.Unlock(s.Proc, tag, locks.ExclusiveLock, false)
	return tid, !conflict, nil
}
