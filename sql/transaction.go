package sql

import (
	"context"
	"strconv"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/guc"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/txn"
)

// startTxnSettings gives a new transaction its isolation level and
// read-write mode from the defaults, as PostgreSQL's StartTransaction
// does, so SHOW transaction_isolation tells the truth.
func (s *Session) startTxnSettings() {
	for _, p := range [...][2]guc.Key{{gucTransactionIsolation, gucDefaultTransactionIsolation}, {gucTransactionReadOnly, gucDefaultTransactionReadOnly}} {
		if v := s.Settings.StringAt(p[1]); s.Settings.StringAt(p[0]) != v {
			_, _ = s.Settings.Set(guc.Table[p[0]].Name, v, true)
		}
	}
}

// TxStatus is the ReadyForQuery transaction indicator.
type TxStatus byte

const (
	TxIdle    TxStatus = 'I'
	TxInBlock TxStatus = 'T'
	TxFailed  TxStatus = 'E'
)

// TxStatus reports the ReadyForQuery indicator.
func (s *Session) TxStatus() TxStatus {
	switch s.Tx {
	case expr.TxBlock:
		return TxInBlock
	case expr.TxFailed:
		return TxFailed
	}
	return TxIdle
}

// failStatement records an error: a block becomes failed; an implicit
// transaction is rolled back at once.
func (s *Session) failStatement() {
	switch s.Tx {
	case expr.TxBlock:
		s.Tx = expr.TxFailed
		if len(s.savepoints) > 0 {
			s.abortInnermostSavepoint()
			return
		}
		// PostgreSQL's AbortTransaction runs at the error, not at the
		// ROLLBACK: the transaction's locks are released and its xid
		// aborted at once, so others stop waiting for a session that sits
		// in a failed block; the block itself lasts until ROLLBACK.
		s.failPortals()
		s.AbortCatalog()
		s.Txn.Abort()
		s.TabStats.End(s.Activity, false)
		s.Settings.AbortTxn()
		s.Locks.ReleaseTransactionLocks(s.Proc)
		s.RefreshFormat()
	case expr.TxImplicit:
		s.endTxn(false)
	}
}

// Sync ends an implicit transaction (the end of a simple Query message or
// an extended-protocol Sync), committing it. The error is that of a WITH
// HOLD cursor reading its rows before the commit: the transaction is
// rolled back instead.
func (s *Session) Sync() error {
	s.multiStmt = false
	if s.Tx == expr.TxImplicit {
		return s.commit()
	}
	return nil
}

// commit commits the open transaction, after its WITH HOLD cursors have
// read their rows (PreCommit_Portals); if that fails, it rolls back.
func (s *Session) commit() error {
	if len(s.streaming) > 0 {
		if err := s.holdPortals(context.Background()); err != nil {
			s.endTxn(false)
			return err
		}
	}
	s.endTxn(true)
	return nil
}

// Abort rolls back whatever transaction is open (connection loss, fatal
// errors).
func (s *Session) Abort() {
	if s.Tx != expr.TxNone {
		s.endTxn(false)
	}
}

// beginTxn starts a transaction: like PostgreSQL, every transaction holds
// ExclusiveLock on its own virtual xid (taken through the fast path).
func (s *Session) beginTxn(now time.Time, kind expr.TxState) {
	s.Tx = kind
	s.XactStart = now
	s.LocalXID++
	s.Locks.BeginVirtualXact(s.Proc, s.LocalXID)
	s.Txns.Begin(&s.Txn, s.Proc, expr.IsolationOf(s.Settings.StringAt(gucDefaultTransactionIsolation)))
	s.Settings.BeginTxn()
	s.startTxnSettings()
}

