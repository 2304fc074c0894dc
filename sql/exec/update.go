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

// execModifyPartitioned runs an UPDATE or DELETE of a partitioned table:
// each partition not pruned is modified as a table of its own, and rows
// whose partition key an UPDATE changes move to their new partition.
func (s *Executor) execModifyPartitioned(ec *expr.EvalCtx, p *plan.ModifyPlan, emit func([]types.Datum) error) (int64, error) {
	leaves, err := s.partitionsToScan(ec, p.Parts)
	if err != nil {
		return 0, err
	}
	var pu *plan.PartUpdate
	if !p.Delete {
		pu = &p.Parts.Pu
		*pu = plan.PartUpdate{Root: p.T.OID, Router: pu.Router}
		defer s.finishPartUpdate(pu)
	}
	var n int64
	sub := &p.Parts.Sub
	for _, lf := range leaves {
		*sub = plan.ModifyPlan{T: lf.T, Src: lf.Ts, Where: p.Where, Set: p.Set, Indexes: lf.Idx, Delete: p.Delete, Part: pu, Ret: p.Ret}
		k, err := s.execModify(ec, sub, emit)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (x *Executor) modifyMatches(ec *expr.EvalCtx, p *plan.ModifyPlan, row []types.Datum) (bool, error) {
	if p.Where == nil {
		return true, nil
	}
	v, err := p.Where.Eval(ec, row)
	if err != nil {
		return false, err
	}
	return !v.Null && v.I != 0, nil
}

// execModify finds the target rows with the statement's snapshot, then
// updates or deletes each one with PostgreSQL's concurrency rules: a row
// being changed by a running transaction is waited for (ShareLock on its
// transaction id); under READ COMMITTED a row changed by a committed
// transaction is re-read at its newest version and the WHERE clause
// re-checked (EvalPlanQual); under REPEATABLE READ that is error 40001.
func (s *Executor) execModify(ec *expr.EvalCtx, p *plan.ModifyPlan, emit func([]types.Datum) error) (int64, error) {
	if p.Parts != nil {
		return s.execModifyPartitioned(ec, p, emit)
	}
	// the scan's row, the targets, their rows' copies (one span) and the
	// new row are scratch (executor.go)
	targets := s.takeTargets()
	copies := s.takeRow(0)
	scanRow := s.takeRow(len(p.Src.Defs) + plan.NumSysCols)
	defer func() {
		s.giveTargets(targets)
		s.giveRow(copies)
		s.giveRow(scanRow)
	}()
	find := func(count func(func() error) error) error {
		s.leafDst = scanRow // the scan decodes its rows there (takeLeafDst)
		defer func() { s.leafDst = nil }()
		return s.ScanTableTIDs(ec, p.Src, func(tid storage.TID, row []types.Datum) error {
			ok, err := s.modifyMatches(ec, p, row)
			if err != nil || !ok {
				if st := ec.Stats(p.Src); st != nil && err == nil {
					st.Removed++
				}
				return err
			}
			return count(func() error {
				at := len(copies)
				copies = append(copies, row...)
				targets = append(targets, plan.Target{Tid: tid, Row: copies[at:len(copies):len(copies)]})
				return nil
			})
		})
	}
	var err error
	if st := ec.Stats(p.Src); st != nil {
		err = timed(st, find) // EXPLAIN ANALYZE: the scan's counts
	} else {
		err = find(func(f func() error) error { return f() })
	}
	if err != nil {
		return 0, err
	}
	if len(targets) == 0 {
		return 0, nil
	}
	if _, err := s.Txn.AssignXid(); err != nil {
		return 0, err
	}
	rel := storage.RelID(p.T.RelFile)
	var n int64
	newRow := s.takeRow(len(p.T.Cols))
	defer s.giveRow(newRow)
	for _, tg := range targets {
		tid, row := tg.Tid, tg.Row
		for {
			var out storage.UpdateOutcome
			moved := false
			if p.Delete {
				out, err = s.Store.Delete(ec.Ctx, s.Proc, &s.Txn, rel, tid, s.rowWait(storage.WaitBlock, p.T))
			} else {
				for i := range newRow {
					if e, ok := p.Set[i]; ok {
						v, err := e.Eval(ec, row)
						if err != nil {
							return 0, err
						}
						newRow[i] = v
					} else {
						newRow[i] = row[i]
					}
				}
				if p.Part != nil { // a partition: the row may have to move (routing.go)
					if moved, out, err = s.partitionUpdate(ec, p, tid, row, newRow); err != nil {
						return 0, err
					}
				}
				if !moved {
					if err := plan.CheckNotNull(p.T, newRow); err != nil {
						return 0, err
					}
					if err := s.checkConstraints(ec, p.T, newRow); err != nil { // insert.go
						return 0, err
					}
					s.rowBuf = catalog.AppendRow(s.rowBuf[:0], p.T, newRow)
					out, err = s.Store.Update(ec.Ctx, s.Proc, &s.Txn, rel, tid, s.rowBuf, plan.Fillfactor(p.T),
						p.KeysChanged(row, newRow), p.HotAllowed(row, newRow), s.rowWait(storage.WaitBlock, p.T))
				}
			}
			if err != nil {
				return 0, err
			}
			switch out.Result {
			case txn.TMOk:
				n++
				switch {
				case p.Delete:
					s.TabStats.Deleted(p.T.OID, 1)
				case !moved: // a moved row's delete and insert count themselves
					s.TabStats.Updated(p.T.OID, 1)
					if out.HOT {
						s.TabStats.HotUpdated(p.T.OID)
					}
				}
				if !p.Delete && !moved {
					if !out.HOT {
						if err := s.insertIndexEntries(ec, p.T, p.Indexes, newRow, out.NewTID); err != nil {
							return 0, err
						}
					}
					if err := s.afterUpdateRow(p.T, p.Set, row, out.NewTID, newRow); err != nil { // foreign keys (ri.go)
						return 0, err
					}
					err = s.emitReturning(ec, p.Ret, newRow, out.NewTID, p.T, emit)
				} else {
					if p.Delete {
						if err := s.afterDeleteRow(p.T, row); err != nil { // foreign keys (ri.go)
							return 0, err
						}
					}
					err = s.emitReturning(ec, p.Ret, row, tid, p.T, emit)
				}
				if err != nil {
					return 0, err
				}
			case txn.TMBeingModified:
				if err := s.Txn.WaitForOptions(ec.Ctx, out.WaitXid, s.LockOptions(false, false)); err != nil {
					return 0, err
				}
				continue // try the same version again
			case txn.TMUpdated, txn.TMDeleted:
				movedAway := out.Result == txn.TMDeleted && out.NextTID == storage.MovedPartitions
				if s.Txn.Isolation() != txn.ReadCommitted {
					what := "update"
					if out.Result == txn.TMDeleted && !movedAway {
						what = "delete"
					}
					return 0, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
				}
				if movedAway { // another transaction moved the row to a different partition
					return 0, movedError()
				}
				if out.Result == txn.TMDeleted {
					break
				}
				// EvalPlanQual: re-read the newest version and re-check.
				next, nrow, ok, err := s.latestVersion(ec, p.T, out.NextTID)
				if err != nil {
					return 0, err
				}
				if !ok {
					break
				}
				if match, err := s.modifyMatches(ec, p, nrow); err != nil {
					return 0, err
				} else if !match {
					break
				}
				tid, row = next, nrow
				continue
			}
			break
		}
	}
	return n, nil
}

// latestVersion follows the update chain from tid to its live end and
// returns that version's row. As PostgreSQL does, a transaction counts as
// finished only once it has left the ProcArray (it may already be marked
// committed in the commit log while still there): a version whose
// inserter is still finishing is waited for.
func (s *Executor) latestVersion(ec *expr.EvalCtx, t *catalog.TableDef, tid storage.TID) (storage.TID, []types.Datum, bool, error) {
	rel := storage.RelID(t.RelFile)
	row := make([]types.Datum, len(t.Cols)+plan.NumSysCols)
	row[len(t.Cols)+plan.SysColTableoid] = types.IntDatum(int64(t.OID))
	txns := s.Txns
	for hops := 0; hops < 1<<20; hops++ {
		var next storage.TID
		var derr error
		var gone, updated bool
		var wait txn.Xid
		found, err := s.Store.FetchAny(s.Proc, rel, tid, func(h *txn.TupleHeader, ctid storage.TID, data []byte) {
			if txns.IsRunning(h.Xmin) {
				wait = h.Xmin
				return
			}
			if txns.Status(h.Xmin) != txn.Committed {
				gone = true
				return
			}
			if u := txns.UpdateXid(h); h.Flags&txn.Updated != 0 && !txns.IsRunning(u) && txns.Status(u) == txn.Committed {
				updated = true
				next = ctid
				return
			}
			derr = catalog.DecodeRow(data, t, row)
			row[len(t.Cols)+plan.SysColCtid] = tidDatum(tid)
		})
		if err != nil || derr != nil {
			return tid, nil, false, plan.FirstErr(err, derr)
		}
		switch {
		case !found || gone:
			return tid, nil, false, nil
		case wait != 0:
			if err := s.Txn.WaitForOptions(ec.Ctx, wait, s.LockOptions(false, false)); err != nil {
				return tid, nil, false, err
			}
			continue // look at the same version again
		case updated:
			tid = next
			continue
		}
		return tid, row, true, nil
	}
	return tid, nil, false, nil
}
