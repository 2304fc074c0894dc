package sql

import (
	"lockd/sql/catalog"
	"lockd/sql/exec"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// The types a client of the SQL layer (the server) handles, named here so
// that it needs no package below this one.
type (
	// Stmt is an analysed statement, reusable across executions.
	Stmt = plan.Stmt
	// Column describes one result column.
	Column = types.Column
	// Datum is one value.
	Datum = types.Datum
	// CopySource feeds COPY FROM STDIN.
	CopySource = exec.CopySource
	// CopySink receives COPY TO STDOUT.
	CopySink = exec.CopySink
	// Host is what the SQL layer needs from the server around it.
	Host = expr.Host
)

// DatabaseOID is the OID of lockd's one database, which lock tags carry.
const DatabaseOID = catalog.DatabaseOID
