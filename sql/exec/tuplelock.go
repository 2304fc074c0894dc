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

// rowWait is how this session's DML and row locks on table t wait for
// conflicting transactions: with its lock_timeout and deadlock_timeout,
// tuple locks tagged with t's OID.
func (s *Executor) rowWait(policy storage.WaitPolicy, t *catalog.TableDef) storage.RowWait {
	return storage.RowWait{Policy: policy, Lock: s.LockOptions(false, false), RelOID: t.OID}
}

// lockRow row-locks the version at tid of table t with strength mode for
// the current (sub)transaction (ExecLockRows over heapam_tuple_lock).
// Under READ COMMITTED, if a committed transaction replaced the version,
// the newest version is locked instead provided recheck — the statement's
// WHERE clause over the new values; nil accepts every row — still accepts
// it (EvalPlanQual). locked is false when the row is gone, no longer
// qualifies, or, with storage.WaitSkip (SKIP LOCKED), is held by another
// transaction; otherwise lockedTID and row are the version locked (row is
// nil if tid itself was locked: the caller has its values).
//
// Errors: 55P03 `could not obtain lock on row in relation "t"` with
// storage.WaitError (NOWAIT); 40001 `could not serialize access due to
// concurrent update` (or delete) under REPEATABLE READ; the lock manager's
// 40P01 and 55P03 (lock_timeout); cancellation.
func (s *Executor) LockRow(ec *expr.EvalCtx, t *catalog.TableDef, tid storage.TID, mode txn.TupleLockMode, policy storage.WaitPolicy, recheck func([]types.Datum) (bool, error)) (locked bool, lockedTID storage.TID, row []types.Datum, err error) {
	rel := storage.RelID(t.RelFile)
	for {
		out, err := s.Store.LockTuple(ec.Ctx, s.Proc, &s.Txn, rel, tid, mode, s.rowWait(policy, t))
		if err != nil {
			return false, tid, nil, err
		}
		switch out.Result {
		case txn.TMOk:
			return true, tid, row, nil
		case txn.TMWouldBlock:
			if policy == storage.WaitError {
				return false, tid, nil, pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on row in relation \"%s\"", t.Name)
			}
			return false, tid, nil, nil
		case txn.TMUpdated, txn.TMDeleted:
			// a row an UPDATE moved to another partition counts as updated
			// (its ctid is not its own), and cannot be followed
			moved := out.Result == txn.TMDeleted && out.NextTID == storage.MovedPartitions
			if s.Txn.Isolation() != txn.ReadCommitted {
				what := "update"
				if out.Result == txn.TMDeleted && !moved {
					what = "delete"
				}
				return false, tid, nil, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
			}
			if moved {
				return false, tid, nil, movedError()
			}
			if out.Result == txn.TMDeleted {
				return false, tid, nil, nil
			}
			next, nrow, ok, err := s.latestVersion(ec, t, out.NextTID)
			if err != nil || !ok {
				return false, tid, nil, err
			}
			if recheck != nil {
				if match, err := recheck(nrow); err != nil || !match {
					return false, tid, nil, err
				}
			}
			tid, row = next, nrow
		default: // TMSelfModified, TMInvisible: the row is not there for us
			return false, tid, nil, nil
		}
	}
}

// lock row-locks the rows behind one output row, given its level row.
// ok is false when a row is skipped (SKIP LOCKED) or gone, or its newest
// version no longer qualifies; changed says that level now holds newer
// versions, whose output must be computed again.
func (x *Executor) lockRows(ec *expr.EvalCtx, rl *plan.RowLocking, level []types.Datum) (ok, changed bool, err error) {
	s := x
	cat := s.Cat()
	for _, it := range rl.Items {
		ctid := level[it.Off+it.Ncols+plan.SysColCtid]
		toid := level[it.Off+it.Ncols+plan.SysColTableoid]
		if ctid.Null || toid.Null {
			continue // the nullable side of an outer join produced no row (refused at analysis)
		}
		t := cat.Tables[uint32(toid.I)]
		if t == nil {
			return false, false, nil
		}
		tid := storage.TID{Block: uint32(ctid.I >> 16), Offset: uint16(ctid.I)}
		recheck := func(nrow []types.Datum) (bool, error) {
			rl.Scratch = append(rl.Scratch[:0], level...)
			copy(rl.Scratch[it.Off:], nrow)
			return passes(ec, rl.Recheck, rl.Scratch)
		}
		locked, _, nrow, err := s.LockRow(ec, t, tid, it.Spec.Mode, it.Spec.Policy, recheck)
		if err != nil || !locked {
			return false, false, err
		}
		if nrow != nil {
			copy(level[it.Off:], nrow)
			changed = true
		}
	}
	return true, changed, nil
}
