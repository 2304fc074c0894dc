package exec

import (
	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
)

// open locks t's indexes for the execution.
func (x *Executor) openIndexLocks(ec *expr.EvalCtx, l *plan.ExecIndexLocks, t *catalog.TableDef) error {
	l.Held = l.Held[:0]
	s := x
	for _, ix := range s.Cat().TableIndexes(t) {
		if err := s.LockNow(ec, ix.OID, locks.RowExclusiveLock); err != nil {
			return err
		}
		l.Held = append(l.Held, ix.OID)
	}
	return nil
}

// close releases what open took.
func (x *Executor) closeIndexLocks(l *plan.ExecIndexLocks) {
	for _, oid := range l.Held {
		x.Locks.Unlock(x.Proc, locks.RelationTag(catalog.DatabaseOID, oid), locks.RowExclusiveLock, false)
	}
	l.Held = l.Held[:0]
}
