package sql

import "lockd/locks"

// execIndexLocks are the index locks the executor of an INSERT or COPY
// FROM into a table with storage holds while the statement runs: every
// index of the table in RowExclusiveLock, taken before the first row
// (ExecOpenIndices) and given back at the end (ExecCloseIndices), so that
// after the statement only the table's lock remains — the planner opens
// no index for these statements. (A partitioned table's partitions and
// their indexes are locked by tuple routing, partroute.go.)
type execIndexLocks struct {
	held []uint32 // index OIDs locked by this execution
}

// open locks t's indexes for the execution.
func (x *Executor) openIndexLocks(ec *evalCtx, l *execIndexLocks, t *TableDef) error {
	l.held = l.held[:0]
	s := x
	for _, ix := range s.cat().tableIndexes(t) {
		if err := s.lockNow(ec, ix.OID, locks.RowExclusiveLock); err != nil {
			return err
		}
		l.held = append(l.held, ix.OID)
	}
	return nil
}

// close releases what open took.
func (x *Executor) closeIndexLocks(l *execIndexLocks) {
	for _, oid := range l.held {
		x.locks.Unlock(x.proc, locks.RelationTag(DatabaseOID, oid), locks.RowExclusiveLock, false)
	}
	l.held = l.held[:0]
}
