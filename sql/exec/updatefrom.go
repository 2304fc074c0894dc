package exec

import (
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

func (s *Executor) execJoinModify(ec *expr.EvalCtx, p *plan.JoinModifyPlan, emit func([]types.Datum) error) (int64, error) {
	if ok, err := passes(ec, p.OneTime, nil); err != nil || !ok {
		return 0, err
	}
	clear(p.Leaves)
	// a partition named directly keeps its rows; through a partitioned
	// ancestor they move to the partition their new key belongs in
	p.Pu = plan.PartUpdate{Router: p.Pu.Router}
	if p.T.Partitioned() {
		p.Pu.Root = p.T.OID
	}
	defer s.finishPartUpdate(&p.Pu)

	buf := make([]types.Datum, p.Width)
	var rows [][]types.Datum
	err := s.runNode(ec, p.From, buf, func() error {
		if ec.Tick++; ec.Tick&1023 == 0 {
			if err := expr.CheckCancel(ec); err != nil {
				return err
			}
		}
		rows = append(rows, append([]types.Datum(nil), buf...))
		return nil
	})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	if _, err := s.Txn.AssignXid(); err != nil {
		return 0, err
	}
	var n int64
	for _, level := range rows {
		done, err := s.joinModifyRow(ec, p, level, emit)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// joinModifyRow changes the target row of one combination, following it
// to its newest version under READ COMMITTED; done is false when the row
// was skipped (changed by this command already, gone, or no longer
// qualifying).
func (s *Executor) joinModifyRow(ec *expr.EvalCtx, p *plan.JoinModifyPlan, level []types.Datum, emit func([]types.Datum) error) (done bool, err error) {
	nc := len(p.T.Cols)
	ctid, toid := level[p.Off+nc+plan.SysColCtid], level[p.Off+nc+plan.SysColTableoid]
	if ctid.Null || toid.Null {
		return false, nil
	}
	l, err := p.Leaf(s.Cat(), uint32(toid.I))
	if err != nil {
		return false, err
	}
	t := l.Mp.T
	rel := storage.RelID(t.RelFile)
	tid := storage.TID{Block: uint32(ctid.I >> 16), Offset: uint16(ctid.I)}
	newRow := make([]types.Datum, nc)
	for {
		var out storage.UpdateOutcome
		var moved bool
		var movedTID storage.TID
		var movedTo *catalog.TableDef
		if p.Delete {
			out, err = s.Store.Delete(ec.Ctx, s.Proc, &s.Txn, rel, tid, s.rowWait(storage.WaitBlock, t))
		} else {
			old := level[p.Off : p.Off+nc]
			for i := range newRow {
				if e, ok := p.Set[i]; ok {
					v, err := e.Eval(ec, level)
					if err != nil {
						return false, err
					}
					newRow[i] = v
				} else {
					newRow[i] = old[i]
				}
			}
			if t.Parent != 0 {
				if moved, out, movedTID, movedTo, err = s.moveRow(ec, &l.Mp, tid, old, newRow); err != nil {
					return false, err
				}
			}
			if !moved {
				if err := plan.CheckNotNull(t, newRow); err != nil {
					return false, err
				}
				if err := s.checkConstraints(ec, t, newRow); err != nil { // insert.go
					return false, err
				}
				s.rowBuf = catalog.AppendRow(s.rowBuf[:0], t, newRow)
				out, err = s.Store.Update(ec.Ctx, s.Proc, &s.Txn, rel, tid, s.rowBuf, plan.Fillfactor(t),
					l.Mp.KeysChanged(old, newRow), l.Mp.HotAllowed(old, newRow), s.rowWait(storage.WaitBlock, t))
			}
		}
		if err != nil {
			return false, err
		}
		switch out.Result {
		case txn.TMOk:
			switch {
			case p.Delete:
				s.TabStats.Deleted(t.OID, 1)
			case !moved:
				s.TabStats.Updated(t.OID, 1)
				if out.HOT {
					s.TabStats.HotUpdated(t.OID)
				}
			}
			switch {
			case p.Delete:
				if err := s.afterDeleteRow(t, level[p.Off:p.Off+nc]); err != nil { // foreign keys (ri.go)
					return false, err
				}
				return true, s.emitJoinReturning(ec, p, level, nil, tid, t, emit)
			case moved:
				return true, s.emitJoinReturning(ec, p, level, newRow, movedTID, movedTo, emit)
			}
			if !out.HOT {
				if err := s.insertIndexEntries(ec, t, l.Mp.Indexes, newRow, out.NewTID); err != nil {
					return false, err
				}
			}
			if err := s.afterUpdateRow(t, l.Mp.Set, level[p.Off:p.Off+nc], out.NewTID, newRow); err != nil { // foreign keys (ri.go)
				return false, err
			}
			return true, s.emitJoinReturning(ec, p, level, newRow, out.NewTID, t, emit)
		case txn.TMBeingModified:
			if err := s.Txn.WaitForOptions(ec.Ctx, out.WaitXid, s.LockOptions(false, false)); err != nil {
				return false, err
			}
			continue
		case txn.TMUpdated, txn.TMDeleted:
			movedAway := out.Result == txn.TMDeleted && out.NextTID == storage.MovedPartitions
			if s.Txn.Isolation() != txn.ReadCommitted {
				what := "update"
				if out.Result == txn.TMDeleted && !movedAway {
					what = "delete"
				}
				return false, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
			}
			if movedAway {
				return false, movedError()
			}
			if out.Result == txn.TMDeleted {
				return false, nil
			}
			next, nrow, ok, err := s.latestVersion(ec, t, out.NextTID)
			if err != nil || !ok {
				return false, err
			}
			copy(level[p.Off:], nrow)
			if ok, err := passes(ec, p.Recheck, level); err != nil || !ok {
				return false, err
			}
			tid = next
			continue
		}
		return false, nil // TMSelfModified (changed by this command already), TMInvisible
	}
}

// moveRow is the row movement of an UPDATE through a partitioned table:
// when newRow no longer belongs in partition mp.t, the old version is
// deleted there and newRow routed to its partition (movedTID and movedTo
// say where it went); moved reports that the deletion was attempted and
// out is its outcome.
func (s *Executor) moveRow(ec *expr.EvalCtx, mp *plan.ModifyPlan, tid storage.TID, old, newRow []types.Datum) (moved bool, out storage.UpdateOutcome, movedTID storage.TID, movedTo *catalog.TableDef, err error) {
	if fitsPartition(s.Cat(), mp.T, newRow) {
		return false, out, movedTID, nil, nil
	}
	router := mp.Part.Mover()
	if router == nil {
		return false, out, movedTID, nil, partitionViolation(mp.T, newRow)
	}
	rel := storage.RelID(mp.T.RelFile)
	out, err = s.Store.Delete(ec.Ctx, s.Proc, &s.Txn, rel, tid, s.rowWait(storage.WaitBlock, mp.T))
	if err != nil || out.Result != txn.TMOk {
		return true, out, movedTID, nil, err
	}
	s.TabStats.Deleted(mp.T.OID, 1)
	if err := s.Store.MarkMovedPartitions(s.Proc, &s.Txn, rel, tid); err != nil {
		return true, out, movedTID, nil, err
	}
	if err := s.afterMoveDelete(mp.T, old); err != nil { // foreign keys (ri.go)
		return true, out, movedTID, nil, err
	}
	row := append([]types.Datum(nil), newRow...)
	if movedTID, movedTo, err = s.routeInsertTID(ec, router, row); err != nil {
		return true, out, movedTID, movedTo, err
	}
	return true, out, movedTID, movedTo, s.afterMoveUpdate(mp.T, mp.Part.Root, mp.Set, old, row)
}

// emitReturning evaluates RETURNING over the level row, the target's part
// replaced by the row written (nil: the level row's, for DELETE) at tid of
// table t.
func (x *Executor) emitJoinReturning(ec *expr.EvalCtx, p *plan.JoinModifyPlan, level, row []types.Datum, tid storage.TID, t *catalog.TableDef, emit func([]types.Datum) error) error {
	if p.Ret == nil {
		return nil
	}
	buf := p.RetBuf
	copy(buf, level)
	nc := len(p.T.Cols)
	if row != nil {
		copy(buf[p.Off:p.Off+nc], row)
	}
	buf[p.Off+nc+plan.SysColCtid] = tidDatum(tid)
	buf[p.Off+nc+plan.SysColTableoid] = types.IntDatum(int64(t.OID))
	for i, e := range p.Ret {
		v, err := e.Eval(ec, buf)
		if err != nil {
			return err
		}
		p.RetOut[i] = v
	}
	return emit(p.RetOut)
}
