package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

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
