package exec

import (
	"fmt"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// --- looking up a key in a partitioned table

// routeKey finds the leaf partition of fk.parent that can hold the key in
// fk.keys (set by setKey), and the partitions on the way to it; ok is
// false when no partition holds it.
func (fk *fkRef) routeKey(cat *catalog.CatalogState) (path []*catalog.TableDef, ok bool) {
	if cap(fk.row) < len(fk.parent.Cols) {
		fk.row = make([]types.Datum, len(fk.parent.Cols))
	}
	row := fk.row[:len(fk.parent.Cols)]
	for i := range row {
		row[i] = types.NullDatum
	}
	for i, c := range fk.index.Cols {
		row[c] = fk.keys[i].D
	}
	path = fk.path[:0]
	defer func() { fk.path = path }()
	node := fk.parent
	for node.Partitioned() {
		d := cat.PartDesc(node.OID)
		if d == nil {
			return path, false
		}
		fk.pkey = catalog.PartitionKey(d, row, fk.pkey[:0])
		i := d.Route(fk.pkey)
		if i < 0 {
			return path, false
		}
		if node = cat.Tables[d.Parts[i]]; node == nil {
			return path, false
		}
		path = append(path, node)
	}
	return path, true
}

// leafSource is the lookup of the key in leaf partition leaf's index of
// the key's index tree (nil if it has none).
func (fk *fkRef) leafSource(cat *catalog.CatalogState, leaf *catalog.TableDef) *plan.TableSource {
	if ts, ok := fk.leaves[leaf.OID]; ok {
		return ts
	}
	if fk.leaves == nil {
		fk.leaves = map[uint32]*plan.TableSource{}
	}
	var ts *plan.TableSource
	if ix := cat.IndexOfPartition(fk.index, leaf); ix != nil {
		ts = plan.NewTableSource(leaf, leaf.Name)
		ts.Index = ix
		for _, k := range fk.keys {
			ts.KeyArgs = append(ts.KeyArgs, k)
			ts.KeyTyps = append(ts.KeyTyps, k.T)
		}
	}
	fk.leaves[leaf.OID] = ts
	return ts
}

// pkSource returns where the key in fk.keys is looked up: the referenced
// table, or the leaf partition it routes to (nil, nil when none can hold
// it).
func (fk *fkRef) pkSource(cat *catalog.CatalogState) (*catalog.TableDef, *plan.TableSource) {
	if !fk.parent.Partitioned() {
		return fk.parent, fk.pk
	}
	path, ok := fk.routeKey(cat)
	if !ok || len(path) == 0 {
		return nil, nil
	}
	leaf := path[len(path)-1]
	return leaf, fk.leafSource(cat, leaf)
}

// riLockPK takes the relation locks of an RI query q that reads the
// referenced table of fk for the key in fk.keys (keyOK false: a key that
// matches nothing). For an ordinary table those are riLockRelation's; for
// a partitioned one those of the plan PostgreSQL's plan cache gives the
// execution (see the file comment).
func (s *Executor) riLockPK(ec *expr.EvalCtx, fk *fkRef, q riQuery, keyOK bool) error {
	if !fk.parent.Partitioned() {
		return s.riLockRelation(ec, fk.parent, locks.RowShareLock, fk.index, s.riPlan(q, false) != expr.GenericReuse)
	}
	cat := s.Cat()
	var path []*catalog.TableDef
	if keyOK {
		path, _ = fk.routeKey(cat)
	}
	// a generic plan holds every partition, a custom plan those on the
	// key's path: PostgreSQL's costs favour the custom plan whenever the
	// generic one holds more
	kind := s.riPlan(q, fk.parts > len(path))
	mode := locks.RowShareLock
	if err := s.LockNow(ec, fk.parent.OID, mode); err != nil {
		return err
	}
	switch kind {
	case expr.CustomPlan:
		for _, t := range path {
			if err := s.LockNow(ec, t.OID, mode); err != nil {
				return err
			}
			if !t.Partitioned() {
				for _, ix := range cat.TableIndexes(t) {
					if err := s.LockNow(ec, ix.OID, mode); err != nil {
						return err
					}
				}
			}
		}
		return nil
	case expr.GenericBuild:
		for _, k := range cat.PartitionChildren(fk.parent) {
			if err := s.LockTree(ec, k, mode); err != nil {
				return err
			}
		}
		return nil
	}
	// the cached generic plan: its range table, then the index of the
	// partition run-time pruning leaves
	var lockAll func(t *catalog.TableDef) error
	lockAll = func(t *catalog.TableDef) error {
		for _, k := range cat.PartitionChildren(t) {
			if err := s.LockNow(ec, k.OID, mode); err != nil {
				return err
			}
			if err := lockAll(k); err != nil {
				return err
			}
		}
		return nil
	}
	if err := lockAll(fk.parent); err != nil {
		return err
	}
	if len(path) > 0 {
		if ts := fk.leafSource(cat, path[len(path)-1]); ts != nil {
			return s.LockNow(ec, ts.Index.OID, mode)
		}
	}
	return nil
}

// --- rows moving between partitions

// afterMoveDelete queues what deleting the row from leaf t does when an
// UPDATE moves it to another partition: the ON DELETE actions of foreign
// keys that reference t itself. Its clones' are skipped: the moved row's
// update event of the table the UPDATE named stands for them
// (AfterTriggerSaveEvent).
func (s *Executor) afterMoveDelete(t *catalog.TableDef, old []types.Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.in {
		if !fk.con.IsClone() && !anyNull(old, fk.con.RefCols) {
			s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riPKDelete, old: pick(old, fk.con.RefCols)})
		}
	}
	return nil
}

// afterMoveUpdate queues the ON UPDATE events of a row that an UPDATE of
// root moved out of leaf t, with the foreign keys referencing root
// (ExecCrossPartitionUpdateForeignKey). A foreign key that references a
// partitioned table between t and root directly cannot be enforced that
// way: 0A000, as in PostgreSQL.
func (s *Executor) afterMoveUpdate(t *catalog.TableDef, root uint32, set map[int]expr.Expr, old, new []types.Datum) error {
	cat := s.Cat()
	rt := cat.Tables[root]
	if rt == nil {
		return nil
	}
	for a := cat.Tables[t.Parent]; a != nil && a.OID != root; a = cat.Tables[a.Parent] {
		for _, con := range cat.ReferencingKeys(a.OID) {
			if !con.IsClone() {
				return pgerr.NotSupported("cannot move tuple across partitions when a non-root ancestor of the source partition is directly referenced in a foreign key").
					WithDetail(fmt.Sprintf("A foreign key points to ancestor \"%s\" but not the root ancestor \"%s\".", a.Name, rt.Name)).
					WithHint(fmt.Sprintf("Consider defining the foreign key on table \"%s\".", rt.Name))
			}
		}
	}
	rc, err := s.relConstraints(rt)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.in {
		if !touches(set, fk.con.RefCols) || anyNull(old, fk.con.RefCols) || keysEqual(fk.pkTypes, old, new, fk.con.RefCols) {
			continue
		}
		s.ri.queue = append(s.ri.queue, riEvent{fk: fk, kind: riPKUpdate, old: pick(old, fk.con.RefCols), new: pick(new, fk.con.RefCols)})
	}
	return nil
}
