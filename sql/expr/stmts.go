package expr

import (
	"strings"

	"lockd/guc"
	"lockd/pgerr"
	"lockd/txn"
)

func (s *Backend) Set(name, value string, local bool) error {
	if strings.EqualFold(name, "transaction_read_only") {
		if d, ok := guc.Lookup(name); ok {
			if v, err := guc.ParseValue(d, value); err == nil && !v.Bool {
				if err := s.checkReadWrite(); err != nil {
					return err
				}
			}
		}
	}
	if strings.EqualFold(name, "transaction_isolation") && s.Tx != TxNone {
		// PostgreSQL: the level is fixed by the first query of a transaction.
		d, _, err := s.Gucs.Show(name)
		if err == nil && d != value {
			if err := s.Txn.SetIsolation(IsolationOf(value)); err != nil {
				return pgerr.New(pgerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
			}
		}
	}
	_, err := s.Gucs.Set(name, value, local)
	if err == nil && strings.EqualFold(name, "timezone") {
		s.RefreshFormat()
	}
	return err
}

// isolationOf maps a transaction_isolation value to the level lockd runs:
// SERIALIZABLE runs as REPEATABLE READ (documented), READ UNCOMMITTED as
// READ COMMITTED (as in PostgreSQL).
func IsolationOf(v string) txn.Isolation {
	switch strings.ToLower(v) {
	case "repeatable read", "serializable":
		return txn.RepeatableRead
	}
	return txn.ReadCommitted
}

func (s *Backend) SetDefault(name string, local bool) error {
	_, err := s.Gucs.SetDefault(name, local)
	if err == nil && strings.EqualFold(name, "timezone") {
		s.RefreshFormat()
	}
	return err
}
