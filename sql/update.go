package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

// modifyPlan is a compiled UPDATE or DELETE.
type modifyPlan struct {
	t       *TableDef
	src     *tableSource
	where   expr
	set     map[int]expr // UPDATE: column → new value over the old row
	indexes []*IndexDef
	delete  bool
	ret     *returning
	parts   *partitionedSource // a partitioned table (partscan.go)
	part    *partUpdate        // a partition (partroute.go)
}

func (s *planner) compileUpdate(up *pg.UpdateStmt, params *[]Type, st *Stmt) error {
	if up.WithClause != nil {
		return pgerr.NotSupported("WITH queries are not supported")
	}
	if len(up.FromClause) > 0 { // dmljoin.go
		return s.compileJoinModify(up.Relation, up.FromClause, up.WhereClause, up.TargetList, up.ReturningList, false, params, st)
	}
	p, a, err := s.modifyCommon(up.Relation, up.WhereClause, params)
	if err != nil {
		return err
	}
	var dup error
	if p.set, dup, err = s.compileSetList(a.noAggs("UPDATE"), p.t, up.TargetList); err != nil {
		return err
	}
	if p.ret, err = s.compileReturning(up.ReturningList, p.t, p.src.alias, params); err != nil {
		return err
	}
	if dup != nil {
		return dup // found by PostgreSQL's rewriter, after parse analysis
	}
	if p.ret != nil {
		st.cols = p.ret.cols
	}
	st.rels = relationLocks(s.cat(), p.t, locks.RowExclusiveLock)
	st.Tag = "UPDATE"
	st.writes = true
	st.plan = p
	return nil
}

func (s *planner) compileDelete(del *pg.DeleteStmt, params *[]Type, st *Stmt) error {
	if del.WithClause != nil {
		return pgerr.NotSupported("WITH queries are not supported")
	}
	if len(del.UsingClause) > 0 { // dmljoin.go
		return s.compileJoinModify(del.Relation, del.UsingClause, del.WhereClause, nil, del.ReturningList, true, params, st)
	}
	p, _, err := s.modifyCommon(del.Relation, del.WhereClause, params)
	if err != nil {
		return err
	}
	p.delete = true
	if p.ret, err = s.compileReturning(del.ReturningList, p.t, p.src.alias, params); err != nil {
		return err
	}
	if p.ret != nil {
		st.cols = p.ret.cols
	}
	st.rels = relationLocks(s.cat(), p.t, locks.RowExclusiveLock)
	st.Tag = "DELETE"
	st.writes = true
	st.plan = p
	return nil
}

func (s *planner) modifyCommon(rv *pg.RangeVar, where *pg.Node, params *[]Type) (*modifyPlan, *analyzer, error) {
	t, err := s.resolveTable(rv)
	if err != nil {
		return nil, nil, err
	}
	alias := t.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	src := newTableSource(t, alias)
	a := newAnalyzer(&s.Backend, params)
	singleTable(a, src, alias)
	p := &modifyPlan{t: t, src: src, indexes: s.cat().tableIndexes(t)}
	if where != nil {
		w, err := a.expr(where)
		if err != nil {
			return nil, nil, err
		}
		if p.where, err = a.asBool(w, "WHERE", -1); err != nil {
			return nil, nil, err
		}
		src.useIndex(s.cat(), p.where)
	}
	switch {
	case t.Partitioned():
		p.parts = newPartitionedSource(t, alias, locks.RowExclusiveLock)
		p.parts.only = !rv.Inh
		p.parts.filter(s.cat(), p.where)
	case t.Parent != 0:
		p.part = &partUpdate{} // rows may not leave a partition named directly
	}
	return p, a, nil
}

type target struct {
	tid storage.TID
	row []Datum
}

