package sql

import (
	"strings"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
)

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
type partRouter struct {
	target uint32 // the table the statement writes: partitioned, or a partition

	leaves    map[uint32]*routeLeaf // partitions routed to in this execution
	stmtLocks []uint32              // index locks to release at the end of the execution
	key       []Datum
}

type routeLeaf struct {
	t       *TableDef
	indexes []*IndexDef
}

func newPartRouter(t *TableDef) *partRouter {
	return &partRouter{target: t.OID, leaves: map[uint32]*routeLeaf{}}
}

// begin starts an execution.
func (x *Executor) routeBegin(r *partRouter) {
	clear(r.leaves)
	r.stmtLocks = r.stmtLocks[:0]
}

// end releases the statement-level index locks.
func (x *Executor) routeEnd(r *partRouter) {
	for _, oid := range r.stmtLocks {
		x.locks.Unlock(x.proc, locks.RelationTag(DatabaseOID, oid), locks.RowExclusiveLock, false)
	}
	r.stmtLocks = r.stmtLocks[:0]
	clear(r.leaves)
}

// insert writes row into the target: routed to its leaf partition, or
// checked against the target's partition constraint.
func (x *Executor) routeInsert(ec *evalCtx, r *partRouter, row []Datum) error {
	_, _, err := x.routeInsertTID(ec, r, row)
	return err
}

// insertTID is insert that also reports where the row went: its TID and
// the leaf partition (for RETURNING).
func (x *Executor) routeInsertTID(ec *evalCtx, r *partRouter, row []Datum) (storage.TID, *TableDef, error) {
	s := x
	cat := s.cat()
	t := cat.Tables[r.target]
	if t == nil {
		return storage.TID{}, nil, pgerr.New(pgerr.UndefinedTable, "relation with OID %d does not exist", r.target)
	}
	if !t.Partitioned() {
		// ExecConstraints (NOT NULL, CHECK) comes before ExecPartitionCheck
		if err := checkNotNull(t, row); err != nil {
			return storage.TID{}, nil, err
		}
		if err := s.checkConstraints(ec, t, row); err != nil { // check.go
			return storage.TID{}, nil, err
		}
		if !fitsPartition(cat, t, row) {
			return storage.TID{}, nil, partitionViolation(t, row)
		}
		tid, err := s.insertRow(ec, t, cat.tableIndexes(t), row)
		return tid, t, err
	}
	lf, err := x.routeRow(ec, r, t, row)
	if err != nil {
		return storage.TID{}, nil, err
	}
	tid, err := s.insertRow(ec, lf.t, lf.indexes, row)
	return tid, lf.t, err
}

// route finds (and on first use locks) the leaf partition for row.
func (x *Executor) routeRow(ec *evalCtx, r *partRouter, t *TableDef, row []Datum) (*routeLeaf, error) {
	s := x
	cat := s.cat()
	if t.Parent != 0 && !fitsPartition(cat, t, row) {
		return nil, partitionViolation(t, row)
	}
	node := t
	for node.Partitioned() {
		d := cat.partDesc(node.OID)
		r.key = partitionKey(d, row, r.key)
		i := d.route(r.key)
		if i < 0 {
			return nil, noPartitionError(node, d, r.key)
		}
		oid := d.parts[i]
		if lf, ok := r.leaves[oid]; ok && lf.t != nil {
			return lf, nil
		}
		if _, ok := r.leaves[oid]; !ok {
			if err := s.lockNow(ec, oid, locks.RowExclusiveLock); err != nil {
				return nil, err
			}
			cat = s.cat() // the partition may have changed while its lock was waited for
			r.leaves[oid] = &routeLeaf{}
		}
		if node = cat.Tables[oid]; node == nil {
			return nil, pgerr.New(pgerr.UndefinedTable, "relation with OID %d does not exist", oid)
		}
	}
	lf := r.leaves[node.OID]
	lf.t, lf.indexes = node, cat.tableIndexes(node)
	for _, ix := range lf.indexes {
		if err := s.lockNow(ec, ix.OID, locks.RowExclusiveLock); err != nil {
			return nil, err
		}
		r.stmtLocks = append(r.stmtLocks, ix.OID)
	}
	return lf, nil
}

