package sql

import (
	"fmt"
	"slices"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
)

// Foreign keys that reference a partitioned table, as PostgreSQL 15 has
// them (tablecmds.c addFkRecurseReferenced, CloneFkReferenced,
// ATDetachCheckNoForeignKeyRefs; ri_triggers.c; nodeModifyTable.c
// ExecCrossPartitionUpdateForeignKey).
//
// Catalog. The foreign key itself references the partitioned table and
// its partitioned unique index. For every partition of that table, depth
// first in bound order, a clone is made: a constraint of the same
// referencing table, named by ChooseConstraintName (t_cols_fkey1, ...),
// referencing the partition and its index of the key's index tree, with
// conparentid the clone for the partition's parent (or the key). A
// partition made or attached later gets clones of every foreign key
// referencing its new parent; a partition detached loses its clones. psql
// shows only the key (conparentid = 0): "Referenced by" of a partition
// lists it through pg_partition_ancestors.
//
// Checks. A referencing row is looked up as PostgreSQL's RI query
// `SELECT 1 FROM p x WHERE key = $1 FOR KEY SHARE OF x` finds it: the key
// is routed down the partition tree to the one partition that can hold it
// (the unique index contains every partition key column), looked up in
// that partition's index and the row locked FOR KEY SHARE. The relation
// locks are that query's plan's (riLockPK): a custom plan locks the
// partitioned table, the partitions on the key's path and every index of
// the leaf (plan-time pruning); the generic plan, planned at the sixth
// execution, every partition and all their indexes; and since its cost
// counts every partition's scan, PostgreSQL goes back to custom plans
// after it. With plan_cache_mode = force_generic_plan the generic plan is
// reused: every partition (AcquireExecutorLocks) and the one index the
// executor scans after run-time pruning.
//
// Actions. Deleting a row of a partition, or changing its key there, fires
// the clones for that partition: the errors name the partition and the
// clone (`update or delete on table "p1" violates foreign key constraint
// "c_pid_fkey1" on table "c"`). An UPDATE that moves a row to another
// partition fires, instead of the clones' ON DELETE actions in the old
// partition, the ON UPDATE actions of the foreign keys referencing the
// table the UPDATE named (PostgreSQL 15), and refuses (0A000) when a
// foreign key references a partitioned table in between.
//
// DDL. DETACH PARTITION of a partition that referencing rows still need
// fails with 23503 `removing partition "p1" violates foreign key
// constraint "c_pid_fkey1"`; DROP TABLE of a referenced partition depends
// on the foreign key (2BP01 naming it; CASCADE drops the whole foreign
// key); TRUNCATE of a referenced partition is refused unless the
// referencing table goes with it.

// --- catalog

// indexOfPartition returns the index of partition t that belongs to the
// tree of the partitioned index pix, or nil.
func (c *catalogState) indexOfPartition(pix *IndexDef, t *TableDef) *IndexDef {
	for _, ix := range c.tableIndexes(t) {
		for p := ix.Parent; p != 0; {
			if p == pix.OID {
				return ix
			}
			up := c.Indexes[p]
			if up == nil {
				break
			}
			p = up.Parent
		}
	}
	return nil
}

// rootConstraint follows a clone's parents up to its foreign key.
func (c *catalogState) rootConstraint(con *ConstraintDef) *ConstraintDef {
	for con.isClone() {
		p := c.Constraints[con.Parent]
		if p == nil {
			break
		}
		con = p
	}
	return con
}

// constraintClones lists con's clones and theirs, depth first in OID
// order.
func (c *catalogState) constraintClones(con *ConstraintDef) []*ConstraintDef {
	var kids []*ConstraintDef
	for _, k := range c.tableConstraintDefs(con.Table) {
		if k.Parent == con.OID {
			kids = append(kids, k)
		}
	}
	var out []*ConstraintDef
	for _, k := range kids {
		out = append(out, k)
		out = append(out, c.constraintClones(k)...)
	}
	return out
}

// addReferencedClones gives foreign key con, when it references a
// partitioned table, a clone for each partition (addFkRecurseReferenced).
func (s *utility) addReferencedClones(ec *evalCtx, con *ConstraintDef) error {
	rt := s.cat().Tables[con.RefTable]
	if rt == nil || !rt.Partitioned() {
		return nil
	}
	for _, part := range s.cat().partitionChildren(rt) {
		if err := s.addReferencedClone(ec, con, part); err != nil {
			return err
		}
	}
	return nil
}