func (x *Executor) modifyMatches(ec *evalCtx, p *modifyPlan, row []Datum) (bool, error) {
	if p.where == nil {
		return true, nil
	}
	v, err := p.where.eval(ec, row)
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
func (s *Executor) execModify(ec *evalCtx, p *modifyPlan, emit func([]Datum) error) (int64, error) {
	if p.parts != nil {
		return s.execModifyPartitioned(ec, p, emit)
	}
	var targets []target
	err := s.scanTableTIDs(ec, p.src, func(tid storage.TID, row []Datum) error {
		ok, err := s.modifyMatches(ec, p, row)
		if err != nil || !ok {
			return err
		}
		targets = append(targets, target{tid, append([]Datum(nil), row...)})
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(targets) == 0 {
		return 0, nil
	}
	if _, err := s.txn.AssignXid(); err != nil {
		return 0, err
	}
	rel := storage.RelID(p.t.RelFile)
	var n int64
	newRow := make([]Datum, len(p.t.Cols))
	for _, tg := range targets {
		tid, row := tg.tid, tg.row
		for {
			var out storage.UpdateOutcome
			moved := false
			if p.delete {
				out, err = s.store.Delete(ec.ctx, s.proc, &s.txn, rel, tid, s.rowWait(storage.WaitBlock, p.t))
			} else {
				for i := range newRow {
					if e, ok := p.set[i]; ok {
						v, err := e.eval(ec, row)
						if err != nil {
							return 0, err
						}
						newRow[i] = v
					} else {
						newRow[i] = row[i]
					}
				}
				if p.part != nil { // a partition: the row may have to move (partroute.go)
					if moved, out, err = s.partitionUpdate(ec, p, tid, row, newRow); err != nil {
						return 0, err
					}
				}
				if !moved {
					if err := checkNotNull(p.t, newRow); err != nil {
						return 0, err
					}
					if err := s.checkConstraints(ec, p.t, newRow); err != nil { // check.go
						return 0, err
					}
					s.rowBuf = appendRow(s.rowBuf[:0], p.t, newRow)
					out, err = s.store.Update(ec.ctx, s.proc, &s.txn, rel, tid, s.rowBuf, fillfactor(p.t),
						p.keysChanged(row, newRow), s.rowWait(storage.WaitBlock, p.t))
				}
			}
			if err != nil {
				return 0, err
			}
			switch out.Result {
			case txn.TMOk:
				n++
				if !p.delete && !moved {
					if err := s.insertIndexEntries(ec, p.t, p.indexes, newRow, out.NewTID); err != nil {
						return 0, err
					}
					if err := s.afterUpdateRow(p.t, p.set, row, out.NewTID, newRow); err != nil { // foreign keys (ri.go)
						return 0, err
					}
					err = s.emitReturning(ec, p.ret, newRow, out.NewTID, p.t, emit)
				} else {
					if p.delete {
						if err := s.afterDeleteRow(p.t, row); err != nil { // foreign keys (ri.go)
							return 0, err
						}
					}
					err = s.emitReturning(ec, p.ret, row, tid, p.t, emit)
				}
				if err != nil {
					return 0, err
				}
			case txn.TMBeingModified:
				if err := s.txn.WaitForOptions(ec.ctx, out.WaitXid, s.lockOptions(false, false)); err != nil {
					return 0, err
				}
				continue // try the same version again
			case txn.TMUpdated, txn.TMDeleted:
				movedAway := out.Result == txn.TMDeleted && out.NextTID == storage.MovedPartitions
				if s.txn.Isolation() != txn.ReadCommitted {
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
				next, nrow, ok, err := s.latestVersion(ec, p.t, out.NextTID)
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
func (s *Executor) latestVersion(ec *evalCtx, t *TableDef, tid storage.TID) (storage.TID, []Datum, bool, error) {
	rel := storage.RelID(t.RelFile)
	row := make([]Datum, len(t.Cols)+numSysCols)
	row[len(t.Cols)+sysColTableoid] = intDatum(int64(t.OID))
	txns := s.txns
	for hops := 0; hops < 1<<20; hops++ {
		var next storage.TID
		var derr error
		var gone, updated bool
		var wait txn.Xid
		found, err := s.store.FetchAny(s.proc, rel, tid, func(h *txn.TupleHeader, ctid storage.TID, data []byte) {
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
			derr = decodeRow(data, t, row)
			row[len(t.Cols)+sysColCtid] = tidDatum(tid)
		})
		if err != nil || derr != nil {
			return tid, nil, false, firstErr(err, derr)
		}
		switch {
		case !found || gone:
			return tid, nil, false, nil
		case wait != 0:
			if err := s.txn.WaitForOptions(ec.ctx, wait, s.lockOptions(false, false)); err != nil {
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

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
