package expr

import (
	"lockd/locks"

	"lockd/sql/catalog"
)

// lockTree locks t and, depth first in bound order, its partitions, and
// every index of each table with storage, in mode: what the planner locks
// for a query that reads all of t.
func (s *Backend) LockTree(ec *EvalCtx, t *catalog.TableDef, mode locks.LockMode) error {
	if err := s.LockNow(ec, t.OID, mode); err != nil {
		return err
	}
	if !t.Partitioned() {
		for _, ix := range s.Cat().TableIndexes(t) {
			if err := s.LockNow(ec, ix.OID, mode); err != nil {
				return err
			}
		}
		return nil
	}
	for _, k := range s.Cat().PartitionChildren(t) {
		if err := s.LockTree(ec, k, mode); err != nil {
			return err
		}
	}
	return nil
}
