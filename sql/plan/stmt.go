package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// CopyInColumns reports, for a COPY FROM STDIN statement, how many
// columns the client must send (0 for any other statement).
func (st *Stmt) CopyInColumns() int {
	if st.FromStdin {
		return st.CopyCols
	}
	return 0
}

// CopyIn reports whether st is COPY FROM STDIN, and its format (0 text
// or csv, 1 binary).
func (st *Stmt) CopyIn() (bool, int16) { return st.FromStdin, st.CopyFormat }

// CopyOut reports whether st is COPY TO STDOUT.
func (st *Stmt) CopyOut() bool { return st.ToStdout }

// Stmt is an analysed statement, reusable across executions.
type Stmt struct {
	Text       string
	Tag        string // command tag prefix, e.g. "SELECT", "SET"
	Cols       []types.Column
	Params     []types.Type
	TxControl  bool           // allowed in a failed block (COMMIT, ROLLBACK)
	NoBlock    string         // non-empty: may not run inside a transaction block
	Cacheable  bool           // may be kept in the session's plan cache
	Rels       []expr.RelLock // relation locks taken at each execution
	Writes     bool           // advances the command counter afterwards
	CopyCols   int            // COPY: columns in each row
	FromStdin  bool           // COPY FROM STDIN
	ToStdout   bool           // COPY TO STDOUT
	CopyFormat int16          // COPY: 0 text or csv, 1 binary
	CatVer     uint64         // catalog version the plan was made against
	SetGen     uint64         // the session's settings (guc.Session.Changes) it was planned under
	RoName     string         // the command a read-only transaction refuses (sql/readonly.go)
	NoSnapshot bool           // transaction control and settings take no snapshot
	DDL        bool           // changes the catalog or a relation's storage (suspended portals read their rows first, sql/portal.go)
	BinaryRows bool           // FETCH from a BINARY cursor: rows go out in binary format
	Lazy       *pg.Node       // a statement of a multi-statement string, analysed by Resolve
	// plan is what the executor runs (sql/exec/executor.go): a query's or a DML
	// statement's plan; utility statements have run instead
	Plan any
	Run  func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error)
	// a named prepared statement's place in PostgreSQL's plan cache
	// (plancache.go), which decides the locks of its executions
	Named         bool
	CustomPlans   int        // custom plans made so far
	GenericPlans  int        // executions that ran a generic plan
	GenericCached bool       // a generic plan is cached and valid
	Choice        PlanChoice // auto mode's choice after five custom plans
}

// Columns describes the result rows; nil for statements without rows.
func (st *Stmt) Columns() []types.Column { return st.Cols }

// ParamTypes lists the parameter type OIDs (after inference).
func (st *Stmt) ParamTypes() []uint32 {
	out := make([]uint32, len(st.Params))
	for i, t := range st.Params {
		out[i] = t.OID
	}
	return out
}

// IsEmpty reports whether the statement is an empty query.
func (st *Stmt) IsEmpty() bool { return st.Run == nil && st.Plan == nil }

// AllowedInFailedBlock reports whether st may run in a failed block.
func (st *Stmt) AllowedInFailedBlock() bool { return st.TxControl }
