package plan

import (
	"lockd/sql/catalog"
	"lockd/sql/types"
)

// execIndexLocks are the index locks the executor of an INSERT or COPY
// FROM into a table with storage holds while the statement runs: every
// index of the table in RowExclusiveLock, taken before the first row
// (ExecOpenIndices) and given back at the end (ExecCloseIndices), so that
// after the statement only the table's lock remains — the planner opens
// no index for these statements. (A partitioned table's partitions and
// their indexes are locked by tuple routing, sql/exec/routing.go.)
type ExecIndexLocks struct {
	Held []uint32 // index OIDs locked by this execution
}

// Tuple routing: INSERT (VALUES or SELECT), COPY FROM and the row
// movement of an UPDATE send each row of a partitioned table to the leaf
// partition its key belongs in, level by level (ExecFindPartition). As
// PostgreSQL's ExecInitPartitionInfo does, a partition is locked
// RowExclusiveLock the first time a statement routes a row to it (and
// kept to the end of the transaction); its indexes are locked
// RowExclusiveLock while the statement inserts into them and released
// when it ends, as ExecOpenIndices and ExecCloseIndices do.
//
// A row written to a partition directly must satisfy the partition
// constraint of that partition and all its ancestors (23514 "new row for
// relation ... violates partition constraint").

// partRouter routes the rows of one statement. It belongs to a plan;
// begin and end bracket each execution.
type PartRouter struct {
	Target uint32 // the table the statement writes: partitioned, or a partition

	Leaves    map[uint32]*RouteLeaf // partitions routed to in this execution
	StmtLocks []uint32              // index locks to release at the end of the execution
	Key       []types.Datum
}

type RouteLeaf struct {
	T       *catalog.TableDef
	Indexes []*catalog.IndexDef
}

func NewPartRouter(t *catalog.TableDef) *PartRouter {
	return &PartRouter{Target: t.OID, Leaves: map[uint32]*RouteLeaf{}}
}

// --- UPDATE and DELETE of partitions

// partUpdate is what an UPDATE of partition t needs: a new row that no
// longer satisfies t's partition constraint moves through router to the
// partition it belongs in (PostgreSQL 11+ row movement) when the
// statement named a partitioned ancestor; router is nil when it named t
// itself, and such a row is an error.
type PartUpdate struct {
	Root   uint32      // the partitioned table the statement named; 0: the partition itself
	Router *PartRouter // made when a first row moves
}

// mover returns the router moved rows go through, or nil.
func (pu *PartUpdate) Mover() *PartRouter {
	if pu.Root == 0 {
		return nil
	}
	if pu.Router == nil {
		pu.Router = &PartRouter{Target: pu.Root, Leaves: map[uint32]*RouteLeaf{}}
	}
	return pu.Router
}
