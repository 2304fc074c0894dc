package expr

import (
	"lockd/sql/catalog"
)

// seqLogged gives the transaction an xid where PostgreSQL WAL-logs a
// sequence change (GetTopTransactionId in sequence.c): its commit then
// flushes the log. Unlogged sequences are not logged.
func (s *Backend) SeqLogged(def *catalog.SequenceDef) error {
	if def.Unlogged {
		return nil
	}
	_, err := s.Txn.AssignTopXid()
	return err
}
