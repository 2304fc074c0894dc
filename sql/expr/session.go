package expr

import (
	"lockd/pgerr"

	"lockd/sql/types"
)

// Host is what the SQL layer needs from the server around it.
type Host interface {
	CancelBackend(pid int32) bool
	TerminateBackend(pid int32) bool
	ReloadConfig() bool
}

type TxState uint8

const (
	TxNone     TxState = iota // no transaction
	TxImplicit                // an implicit transaction (statement or query string)
	TxBlock                   // BEGIN ...
	TxFailed                  // a block that saw an error
)

func (s *Backend) SignalBackend(pid int32, terminate bool) (types.Datum, error) {
	var ok bool
	if terminate {
		ok = s.Host.TerminateBackend(pid)
	} else {
		ok = s.Host.CancelBackend(pid)
	}
	if !ok {
		s.Notice(pgerr.SeverityWarning, pgerr.Warning, "PID "+types.Itoa(int64(pid))+" is not a PostgreSQL backend process")
	}
	return types.BoolDatum(ok), nil
}
