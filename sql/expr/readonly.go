package expr

import (
	"lockd/pgerr"
)

// checkReadWrite is SET transaction_read_only = off's rule: a read-only
// transaction can become read-write only before its first query, and not
// inside a savepoint.
func (s *Backend) checkReadWrite() error {
	if s.Tx == TxNone || !s.Gucs.Bool("transaction_read_only") {
		return nil
	}
	if s.Txn.NestLevel() > 1 { // IsSubTransaction
		return pgerr.New(pgerr.ActiveSQLTransaction, "cannot set transaction read-write mode inside a read-only transaction")
	}
	if s.Txn.SnapshotTaken() {
		return pgerr.New(pgerr.ActiveSQLTransaction, "transaction read-write mode must be set before any query")
	}
	return nil
}
