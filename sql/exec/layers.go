package exec

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// Executor runs one session's plans.
type Executor struct {
	plan.Planner

	ri         riState       // constraints compiled for this session, the statement's foreign-key events (ri.go)
	specToken  uint32        // the last speculative insertion token (upsert.go)
	uniqueTIDs []storage.TID // scratch of unique checks (unique.go)
	rowBuf     []byte
	CopySrc    CopySource
	CopySink   CopySink
	// spi analyses a statement for the executor's own queries (the
	// referential actions), as PostgreSQL's triggers use SPI
	Spi func(n *pg.Node, text string, params *[]types.Type) (*plan.Stmt, error)
}