// addReferencedClone makes parent's clone for part, a partition of the
// table parent references, locked ShareRowExclusiveLock (its RI triggers
// are made), then the clones for part's own partitions.
func (s *utility) addReferencedClone(ec *evalCtx, parent *ConstraintDef, part *TableDef) error {
	if err := s.lockNow(ec, part.OID, locks.ShareRowExclusiveLock); err != nil {
		return err
	}
	cat := s.cat()
	t, pix := cat.Tables[parent.Table], cat.Indexes[parent.RefIndex]
	if part = cat.Tables[part.OID]; t == nil || pix == nil || part == nil {
		return pgerr.New(pgerr.InternalError, "foreign key constraint \"%s\" is broken", parent.Name)
	}
	ix := cat.indexOfPartition(pix, part)
	if ix == nil {
		return pgerr.New(pgerr.InternalError, "partition \"%s\" has no index of \"%s\"", part.Name, pix.Name)
	}
	clone := *parent
	clone.OID = s.catalog.allocOID()
	clone.Parent, clone.RefTable, clone.RefIndex = parent.OID, part.OID, ix.OID
	// the key's name is taken on the referencing table, so PostgreSQL
	// always chooses one
	clone.Name = cat.chooseConstraintName(t.Name, nameAddition(columnNames(t, parent.Cols)), "fkey", nil)
	s.addCatOp(&catOp{kind: "addcon", con: &clone})
	if !part.Partitioned() {
		return nil
	}
	for _, k := range s.cat().partitionChildren(part) {
		if err := s.addReferencedClone(ec, &clone, k); err != nil {
			return err
		}
	}
	return nil
}

func columnNames(t *TableDef, cols []int) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = t.Cols[c].Name
	}
	return out
}

// cloneReferencedKeys gives part, a new partition of parent (CREATE TABLE
// ... PARTITION OF, ATTACH PARTITION), clones of the foreign keys that
// reference parent (CloneFkReferenced): each referencing table is locked
// ShareRowExclusiveLock and AccessShareLock. A self-referencing key is
// cloned too, as PostgreSQL 15.18 does.
func (s *utility) cloneReferencedKeys(ec *evalCtx, parent, part *TableDef) error {
	for _, con := range s.cat().referencingKeys(parent.OID) {
		for _, mode := range []locks.LockMode{locks.ShareRowExclusiveLock, locks.AccessShareLock} {
			if err := s.lockNow(ec, con.Table, mode); err != nil {
				return err
			}
		}
		if err := s.addReferencedClone(ec, con, part); err != nil {
			return err
		}
	}
	return nil
}

// detachReferencedKeys is DETACH PARTITION's part for the foreign keys
// referencing part through its clones: no referencing row may need a row
// of part (ATDetachCheckNoForeignKeyRefs, each referencing table locked
// ShareLock), then the clones for part and its partitions are dropped.
// PostgreSQL builds part's partition constraint for the check, under
// AccessShareLock on the parent.
func (s *utility) detachReferencedKeys(ec *evalCtx, parent, part *TableDef) error {
	var clones []*ConstraintDef
	for _, con := range s.cat().referencingKeys(part.OID) {
		if con.isClone() {
			clones = append(clones, con)
		}
	}
	if len(clones) == 0 {
		return nil
	}
	if err := s.lockNow(ec, parent.OID, locks.AccessShareLock); err != nil {
		return err
	}
	for _, con := range clones {
		if err := s.lockNow(ec, con.Table, locks.ShareLock); err != nil {
			return err
		}
		if err := s.partitionRemoveCheck(ec, con, part); err != nil {
			return err
		}
	}
	for _, con := range clones {
		if err := s.dropForeignKey(ec, con); err != nil {
			return err
		}
	}
	return nil
}

