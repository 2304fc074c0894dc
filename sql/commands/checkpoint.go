package commands

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// CompileCheckpoint is CHECKPOINT: an immediate checkpoint, forced even if
// nothing changed, that the statement waits for (RequestCheckpoint with
// CHECKPOINT_IMMEDIATE | CHECKPOINT_FORCE | CHECKPOINT_WAIT). PostgreSQL
// reserves it to superusers (42501 "must be superuser to do CHECKPOINT");
// every lockd session runs as the bootstrap superuser. It may run inside
// a transaction block, as in PostgreSQL.
func (s *Utility) CompileCheckpoint(_ *pg.CheckPointStmt, st *plan.Stmt) error {
	st.Tag = "CHECKPOINT"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if err := s.Host.Checkpoint(); err != nil {
			return "", err
		}
		return "CHECKPOINT", nil
	}
	return nil
}
