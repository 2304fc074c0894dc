package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/storage"
)

// The per-session state of each layer embeds the layer below, so a
// layer's code reaches what lies beneath it and nothing above.

// planner is the analyser and planner of one session.
type planner struct {
	Backend
}

// Executor runs one session's plans.
type Executor struct {
	planner

	ri         riState       // constraints compiled for this session, the statement's foreign-key events (ri.go)
	specToken  uint32        // the last speculative insertion token (upsert.go)
	uniqueTIDs []storage.TID // scratch of unique checks (unique.go)
	rowBuf     []byte
	copySrc    CopySource
	copySink   CopySink
	// spi analyses a statement for the executor's own queries (the
	// referential actions), as PostgreSQL's triggers use SPI
	spi func(n *pg.Node, text string, params *[]Type) (*Stmt, error)
}

// utility runs one session's utility statements (DDL, LOCK, VACUUM, ...).
type utility struct {
	Executor
}
