package commands

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

func (s *Utility) CompileLock(ls *pg.LockStmt, st *plan.Stmt) error {
	mode := locks.LockMode(ls.Mode)
	if !mode.Valid() {
		return pgerr.New(pgerr.SyntaxError, "invalid lock mode")
	}
	var rvs []*pg.RangeVar
	for _, r := range ls.Relations {
		rvs = append(rvs, r.GetRangeVar())
	}
	nowait := ls.Nowait
	st.Tag = "LOCK TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if s.Tx != expr.TxBlock {
			return "", pgerr.New(pgerr.NoActiveSQLTransaction, "LOCK TABLE can only be used in transaction blocks")
		}
		for _, rv := range rvs {
			t, err := s.ResolveTable(rv)
			if err != nil {
				return "", err
			}
			ok, err := s.Acquire(ec, locks.RelationTag(catalog.DatabaseOID, t.OID), mode, false, nowait)
			if err != nil {
				return "", err
			}
			if !ok {
				return "", pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on relation \"%s\"", t.Name)
			}
			for _, k := range s.Cat().LockTableDescendants(t, rv.Inh) { // partitions too, as PostgreSQL does
				ok, err := s.Acquire(ec, locks.RelationTag(catalog.DatabaseOID, k.OID), mode, false, nowait)
				if err != nil {
					return "", err
				}
				if !ok {
					return "", pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on relation \"%s\"", k.Name)
				}
			}
		}
		return "LOCK TABLE", nil
	}
	return nil
}

// lockInheritors locks every descendant of t in mode, in
// find_all_inheritors order, and returns them.
func (s *Utility) lockInheritors(ec *expr.EvalCtx, t *catalog.TableDef, mode locks.LockMode) ([]*catalog.TableDef, error) {
	kids := s.Cat().Inheritors(t)
	for _, k := range kids {
		if err := s.LockNow(ec, k.OID, mode); err != nil {
			return nil, err
		}
	}
	return kids, nil
}
