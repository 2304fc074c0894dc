package plan

// execIndexLocks are the index locks the executor of an INSERT or COPY
// FROM into a table with storage holds while the statement runs: every
// index of the table in RowExclusiveLock, taken before the first row
// (ExecOpenIndices) and given back at the end (ExecCloseIndices), so that
// after the statement only the table's lock remains — the planner opens
// no index for these statements. (A partitioned table's partitions and
// their indexes are locked by tuple routing, partroute.go.)
type ExecIndexLocks struct {
	Held []uint32 // index OIDs locked by this execution
}