// partitionRemoveCheck is RI_PartitionRemove_Check: the first row of the
// referencing table whose key part holds refuses the detach. The locks are
// its query's (a join of the referencing table with part): AccessShareLock
// on both, their partitions and the leaves' indexes.
func (s *utility) partitionRemoveCheck(ec *evalCtx, con *ConstraintDef, part *TableDef) error {
	fk, err := s.newFKRef(con)
	if err != nil {
		return err
	}
	for _, t := range []*TableDef{part, fk.child} {
		if err := s.lockTree(ec, t, locks.AccessShareLock); err != nil {
			return err
		}
	}
	vals := make([]Datum, len(con.Cols))
	for _, leaf := range s.leafTables(fk.child) {
		var bad error
		err := s.scanTableTIDs(ec, newTableSource(leaf, leaf.Name), func(_ storage.TID, row []Datum) error {
			for i, c := range con.Cols {
				if row[c].Null {
					return nil
				}
				vals[i] = row[c]
			}
			found, err := s.pkVisible(ec, fk, fk.setKey(ec, vals, fk.fkTypes))
			if err != nil || !found {
				return err
			}
			bad = pgerr.New(pgerr.ForeignKeyViolation, "removing partition \"%s\" violates foreign key constraint \"%s\"", part.Name, con.Name).
				WithDetail("Key ("+keyNames(fk.child, con.Cols)+")=("+keyValues(fk.fkTypes, vals)+") is still referenced from table \""+fk.child.Name+"\".").
				OnConstraint(fk.child.Name, con.Name)
			return errStopScan
		})
		if bad != nil {
			return bad
		}
		if err != nil && err != errStopScan {
			return err
		}
	}
	return nil
}

// lockTree locks t and, depth first in bound order, its partitions, and
// every index of each table with storage, in mode: what the planner locks
// for a query that reads all of t.
func (s *Backend) lockTree(ec *evalCtx, t *TableDef, mode locks.LockMode) error {
	if err := s.lockNow(ec, t.OID, mode); err != nil {
		return err
	}
	if !t.Partitioned() {
		for _, ix := range s.cat().tableIndexes(t) {
			if err := s.lockNow(ec, ix.OID, mode); err != nil {
				return err
			}
		}
		return nil
	}
	for _, k := range s.cat().partitionChildren(t) {
		if err := s.lockTree(ec, k, mode); err != nil {
			return err
		}
	}
	return nil
}

// dropForeignKey drops foreign key (or clone) con with its clones, as
// RemoveConstraintById does for each: the referencing table and every
// referenced table locked AccessExclusiveLock (their RI triggers go).
func (s *utility) dropForeignKey(ec *evalCtx, con *ConstraintDef) error {
	if err := s.lockNow(ec, con.Table, locks.AccessExclusiveLock); err != nil {
		return err
	}
	for _, c := range append([]*ConstraintDef{con}, s.cat().constraintClones(con)...) {
		if c.RefTable != con.Table {
			if err := s.lockNow(ec, c.RefTable, locks.AccessExclusiveLock); err != nil {
				return err
			}
		}
	}
	s.addCatOp(&catOp{kind: "dropcon", con: con})
	return nil
}

// referencedPartitionDeps lists the foreign keys of other tables that
// DROP TABLE t must drop with t or refuse over, t being partitioned or a
// partition: the keys referencing t or any partition under it, a clone
// standing for its key (the dependency PostgreSQL reports), each once, in
// OID order; via names for each the table PostgreSQL says it depends on.
// That is the table from which findDependentObjects, visiting each
// object's dependents in descending OID order (partitions and the
// constraints referencing it alike), first reached the key or one of its
// clones. dropping names the tables the statement drops.
func (s *utility) referencedPartitionDeps(t *TableDef, dropping []string) (deps []*ConstraintDef, via []string) {
	cat := s.cat()
	tree := map[uint32]bool{t.OID: true}
	for _, k := range cat.inheritors(t) {
		tree[k.OID] = true
	}
	reached := map[uint32]string{}
	var visit func(x *TableDef)
	visit = func(x *TableDef) {
		type dependent struct {
			oid  uint32
			part *TableDef
			con  *ConstraintDef
		}
		var ds []dependent
		for _, k := range cat.partitionChildren(x) {
			ds = append(ds, dependent{oid: k.OID, part: k})
		}
		for _, con := range cat.referencingKeys(x.OID) {
			ds = append(ds, dependent{oid: con.OID, con: con})
		}
		slices.SortFunc(ds, func(a, b dependent) int { return int(b.oid) - int(a.oid) })
		for _, d := range ds {
			if d.part != nil {
				visit(d.part)
				continue
			}
			root := cat.rootConstraint(d.con)
			owner := cat.Tables[root.Table]
			if _, ok := reached[root.OID]; ok || owner == nil || tree[owner.OID] || slices.Contains(dropping, owner.Name) {
				continue
			}
			reached[root.OID] = x.Name
			deps = append(deps, root)
		}
	}
	visit(t)
	slices.SortFunc(deps, func(a, b *ConstraintDef) int { return int(a.OID) - int(b.OID) })
	for _, d := range deps {
		via = append(via, reached[d.OID])
	}
	return deps, via
}

// --- looking up a key in a partitioned table

