package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/stats"
	"lockd/sql/types"
)

// SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT]: PostgreSQL's
// subtransactions (xact.c DefineSavepoint, ReleaseSavepoint,
// RollbackToSavepoint).
//
// Each open savepoint is a subtransaction level in every subsystem that
// keeps transaction state, and s.savepoints holds the marks that undo it:
//
//   - txn: BeginSub / CommitSub / AbortSub (subxids, commit log, xid locks);
//   - locks: Mark / KeepSince / ReleaseSince (the heavyweight locks the
//     subtransaction took: relation, tuple, advisory xact locks);
//   - guc: BeginSub / CommitSub / AbortSub (SET and SET LOCAL);
//   - the catalog: the length of s.catOps (DDL done since).
//
// ROLLBACK TO aborts the named level and every level above it, then starts
// a new subtransaction with the same name at the same level, so the
// savepoint stays usable. RELEASE commits the named level and those above
// it into the enclosing level. An error inside a savepoint aborts the
// innermost subtransaction at once, as PostgreSQL's AbortCurrentTransaction
// does — its locks go and its xid is marked aborted before the client
// sends ROLLBACK TO — and leaves the block failed until ROLLBACK TO (or
// ROLLBACK). Savepoint names may repeat; the innermost match is used.

// savepoint is one open SAVEPOINT.
type savepoint struct {
	name     string
	lockMark locks.LockMark // locks taken since belong to this level
	catMark  int            // len(s.catOps) when it began
	statMark stats.XactMark // the transaction's row counts when it began
	aborted  bool           // an error already rolled its subtransaction back
}

// analyzeSavepoint compiles SAVEPOINT, RELEASE and ROLLBACK TO.
func (s *Session) analyzeSavepoint(t *pg.TransactionStmt, st *plan.Stmt) (*plan.Stmt, error) {
	name := t.SavepointName
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		st.Tag = "SAVEPOINT"
		st.TxControl = false // 25P02 in a failed block
		st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
			if s.Tx != expr.TxBlock {
				return "", notInBlock("SAVEPOINT")
			}
			s.beginSavepoint(name)
			return "SAVEPOINT", nil
		}
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		st.Tag = "RELEASE"
		st.TxControl = false // 25P02 in a failed block
		st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
			if s.Tx != expr.TxBlock {
				return "", notInBlock("RELEASE SAVEPOINT")
			}
			i := s.findSavepoint(name)
			if i < 0 {
				return "", noSavepoint(name)
			}
			s.releaseSavepoint(i)
			return "RELEASE", nil
		}
	default: // TRANS_STMT_ROLLBACK_TO
		st.Tag = "ROLLBACK"
		st.TxControl = true // the way out of a failed block
		st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
			if s.Tx != expr.TxBlock && s.Tx != expr.TxFailed {
				return "", notInBlock("ROLLBACK TO SAVEPOINT")
			}
			i := s.findSavepoint(name)
			if i < 0 {
				return "", noSavepoint(name)
			}
			s.rollbackToSavepoint(i)
			s.Tx = expr.TxBlock
			return "ROLLBACK", nil
		}
	}
	return st, nil
}

func notInBlock(what string) error {
	return pgerr.New(pgerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks", what)
}

func noSavepoint(name string) error {
	return pgerr.New(pgerr.InvalidSavepointSpec, "savepoint \"%s\" does not exist", name)
}

// findSavepoint returns the index of the innermost savepoint called name,
// or -1.
func (s *Session) findSavepoint(name string) int {
	for i := len(s.savepoints) - 1; i >= 0; i-- {
		if s.savepoints[i].name == name {
			return i
		}
	}
	return -1
}

// beginSavepoint starts a subtransaction (DefineSavepoint +
// StartSubTransaction).
func (s *Session) beginSavepoint(name string) {
	s.Txn.BeginSub()
	s.Settings.BeginSub()
	s.savepoints = append(s.savepoints, savepoint{
		name:     name,
		lockMark: s.Locks.Mark(s.Proc),
		catMark:  len(s.CatOps),
		statMark: s.TabStats.Mark(),
	})
	s.SubCatMark = len(s.CatOps)
}

// releaseSavepoint commits savepoint i and every one above it into the
// enclosing level (ReleaseSavepoint + CommitSubTransaction): their
// changes, locks and settings now belong to it.
func (s *Session) releaseSavepoint(i int) {
	for j := len(s.savepoints) - 1; j >= i; j-- {
		s.Txn.CommitSub()
		s.Settings.CommitSub()
	}
	s.Locks.KeepSince(s.Proc, s.savepoints[i].lockMark)
	s.popSavepoints(i)
}

// rollbackToSavepoint aborts savepoint i and every one above it, then
// starts it again (RollbackToSavepoint + AbortSubTransaction +
// StartSubTransaction).
func (s *Session) rollbackToSavepoint(i int) {
	name := s.savepoints[i].name
	for j := len(s.savepoints) - 1; j >= i; j-- {
		if !s.savepoints[j].aborted {
			s.abortSubxact(&s.savepoints[j])
		}
	}
	s.popSavepoints(i)
	s.beginSavepoint(name)
}

// abortInnermostSavepoint is called when a statement fails inside a
// savepoint: the innermost subtransaction is rolled back now, and the
// savepoint waits for ROLLBACK TO.
func (s *Session) abortInnermostSavepoint() {
	if n := len(s.savepoints); n > 0 && !s.savepoints[n-1].aborted {
		s.abortSubxact(&s.savepoints[n-1])
	}
}

// abortSubxact rolls back the innermost open subtransaction, sp
// (AbortSubTransaction): the commit log first, then its locks (waking
// anyone waiting for its rows or relations), its settings and its DDL.
func (s *Session) abortSubxact(sp *savepoint) {
	for j := range s.savepoints {
		if &s.savepoints[j] == sp {
			s.abortSubPortals(j) // made since savepoint j began (their executors stop first)
		}
	}
	s.Txn.AbortSub()
	s.Locks.ReleaseSince(s.Proc, sp.lockMark)
	s.Settings.AbortSub()
	s.rollbackCatalog(sp.catMark)
	s.TabStats.RollbackTo(sp.statMark)
	s.RefreshFormat()
	sp.aborted = true
}

func (s *Session) popSavepoints(i int) {
	s.releaseSubPortals(i)
	clear(s.savepoints[i:])
	s.savepoints = s.savepoints[:i]
	s.SubCatMark = 0 // DDL of a released subtransaction belongs to its parent
	if i > 0 {
		s.SubCatMark = s.savepoints[i-1].catMark
	}
}

// rollbackCatalog undoes the DDL done since mark (catOps[mark:]): the
// files those operations made are removed, and the session's view of the
// catalog is rebuilt from the published catalog and the operations that
// remain, as commit would replay them.
func (s *Session) rollbackCatalog(mark int) {
	if mark >= len(s.CatOps) {
		return
	}
	s.RemoveNewFiles(s.CatOps[mark:])
	kept := s.CatOps[:mark:mark]
	s.CatOps, s.PendingCat = nil, nil
	for _, op := range kept {
		s.AddCatOp(op)
	}
}
