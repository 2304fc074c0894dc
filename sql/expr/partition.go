package expr

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"

	"lockd/sql/catalog"
)

// lockTable resolves rv, locks it and resolves it again (the definition
// may have changed while the lock was waited for).
func (s *Backend) LockTable(ec *EvalCtx, rv *pg.RangeVar, mode locks.LockMode) (*catalog.TableDef, error) {
	t, err := s.ResolveTable(rv)
	if err != nil {
		return nil, err
	}
	if err := s.LockNow(ec, t.OID, mode); err != nil {
		return nil, err
	}
	return s.ResolveTable(rv)
}
