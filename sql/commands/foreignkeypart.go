package commands

import (
	"slices"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/exec"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// addReferencedClones gives foreign key con, when it references a
// partitioned table, a clone for each partition (addFkRecurseReferenced).
func (s *Utility) addReferencedClones(ec *expr.EvalCtx, con *catalog.ConstraintDef) error {
	rt := s.Cat().Tables[con.RefTable]
	if rt == nil || !rt.Partitioned() {
		return nil
	}
	for _, part := range s.Cat().PartitionChildren(rt) {
		if err := s.addReferencedClone(ec, con, part); err != nil {
			return err
		}
	}
	return nil
}

// addReferencedClone makes parent's clone for part, a partition of the
// table parent references, locked ShareRowExclusiveLock (its RI triggers
// are made), then the clones for part's own partitions.
func (s *Utility) addReferencedClone(ec *expr.EvalCtx, parent *catalog.ConstraintDef, part *catalog.TableDef) error {
	if err := s.LockNow(ec, part.OID, locks.ShareRowExclusiveLock); err != nil {
		return err
	}
	cat := s.Cat()
	t, pix := cat.Tables[parent.Table], cat.Indexes[parent.RefIndex]
	if part = cat.Tables[part.OID]; t == nil || pix == nil || part == nil {
		return pgerr.New(pgerr.InternalError, "foreign key constraint \"%s\" is broken", parent.Name)
	}
	ix := cat.IndexOfPartition(pix, part)
	if ix == nil {
		return pgerr.New(pgerr.InternalError, "partition \"%s\" has no index of \"%s\"", part.Name, pix.Name)
	}
	clone := *parent
	clone.OID = s.Catalog.AllocOID()
	clone.Parent, clone.RefTable, clone.RefIndex = parent.OID, part.OID, ix.OID
	// the key's name is taken on the referencing table, so PostgreSQL
	// always chooses one
	clone.Name = cat.ChooseConstraintName(t.Name, catalog.NameAddition(columnNames(t, parent.Cols)), "fkey", nil)
	s.AddCatOp(&catalog.CatOp{Kind: "addcon", Con: &clone})
	if !part.Partitioned() {
		return nil
	}
	for _, k := range s.Cat().PartitionChildren(part) {
		if err := s.addReferencedClone(ec, &clone, k); err != nil {
			return err
		}
	}
	return nil
}

func columnNames(t *catalog.TableDef, cols []int) []string {
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
func (s *Utility) cloneReferencedKeys(ec *expr.EvalCtx, parent, part *catalog.TableDef) error {
	for _, con := range s.Cat().ReferencingKeys(parent.OID) {
		for _, mode := range []locks.LockMode{locks.ShareRowExclusiveLock, locks.AccessShareLock} {
			if err := s.LockNow(ec, con.Table, mode); err != nil {
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
func (s *Utility) detachReferencedKeys(ec *expr.EvalCtx, parent, part *catalog.TableDef) error {
	var clones []*catalog.ConstraintDef
	for _, con := range s.Cat().ReferencingKeys(part.OID) {
		if con.IsClone() {
			clones = append(clones, con)
		}
	}
	if len(clones) == 0 {
		return nil
	}
	if err := s.LockNow(ec, parent.OID, locks.AccessShareLock); err != nil {
		return err
	}
	for _, con := range clones {
		if err := s.LockNow(ec, con.Table, locks.ShareLock); err != nil {
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
func (s *Utility) partitionRemoveCheck(ec *expr.EvalCtx, con *catalog.ConstraintDef, part *catalog.TableDef) error {
	fk, err := s.NewFKRef(con)
	if err != nil {
		return err
	}
	for _, t := range []*catalog.TableDef{part, fk.Child} {
		if err := s.LockTree(ec, t, locks.AccessShareLock); err != nil {
			return err
		}
	}
	vals := make([]types.Datum, len(con.Cols))
	for _, leaf := range s.LeafTables(fk.Child) {
		var bad error
		err := s.ScanTableTIDs(ec, plan.NewTableSource(leaf, leaf.Name), func(_ storage.TID, row []types.Datum) error {
			for i, c := range con.Cols {
				if row[c].Null {
					return nil
				}
				vals[i] = row[c]
			}
			found, err := s.PkVisible(ec, fk, fk.SetKey(ec, vals, fk.FkTypes))
			if err != nil || !found {
				return err
			}
			bad = pgerr.New(pgerr.ForeignKeyViolation, "removing partition \"%s\" violates foreign key constraint \"%s\"", part.Name, con.Name).
				WithDetail("Key ("+exec.KeyNames(fk.Child, con.Cols)+")=("+exec.KeyValues(fk.FkTypes, vals)+") is still referenced from table \""+fk.Child.Name+"\".").
				OnConstraint(fk.Child.Name, con.Name)
			return expr.ErrStopScan
		})
		if bad != nil {
			return bad
		}
		if err != nil && err != expr.ErrStopScan {
			return err
		}
	}
	return nil
}

// dropForeignKey drops foreign key (or clone) con with its clones, as
// RemoveConstraintById does for each: the referencing table and every
// referenced table locked AccessExclusiveLock (their RI triggers go).
func (s *Utility) dropForeignKey(ec *expr.EvalCtx, con *catalog.ConstraintDef) error {
	if err := s.LockNow(ec, con.Table, locks.AccessExclusiveLock); err != nil {
		return err
	}
	for _, c := range append([]*catalog.ConstraintDef{con}, s.Cat().ConstraintClones(con)...) {
		if c.RefTable != con.Table {
			if err := s.LockNow(ec, c.RefTable, locks.AccessExclusiveLock); err != nil {
				return err
			}
		}
	}
	s.AddCatOp(&catalog.CatOp{Kind: "dropcon", Con: con})
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
func (s *Utility) referencedPartitionDeps(t *catalog.TableDef, dropping []string) (deps []*catalog.ConstraintDef, via []string) {
	cat := s.Cat()
	tree := map[uint32]bool{t.OID: true}
	for _, k := range cat.Inheritors(t) {
		tree[k.OID] = true
	}
	reached := map[uint32]string{}
	var visit func(x *catalog.TableDef)
	visit = func(x *catalog.TableDef) {
		type dependent struct {
			oid  uint32
			part *catalog.TableDef
			con  *catalog.ConstraintDef
		}
		var ds []dependent
		for _, k := range cat.PartitionChildren(x) {
			ds = append(ds, dependent{oid: k.OID, part: k})
		}
		for _, con := range cat.ReferencingKeys(x.OID) {
			ds = append(ds, dependent{oid: con.OID, con: con})
		}
		slices.SortFunc(ds, func(a, b dependent) int { return int(b.oid) - int(a.oid) })
		for _, d := range ds {
			if d.part != nil {
				visit(d.part)
				continue
			}
			root := cat.RootConstraint(d.con)
			owner := cat.Tables[root.Table]
			if _, ok := reached[root.OID]; ok || owner == nil || tree[owner.OID] || slices.Contains(dropping, owner.Name) {
				continue
			}
			reached[root.OID] = x.Name
			deps = append(deps, root)
		}
	}
	visit(t)
	slices.SortFunc(deps, func(a, b *catalog.ConstraintDef) int { return int(a.OID) - int(b.OID) })
	for _, d := range deps {
		via = append(via, reached[d.OID])
	}
	return deps, via
}
