package sql

import (
	"bytes"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

// Row locks for the SQL layer: the strength of an UPDATE, how DML waits for
// row lockers, and lockRow — what SELECT ... FOR UPDATE | FOR NO KEY UPDATE
// | FOR SHARE | FOR KEY SHARE [NOWAIT | SKIP LOCKED] and foreign-key checks
// (FOR KEY SHARE on the referenced row) call for each row they lock, as
// PostgreSQL's ExecLockRows calls table_tuple_lock. See storage/rowlock.go
// for the locking itself.

// keysChanged reports whether an UPDATE from old to new changes a column
// of a unique index of the table — PostgreSQL's key columns
// (INDEX_ATTR_BITMAP_KEY), which decide between FOR NO KEY UPDATE and FOR
// UPDATE strength, and so whether FOR KEY SHARE lockers (foreign-key
// checks) make the update wait.
func (p *modifyPlan) keysChanged(old, new []Datum) bool {
	var a, b []byte
	for _, ix := range p.indexes {
		if !ix.Unique {
			continue
		}
		for _, c := range ix.Cols {
			if _, set := p.set[c]; !set {
				continue
			}
			if old[c].Null != new[c].Null {
				return true
			}
			if old[c].Null {
				continue
			}
			typ := []Type{p.t.Cols[c].Type()}
			a = appendKey(a[:0], typ, old[c:c+1])
			b = appendKey(b[:0], typ, new[c:c+1])
			if !bytes.Equal(a, b) {
				return true
			}
		}
	}
	return false
}

// rowWait is how this session's DML and row locks wait for conflicting
// transactions: with its lock_timeout and deadlock_timeout.
func (s *Session) rowWait(policy storage.WaitPolicy) storage.RowWait {
	return storage.RowWait{Policy: policy, Lock: s.lockOptions(false, false)}
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
func (s *Session) lockRow(ec *evalCtx, t *TableDef, tid storage.TID, mode txn.TupleLockMode, policy storage.WaitPolicy, recheck func([]Datum) (bool, error)) (locked bool, lockedTID storage.TID, row []Datum, err error) {
	rel := storage.RelID(t.RelFile)
	for {
		out, err := s.eng.store.LockTuple(ec.ctx, s.proc, &s.txn, rel, tid, mode, s.rowWait(policy))
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
			if s.txn.Isolation() != txn.ReadCommitted {
				what := "update"
				if out.Result == txn.TMDeleted {
					what = "delete"
				}
				return false, tid, nil, pgerr.New(pgerr.SerializationFailure, "could not serialize access due to concurrent %s", what)
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

// rowLocking is a query's FOR UPDATE / FOR SHARE clause.
type rowLocking struct{}

// lockTarget is one row to lock: a table and a tuple.
type lockTarget struct {
	table uint32
	tid   int64
}

func (rl *rowLocking) targets([]Datum) []lockTarget { return nil }

func (rl *rowLocking) lock(*evalCtx, []lockTarget) (bool, error) { return true, nil }

func (a *analyzer) rowLockClause(sel *pg.SelectStmt, p *selectPlan, fb *fromBuilder) error {
	return pgerr.NotSupported("SELECT FOR UPDATE/SHARE is not supported")
}