// routeKey finds the leaf partition of fk.parent that can hold the key in
// fk.keys (set by setKey), and the partitions on the way to it; ok is
// false when no partition holds it.
func (fk *fkRef) routeKey(cat *catalogState) (path []*TableDef, ok bool) {
	if cap(fk.row) < len(fk.parent.Cols) {
		fk.row = make([]Datum, len(fk.parent.Cols))
	}
	row := fk.row[:len(fk.parent.Cols)]
	for i := range row {
		row[i] = NullDatum
	}
	for i, c := range fk.index.Cols {
		row[c] = fk.keys[i].d
	}
	path = fk.path[:0]
	defer func() { fk.path = path }()
	node := fk.parent
	for node.Partitioned() {
		d := cat.partDesc(node.OID)
		if d == nil {
			return path, false
		}
		fk.pkey = partitionKey(d, row, fk.pkey[:0])
		i := d.route(fk.pkey)
		if i < 0 {
			return path, false
		}
		if node = cat.Tables[d.parts[i]]; node == nil {
			return path, false
		}
		path = append(path, node)
	}
	return path, true
}

// leafSource is the lookup of the key in leaf partition leaf's index of
// the key's index tree (nil if it has none).
func (fk *fkRef) leafSource(cat *catalogState, leaf *TableDef) *tableSource {
	if ts, ok := fk.leaves[leaf.OID]; ok {
		return ts
	}
	if fk.leaves == nil {
		fk.leaves = map[uint32]*tableSource{}
	}
	var ts *tableSource
	if ix := cat.indexOfPartition(fk.index, leaf); ix != nil {
		ts = newTableSource(leaf, leaf.Name)
		ts.index = ix
		for _, k := range fk.keys {
			ts.keyArgs = append(ts.keyArgs, k)
			ts.keyTyps = append(ts.keyTyps, k.t)
		}
	}
	fk.leaves[leaf.OID] = ts
	return ts
}

// pkSource returns where the key in fk.keys is looked up: the referenced
// table, or the leaf partition it routes to (nil, nil when none can hold
// it).
func (fk *fkRef) pkSource(cat *catalogState) (*TableDef, *tableSource) {
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
func (s *Executor) riLockPK(ec *evalCtx, fk *fkRef, q riQuery, keyOK bool) error {
	if !fk.parent.Partitioned() {
		return s.riLockRelation(ec, fk.parent, locks.RowShareLock, fk.index, s.riPlan(q, false) != genericReuse)
	}
	cat := s.cat()
	var path []*TableDef
	if keyOK {
		path, _ = fk.routeKey(cat)
	}
	// a generic plan holds every partition, a custom plan those on the
	// key's path: PostgreSQL's costs favour the custom plan whenever the
	// generic one holds more
	kind := s.riPlan(q, fk.parts > len(path))
	mode := locks.RowShareLock
	if err := s.lockNow(ec, fk.parent.OID, mode); err != nil {
		return err
	}
	switch kind {
	case customPlan:
		for _, t := range path {
			if err := s.lockNow(ec, t.OID, mode); err != nil {
				return err
			}
			if !t.Partitioned() {
				for _, ix := range cat.tableIndexes(t) {
					if err := s.lockNow(ec, ix.OID, mode); err != nil {
						return err
					}
				}
			}
		}
		return nil
	case genericBuild:
		for _, k := range cat.partitionChildren(fk.parent) {
			if err := s.lockTree(ec, k, mode); err != nil {
				return err
			}
		}
		return nil
	}
	// the cached generic plan: its range table, then the index of the
	// partition run-time pruning leaves
	var lockAll func(t *TableDef) error
	lockAll = func(t *TableDef) error {
		for _, k := range cat.partitionChildren(t) {
			if err := s.lockNow(ec, k.OID, mode); err != nil {
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
			return s.lockNow(ec, ts.index.OID, mode)
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
func (s *Executor) afterMoveDelete(t *TableDef, old []Datum) error {
	rc, err := s.relConstraints(t)
	if err != nil || rc == nil {
		return err
	}
	for _, fk := range rc.in {
		if !fk.con.isClone() && !anyNull(old, fk.con.RefCols) {
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
func (s *Executor) afterMoveUpdate(t *TableDef, root uint32, set map[int]expr, old, new []Datum) error {
	cat := s.cat()
	rt := cat.Tables[root]
	if rt == nil {
		return nil
	}
	for a := cat.Tables[t.Parent]; a != nil && a.OID != root; a = cat.Tables[a.Parent] {
		for _, con := range cat.referencingKeys(a.OID) {
			if !con.isClone() {
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
