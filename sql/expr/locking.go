package expr

import (
	"context"
	"errors"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/sql/catalog"
)

// lockNow takes a relation lock during execution.
func (s *Backend) LockNow(ec *EvalCtx, oid uint32, mode locks.LockMode) error {
	return s.Locks.Lock(ec.Ctx, s.Proc, locks.RelationTag(catalog.DatabaseOID, oid), mode, s.LockOptions(false, false))
}

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

// lockTimeout is the session's lock_timeout.
func (s *Backend) lockTimeout() time.Duration {
	return time.Duration(s.Settings.IntAt(gucLockTimeout)) * time.Millisecond
}

// lockOptions are the session's heavyweight-lock wait options: its
// lock_timeout, deadlock_timeout and log_lock_waits (all per session, as
// in PostgreSQL).
func (s *Backend) LockOptions(session, nowait bool) locks.LockOptions {
	return locks.LockOptions{
		NoWait: nowait, Session: session, LockTimeout: s.lockTimeout(),
		DeadlockTimeout: time.Duration(s.Settings.IntAt(gucDeadlockTimeout)) * time.Millisecond,
		LogLockWaits:    s.Settings.BoolAt(gucLogLockWaits), LogLockWaitsSet: true,
	}
}

// acquire takes a heavyweight lock for this session, waiting as
// PostgreSQL does (cancel, statement_timeout, lock_timeout, deadlock
// detection). With nowait it reports false instead of waiting.
func (s *Backend) Acquire(ec *EvalCtx, tag locks.LockTag, mode locks.LockMode, session, nowait bool) (bool, error) {
	err := s.Locks.Lock(ec.Ctx, s.Proc, tag, mode, s.LockOptions(session, nowait))
	if errors.Is(err, locks.ErrLockNotAvailable) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

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
