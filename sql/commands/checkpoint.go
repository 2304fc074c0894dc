package commands

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// CompileCheckpoint is CHECKPOINT: an immediate checkpoint, forced even if
// nothing changed, that the statement waits for (RequestCheckpoint with
// CHECKPOINT_IMMEDIATE | CHECKPOINT_FORCE | CHECKPOINT_WAIT). As in
// PostgreSQL 15 it is reserved to superusers (42501; lockd has no
// pg_checkpoint role to grant). It may run inside
// a transaction block, as in PostgreSQL.
func (s *Utility) CompileCheckpoint(_ *pg.CheckPointStmt, st *plan.Stmt) error {
	st.Tag = "CHECKPOINT"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if !s.Superuser() { // lockd has no pg_checkpoint membership
			return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser or have privileges of pg_checkpoint to do CHECKPOINT")
		}
		if err := s.Host.Checkpoint(); err != nil {
			return "", err
		}
		return "CHECKPOINT", nil
	}
	return nil
}