// fitsPartition reports whether row satisfies t's partition constraint:
// at every level from t up, the row routes to the partition on the path.
func fitsPartition(cat *catalogState, t *TableDef, row []Datum) bool {
	var buf [4]Datum
	for t.Parent != 0 {
		d := cat.partDesc(t.Parent)
		if d == nil {
			return true
		}
		if p := d.route(partitionKey(d, row, buf[:0])); p < 0 || d.parts[p] != t.OID {
			return false
		}
		if t = cat.Tables[t.Parent]; t == nil {
			return true
		}
	}
	return true
}

func partitionViolation(t *TableDef, row []Datum) error {
	return pgerr.New(pgerr.CheckViolation, "new row for relation \"%s\" violates partition constraint", t.Name).
		WithDetail("Failing row contains " + failingRow(t, row) + ".").OnTable(t.Name)
}

// noPartitionError is ExecFindPartition's error, with
// ExecBuildSlotPartitionKeyDescription's detail.
func noPartitionError(t *TableDef, d *partDesc, key []Datum) error {
	var names, vals []string
	for i, k := range d.key {
		names = append(names, quoteIdent(t.Cols[k].Name))
		if key[i].Null {
			vals = append(vals, "null")
		} else {
			vals = append(vals, clipValue(string(appendText(nil, d.types[i], key[i], nil))))
		}
	}
	return pgerr.New(pgerr.CheckViolation, "no partition of relation \"%s\" found for row", t.Name).
		WithDetail("Partition key of the failing row contains (" + strings.Join(names, ", ") + ") = (" + strings.Join(vals, ", ") + ").").
		OnTable(t.Name)
}

// clipValue shortens a value shown in an error detail to 64 bytes plus
// "..." at a character boundary, as PostgreSQL's row descriptions do.
func clipValue(v string) string {
	const maxField = 64
	if len(v) <= maxField {
		return v
	}
	n := maxField
	for n > 0 && v[n]&0xc0 == 0x80 {
		n--
	}
	return v[:n] + "..."
}

// --- UPDATE and DELETE of partitions

// partUpdate is what an UPDATE of partition t needs: a new row that no
// longer satisfies t's partition constraint moves through router to the
// partition it belongs in (PostgreSQL 11+ row movement) when the
// statement named a partitioned ancestor; router is nil when it named t
// itself, and such a row is an error.
type partUpdate struct {
	root   uint32      // the partitioned table the statement named; 0: the partition itself
	router *partRouter // made when a first row moves
}

// mover returns the router moved rows go through, or nil.
func (pu *partUpdate) mover() *partRouter {
	if pu.root == 0 {
		return nil
	}
	if pu.router == nil {
		pu.router = &partRouter{target: pu.root, leaves: map[uint32]*routeLeaf{}}
	}
	return pu.router
}

// finish ends an execution that may have moved rows.
func (x *Executor) finishPartUpdate(pu *partUpdate) {
	if pu.router != nil {
		x.routeEnd(pu.router)
	}
}

// partitionUpdate checks the new version newRow of the row at tid in p.t
// (old its values) and, if it must move, deletes it there (marking it
// moved) and routes the new row, queuing the foreign-key events of a
// moved row (fkpart.go). moved reports that the deletion was attempted;
// out is its outcome.
func (s *Executor) partitionUpdate(ec *evalCtx, p *modifyPlan, tid storage.TID, old, newRow []Datum) (moved bool, out storage.UpdateOutcome, err error) {
	cat := s.cat()
	if fitsPartition(cat, p.t, newRow) {
		return false, out, nil
	}
	router := p.part.mover()
	if router == nil {
		return false, out, partitionViolation(p.t, newRow)
	}
	rel := storage.RelID(p.t.RelFile)
	out, err = s.store.Delete(ec.ctx, s.proc, &s.txn, rel, tid, s.rowWait(storage.WaitBlock, p.t))
	if err != nil || out.Result != txn.TMOk {
		return true, out, err
	}
	if err := s.store.MarkMovedPartitions(s.proc, &s.txn, rel, tid); err != nil {
		return true, out, err
	}
	if err := s.afterMoveDelete(p.t, old); err != nil {
		return true, out, err
	}
	row := append([]Datum(nil), newRow...)
	if err := s.routeInsert(ec, router, row); err != nil {
		return true, out, err
	}
	return true, out, s.afterMoveUpdate(p.t, p.part.root, p.set, old, row)
}

// movedError is what a transaction gets that waited for a row another
// moved to a different partition (heapam_tuple_lock).
func movedError() error {
	return pgerr.New(pgerr.SerializationFailure, "tuple to be locked was already moved to another partition due to concurrent update")
}