// endTxn commits or aborts: settings are kept or undone and every
// transaction-level lock is released.
func (s *Session) endTxn(commit bool) {
	s.endPortals(commit) // their executors stop while the transaction is still there
	if commit {
		// How the commit waits for its record: the session's settings at
		// commit time (SET LOCAL inside the transaction counts).
		sync, _ := txn.ParseSyncCommit(s.Settings.StringAt(gucSynchronousCommit))
		s.Txn.SetCommitOptions(txn.CommitOptions{Sync: sync,
			Delay:    time.Duration(s.Settings.IntAt(gucCommitDelay)) * time.Microsecond,
			Siblings: int(s.Settings.IntAt(gucCommitSiblings))})
		if err := s.CommitCatalog(); err != nil {
			s.Notice(pgerr.SeverityWarning, pgerr.InternalError, "could not write the catalog: "+err.Error())
		}
		if err := s.Txn.Commit(); err != nil {
			s.Notice(pgerr.SeverityWarning, pgerr.InternalError, "commit: "+err.Error())
		}
		s.TabStats.End(s.Activity, true)
		s.Settings.CommitTxn()
	} else {
		s.AbortCatalog()
		s.Txn.Abort()
		s.TabStats.End(s.Activity, false)
		s.Settings.AbortTxn()
	}
	s.Locks.ReleaseTransactionLocks(s.Proc)
	s.Tx = expr.TxNone
	s.popSavepoints(0)
	s.RefreshFormat()
}

// Fail records an error raised outside Execute (a parse or bind error):
// an open block becomes failed, an implicit transaction is rolled back.
func (s *Session) Fail() { s.failStatement() }

// InFailedBlock reports whether only COMMIT/ROLLBACK may run.
func (s *Session) InFailedBlock() bool { return s.Tx == expr.TxFailed }

func (s *Session) analyzeTransaction(t *pg.TransactionStmt, st *plan.Stmt) (*plan.Stmt, error) {
	st.TxControl = true
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		st.TxControl = false
		st.Tag = "BEGIN"
		if t.Kind == pg.TransactionStmtKind_TRANS_STMT_START {
			st.Tag = "START TRANSACTION"
		}
		var sets [][2]string
		for _, o := range t.Options {
			de := o.GetDefElem()
			if de == nil {
				continue
			}
			val := ""
			if c := de.Arg.GetAConst(); c != nil {
				switch v := c.Val.(type) {
				case *pg.A_Const_Sval:
					val = v.Sval.Sval
				case *pg.A_Const_Ival:
					val = strconv.Itoa(int(v.Ival.Ival))
				}
			}
			switch de.Defname {
			case "transaction_isolation":
				sets = append(sets, [2]string{"transaction_isolation", val})
			case "transaction_read_only":
				sets = append(sets, [2]string{"transaction_read_only", onOff(val == "1")})
			}
		}
		tag := st.Tag
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			switch s.Tx {
			case expr.TxBlock:
				s.Notice(pgerr.SeverityWarning, pgerr.ActiveSQLTransaction, "there is already a transaction in progress")
			default:
				s.Tx = expr.TxBlock
			}
			for _, kv := range sets {
				if err := s.Set(kv[0], kv[1], true); err != nil {
					return "", err
				}
			}
			return tag, nil
		}
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		st.Tag = "COMMIT"
		if t.Chain {
			return nil, pgerr.NotSupported("COMMIT AND CHAIN is not supported")
		}
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			switch s.Tx {
			case expr.TxBlock:
				if err := s.commit(); err != nil {
					return "", err
				}
				return "COMMIT", nil
			case expr.TxFailed:
				s.endTxn(false)
				return "ROLLBACK", nil
			default:
				s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "there is no transaction in progress")
				return "COMMIT", nil
			}
		}
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		st.Tag = "ROLLBACK"
		if t.Chain {
			return nil, pgerr.NotSupported("ROLLBACK AND CHAIN is not supported")
		}
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			switch s.Tx {
			case expr.TxBlock, expr.TxFailed:
				s.endTxn(false)
			default:
				s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "there is no transaction in progress")
			}
			return "ROLLBACK", nil
		}
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT, pg.TransactionStmtKind_TRANS_STMT_RELEASE, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return s.analyzeSavepoint(t, st)
	default:
		return nil, pgerr.NotSupported("prepared transactions (two-phase commit) are not supported")
	}
	return st, nil
}
