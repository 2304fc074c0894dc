package exec

import (
	"strings"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
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

// begin starts an execution.
func (x *Executor) routeBegin(r *plan.PartRouter) {
	clear(r.Leaves)
	r.StmtLocks = r.StmtLocks[:0]
}

// end releases the statement-level index locks.
func (x *Executor) routeEnd(r *plan.PartRouter) {
	for _, oid := range r.StmtLocks {
		x.Locks.Unlock(x.Proc, locks.RelationTag(catalog.DatabaseOID, oid), locks.RowExclusiveLock, false)
	}
	r.StmtLocks = r.StmtLocks[:0]
	clear(r.Leaves)
}

// insert writes row into the target: routed to its leaf partition, or
// checked against the target's partition constraint.
func (x *Executor) routeInsert(ec *expr.EvalCtx, r *plan.PartRouter, row []types.Datum) error {
	_, _, err := x.routeInsertTID(ec, r, row)
	return err
}

// insertTID is insert that also reports where the row went: its TID and
// the leaf partition (for RETURNING).
func (x *Executor) routeInsertTID(ec *expr.EvalCtx, r *plan.PartRouter, row []types.Datum) (storage.TID, *catalog.TableDef, error) {
	s := x
	cat := s.Cat()
	t := cat.Tables[r.Target]
	if t == nil {
		return storage.TID{}, nil, pgerr.New(pgerr.UndefinedTable, "relation with OID %d does not exist", r.Target)
	}
	if !t.Partitioned() {
		// ExecConstraints (NOT NULL, CHECK) comes before ExecPartitionCheck
		if err := plan.CheckNotNull(t, row); err != nil {
			return storage.TID{}, nil, err
		}
		if err := s.checkConstraints(ec, t, row); err != nil { // insert.go
			return storage.TID{}, nil, err
		}
		if !fitsPartition(cat, t, row) {
			return storage.TID{}, nil, partitionViolation(t, row)
		}
		tid, err := s.InsertRow(ec, t, cat.TableIndexes(t), row)
		return tid, t, err
	}
	lf, err := x.routeRow(ec, r, t, row)
	if err != nil {
		return storage.TID{}, nil, err
	}
	tid, err := s.InsertRow(ec, lf.T, lf.Indexes, row)
	return tid, lf.T, err
}

// route finds (and on first use locks) the leaf partition for row.
func (x *Executor) routeRow(ec *expr.EvalCtx, r *plan.PartRouter, t *catalog.TableDef, row []types.Datum) (*plan.RouteLeaf, error) {
	s := x
	cat := s.Cat()
	if t.Parent != 0 && !fitsPartition(cat, t, row) {
		return nil, partitionViolation(t, row)
	}
	node := t
	for node.Partitioned() {
		d := cat.PartDesc(node.OID)
		r.Key = catalog.PartitionKey(d, row, r.Key)
		i := d.Route(r.Key)
		if i < 0 {
			return nil, noPartitionError(node, d, r.Key)
		}
		oid := d.Parts[i]
		if lf, ok := r.Leaves[oid]; ok && lf.T != nil {
			return lf, nil
		}
		if _, ok := r.Leaves[oid]; !ok {
			if err := s.LockNow(ec, oid, locks.RowExclusiveLock); err != nil {
				return nil, err
			}
			cat = s.Cat() // the partition may have changed while its lock was waited for
			r.Leaves[oid] = &plan.RouteLeaf{}
		}
		if node = cat.Tables[oid]; node == nil {
			return nil, pgerr.New(pgerr.UndefinedTable, "relation with OID %d does not exist", oid)
		}
	}
	lf := r.Leaves[node.OID]
	lf.T, lf.Indexes = node, cat.TableIndexes(node)
	for _, ix := range lf.Indexes {
		if err := s.LockNow(ec, ix.OID, locks.RowExclusiveLock); err != nil {
			return nil, err
		}
		r.StmtLocks = append(r.StmtLocks, ix.OID)
	}
	return lf, nil
}

// fitsPartition reports whether row satisfies t's partition constraint:
// at every level from t up, the row routes to the partition on the path.
func fitsPartition(cat *catalog.CatalogState, t *catalog.TableDef, row []types.Datum) bool {
	var buf [4]types.Datum
	for t.Parent != 0 {
		d := cat.PartDesc(t.Parent)
		if d == nil {
			return true
		}
		if p := d.Route(catalog.PartitionKey(d, row, buf[:0])); p < 0 || d.Parts[p] != t.OID {
			return false
		}
		if t = cat.Tables[t.Parent]; t == nil {
			return true
		}
	}
	return true
}

func partitionViolation(t *catalog.TableDef, row []types.Datum) error {
	return pgerr.New(pgerr.CheckViolation, "new row for relation \"%s\" violates partition constraint", t.Name).
		WithDetail("Failing row contains " + plan.FailingRow(t, row) + ".").OnTable(t.Name)
}

// noPartitionError is ExecFindPartition's error, with
// ExecBuildSlotPartitionKeyDescription's detail.
func noPartitionError(t *catalog.TableDef, d *catalog.PartDesc, key []types.Datum) error {
	var names, vals []string
	for i, k := range d.Key {
		names = append(names, types.QuoteIdent(t.Cols[k].Name))
		if key[i].Null {
			vals = append(vals, "null")
		} else {
			vals = append(vals, catalog.ClipValue(string(types.AppendText(nil, d.Types[i], key[i], nil))))
		}
	}
	return pgerr.New(pgerr.CheckViolation, "no partition of relation \"%s\" found for row", t.Name).
		WithDetail("Partition key of the failing row contains (" + strings.Join(names, ", ") + ") = (" + strings.Join(vals, ", ") + ").").
		OnTable(t.Name)
}

// finish ends an execution that may have moved rows.
func (x *Executor) finishPartUpdate(pu *plan.PartUpdate) {
	if pu.Router != nil {
		x.routeEnd(pu.Router)
	}
}

// partitionUpdate checks the new version newRow of the row at tid in p.t
// (old its values) and, if it must move, deletes it there (marking it
// moved) and routes the new row, queuing the foreign-key events of a
// moved row (sql/commands/foreignkeypart.go). moved reports that the deletion was attempted;
// out is its outcome.
func (s *Executor) partitionUpdate(ec *expr.EvalCtx, p *plan.ModifyPlan, tid storage.TID, old, newRow []types.Datum) (moved bool, out storage.UpdateOutcome, err error) {
	cat := s.Cat()
	if fitsPartition(cat, p.T, newRow) {
		return false, out, nil
	}
	router := p.Part.Mover()
	if router == nil {
		return false, out, partitionViolation(p.T, newRow)
	}
	rel := storage.RelID(p.T.RelFile)
	out, err = s.Store.Delete(ec.Ctx, s.Proc, &s.Txn, rel, tid, s.rowWait(storage.WaitBlock, p.T))
	if err != nil || out.Result != txn.TMOk {
		return true, out, err
	}
	s.TabStats.Deleted(p.T.OID, 1)
	if err := s.Store.MarkMovedPartitions(s.Proc, &s.Txn, rel, tid); err != nil {
		return true, out, err
	}
	if err := s.afterMoveDelete(p.T, old); err != nil {
		return true, out, err
	}
	row := append([]types.Datum(nil), newRow...)
	if err := s.routeInsert(ec, router, row); err != nil {
		return true, out, err
	}
	return true, out, s.afterMoveUpdate(p.T, p.Part.Root, p.Set, old, row)
}

// movedError is what a transaction gets that waited for a row another
// moved to a different partition (heapam_tuple_lock).
func movedError() error {
	return pgerr.New(pgerr.SerializationFailure, "tuple to be locked was already moved to another partition due to concurrent update")
}
