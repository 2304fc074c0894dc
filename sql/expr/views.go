package expr

import (
	"lockd/sql/types"
)

// view is a system view computed at scan time.
type View struct {
	Name string
	Oid  uint32
	Cols []types.Column
	Rows func(ec *EvalCtx, emit func(row []types.Datum) error) error
}
