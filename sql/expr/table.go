package expr

import (
	"context"

	"lockd/locks"
	"lockd/pgerr"

	"lockd/sql/catalog"
)

// relLock is a relation lock a statement takes at every execution, as
// PostgreSQL's parser and AcquireExecutorLocks do: the table and each of
// its indexes, in the given mode.
type RelLock struct {
	Oid  uint32
	Mode locks.LockMode
	// planOnly: the planner opens this relation (an index of a table the
	// plan reads without it) but a cached generic plan does not lock it
	// again (AcquireExecutorLocks locks the range table; the executor
	// opens only the indexes it scans).
	PlanOnly bool
}

// lockRelations takes the statement's relation locks.
func (s *Backend) LockRelations(ctx context.Context, rels []RelLock, generic bool) error {
	for _, r := range rels {
		if generic && r.PlanOnly {
			continue
		}
		err := s.Locks.Lock(ctx, s.Proc, locks.RelationTag(catalog.DatabaseOID, r.Oid), r.Mode, s.LockOptions(false, false))
		if err != nil {
			return err
		}
	}
	return nil
}

func TableNotFound(name string, loc int32) error {
	return PosErr(pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name), loc)
}
