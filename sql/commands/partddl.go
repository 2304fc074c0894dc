package commands

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// DDL on partitioned tables after CREATE: partitioned indexes, DROP,
// TRUNCATE, VACUUM and LOCK of a partition tree, ATTACH and DETACH
// PARTITION, and what COPY may do with them. Each takes the locks
// PostgreSQL 15 takes (checked in pg_locks of a real server while the
// statement's transaction was open).

// --- indexes on partitioned tables

// addPartitionedIndex makes a partitioned index on t and one index on each
// of its partitions (DefineIndex on a partitioned table). parentIx is the
// partitioned index of t's parent this one belongs to, or 0.
func (s *Utility) addPartitionedIndex(ec *expr.EvalCtx, t *catalog.TableDef, colNames []string, name string, unique, primary bool, parentIx uint32) error {
	var cols []int
	for _, c := range colNames {
		i := t.ColIndex(c)
		if i < 0 {
			return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", c, t.Name)
		}
		if t.Cols[i].TypeOID == types.OIDNumeric {
			return pgerr.NotSupported("indexes on numeric columns are not supported yet")
		}
		cols = append(cols, i)
	}
	if err := uniqueCoversKey(t, cols, unique, primary); err != nil {
		return err
	}
	cat := s.Cat()
	if name == "" {
		name = defaultIndexName(cat, t.Name, colNames, primary)
	}
	if _, exists := cat.ByName[name]; exists {
		return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", name)
	}
	// DefineIndex takes ShareLock on the table (ALTER TABLE already holds
	// AccessExclusiveLock); the new index is locked AccessExclusiveLock,
	// and ShareUpdateExclusiveLock while partitions' indexes attach to it.
	if err := s.LockNow(ec, t.OID, locks.ShareLock); err != nil {
		return err
	}
	ix := &catalog.IndexDef{Name: name, Table: t.OID, Cols: cols, Unique: unique, Primary: primary, RelKind: "I", Parent: parentIx}
	ix.OID = s.Catalog.AllocOID()
	if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	s.AddCatOp(&catalog.CatOp{Kind: "addindex", Index: ix})
	if primary {
		nt := *s.Cat().Tables[t.OID]
		nt.Cols = append([]catalog.ColumnDef(nil), nt.Cols...)
		for _, c := range cols {
			nt.Cols[c].NotNull = true
		}
		s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	}
	for _, child := range s.Cat().PartitionChildren(s.Cat().Tables[t.OID]) {
		if err := s.cloneIndexOnto(ec, s.Cat().Indexes[ix.OID], child); err != nil {
			return err
		}
	}
	return nil
}

// uniqueCoversKey: a unique index on a partitioned table must contain
// every partition key column.
func uniqueCoversKey(t *catalog.TableDef, cols []int, unique, primary bool) error {
	if !unique || !t.Partitioned() {
		return nil
	}
	for _, k := range t.PartKey {
		if !slices.Contains(cols, k) {
			what := "UNIQUE"
			if primary {
				what = "PRIMARY KEY"
			}
			return pgerr.NotSupported("unique constraint on partitioned table must include all partitioning columns").
				WithDetail(fmt.Sprintf("%s constraint on table \"%s\" lacks column \"%s\" which is part of the partition key.", what, t.Name, t.Cols[k].Name))
		}
	}
	return nil
}

// cloneIndexOnto gives partition child the index of its parent pix: an
// existing equivalent index of child is attached, otherwise one is built,
// named as PostgreSQL names it (child_pkey, child_col_idx).
func (s *Utility) cloneIndexOnto(ec *expr.EvalCtx, pix *catalog.IndexDef, child *catalog.TableDef) error {
	if err := s.LockNow(ec, pix.OID, locks.ShareUpdateExclusiveLock); err != nil {
		return err
	}
	child = s.Cat().Tables[child.OID]
	parentTable := s.Cat().Tables[pix.Table]
	var colNames []string
	for _, c := range pix.Cols {
		colNames = append(colNames, parentTable.Cols[c].Name)
	}
	for _, ix := range s.Cat().TableIndexes(child) {
		if ix.Parent == 0 && slices.Equal(ix.Cols, pix.Cols) && ix.Unique == pix.Unique && ix.Primary == pix.Primary &&
			ix.Partitioned() == child.Partitioned() {
			nix := *ix
			nix.Parent = pix.OID
			s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
			return nil
		}
	}
	// none to attach: DefineIndex builds one, under ShareLock on the table
	if err := s.LockNow(ec, child.OID, locks.ShareLock); err != nil {
		return err
	}
	if child.Partitioned() {
		return s.addPartitionedIndex(ec, child, colNames, "", pix.Unique, pix.Primary, pix.OID)
	}
	name := defaultIndexName(s.Cat(), child.Name, colNames, pix.Primary)
	if err := s.addIndex(ec, child, colNames, name, pix.Unique, pix.Primary); err != nil {
		return err
	}
	oid := s.Cat().ByName[name]
	if err := s.LockNow(ec, oid, locks.AccessExclusiveLock); err != nil {
		return err
	}
	nix := *s.Cat().Indexes[oid]
	nix.Parent = pix.OID
	s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
	return nil
}

// dropIndexTree handles DROP INDEX of an index that takes part in
// partitioning: a partition's index may not be dropped alone; a
// partitioned index takes its partitions' indexes with it, each table
// and index locked AccessExclusiveLock.
func (s *Utility) dropIndexTree(ec *expr.EvalCtx, ix *catalog.IndexDef) error {
	cat := s.Cat()
	if ix.Parent != 0 {
		if pix := cat.Indexes[ix.Parent]; pix != nil {
			return pgerr.New("2BP01", "cannot drop index %s because index %s requires it", ix.Name, pix.Name).
				WithHint("You can drop index " + pix.Name + " instead.")
		}
	}
	if ix.Primary {
		t := cat.Tables[ix.Table]
		return pgerr.New("2BP01", "cannot drop index %s because constraint %s on table %s requires it", ix.Name, ix.Name, t.Name).
			WithHint("You can drop constraint " + ix.Name + " on table " + t.Name + " instead.")
	}
	var drop func(ix *catalog.IndexDef) error
	drop = func(ix *catalog.IndexDef) error {
		if err := s.LockNow(ec, ix.Table, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		for _, child := range s.childIndexes(ix) {
			if err := drop(child); err != nil {
				return err
			}
		}
		s.AddCatOp(&catalog.CatOp{Kind: "dropindex", Oid: ix.OID, OldFile: ix.RelFile, Index: ix})
		return nil
	}
	return drop(ix)
}

// childIndexes lists the indexes attached to partitioned index pix, in
// the bound order of their tables.
func (s *Utility) childIndexes(pix *catalog.IndexDef) []*catalog.IndexDef {
	cat := s.Cat()
	t := cat.Tables[pix.Table]
	if t == nil || !pix.Partitioned() {
		return nil
	}
	var out []*catalog.IndexDef
	for _, child := range cat.PartitionChildren(t) {
		for _, ix := range cat.TableIndexes(child) {
			if ix.Parent == pix.OID {
				out = append(out, ix)
			}
		}
	}
	return out
}

// --- DROP, TRUNCATE, VACUUM, LOCK of partitioned tables

// dropPartitionTree drops t when it is partitioned or a partition: the
// parent of a partition is locked first, then t, its partitions and
// their indexes, all AccessExclusiveLock (as PostgreSQL's dependency
// walk does).
func (s *Utility) dropPartitionTree(ec *expr.EvalCtx, t *catalog.TableDef) error {
	var def uint32 // the default partition's constraint changes with its siblings
	if t.Parent != 0 {
		if err := s.LockNow(ec, t.Parent, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if d := s.Cat().PartDesc(t.Parent); d != nil && d.Def >= 0 && d.Parts[d.Def] != t.OID {
			def = d.Parts[d.Def]
		}
	}
	var drop func(t *catalog.TableDef) error
	drop = func(t *catalog.TableDef) error {
		if err := s.LockNow(ec, t.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if t = s.Cat().Tables[t.OID]; t == nil {
			return nil
		}
		for _, child := range s.Cat().PartitionChildren(t) {
			if err := drop(child); err != nil {
				return err
			}
		}
		op := &catalog.CatOp{Kind: "drop", Oid: t.OID, OldFile: t.RelFile, OldIdx: map[uint32]uint32{}}
		for _, ix := range s.Cat().TableIndexes(t) {
			if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
			op.OldIdx[ix.OID] = ix.RelFile
		}
		s.AddCatOp(op)
		return nil
	}
	if err := drop(t); err != nil {
		return err
	}
	if def != 0 {
		return s.LockNow(ec, def, locks.AccessExclusiveLock)
	}
	return nil
}

// lockInheritors locks every descendant of t in mode, in
// find_all_inheritors order, and returns them.
func (s *Utility) lockInheritors(ec *expr.EvalCtx, t *catalog.TableDef, mode locks.LockMode) ([]*catalog.TableDef, error) {
	kids := s.Cat().Inheritors(t)
	for _, k := range kids {
		if err := s.LockNow(ec, k.OID, mode); err != nil {
			return nil, err
		}
	}
	return kids, nil
}

// truncateTargets is what TRUNCATE t empties: t, or every leaf partition
// of a partitioned t, all locked AccessExclusiveLock. inh is false for
// TRUNCATE ONLY.
func (s *Utility) truncateTargets(ec *expr.EvalCtx, t *catalog.TableDef, inh bool) ([]*catalog.TableDef, error) {
	if !t.Partitioned() {
		return []*catalog.TableDef{t}, nil
	}
	if !inh {
		return nil, pgerr.New(pgerr.WrongObjectType, "cannot truncate only a partitioned table").
			WithHint("Do not specify the ONLY keyword, or use TRUNCATE ONLY on the partitions directly.")
	}
	kids, err := s.lockInheritors(ec, t, locks.AccessExclusiveLock)
	if err != nil {
		return nil, err
	}
	var leaves []*catalog.TableDef
	for _, k := range kids {
		if !k.Partitioned() {
			leaves = append(leaves, k)
		}
	}
	return leaves, nil
}

// vacuumTargets expands partitioned tables named by VACUUM or ANALYZE into
// their partitions (a partitioned table has nothing to vacuum itself).
func (s *Utility) vacuumTargets(tabs []*catalog.TableDef, named bool) []*catalog.TableDef {
	if !named {
		return tabs
	}
	var out []*catalog.TableDef
	for _, t := range tabs {
		out = append(out, t)
		if t.Partitioned() {
			out = append(out, s.Cat().Inheritors(t)...)
		}
	}
	return out
}

// --- ALTER TABLE ... ATTACH / DETACH PARTITION

// isPartitionCmd reports whether at is ATTACH or DETACH PARTITION.
func isPartitionCmd(at *pg.AlterTableStmt) bool {
	for _, c := range at.Cmds {
		switch c.GetAlterTableCmd().Subtype {
		case pg.AlterTableType_AT_AttachPartition, pg.AlterTableType_AT_DetachPartition, pg.AlterTableType_AT_DetachPartitionFinalize:
			return true
		}
	}
	return false
}

func (s *Utility) compileAlterPartition(at *pg.AlterTableStmt, st *plan.Stmt) error {
	if len(at.Cmds) != 1 {
		return pgerr.NotSupported("ATTACH or DETACH PARTITION together with other ALTER TABLE commands is not supported")
	}
	cmd := at.Cmds[0].GetAlterTableCmd()
	pc := cmd.GetDef().GetPartitionCmd()
	rv := at.Relation
	st.Tag = "ALTER TABLE"
	switch cmd.Subtype {
	case pg.AlterTableType_AT_AttachPartition:
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			return "ALTER TABLE", s.attachPartition(ec, rv, pc)
		}
	case pg.AlterTableType_AT_DetachPartitionFinalize:
		return pgerr.NotSupported("ALTER TABLE ... DETACH PARTITION ... FINALIZE is not supported")
	default:
		if pc.Concurrent {
			st.NoBlock = "ALTER TABLE ... DETACH CONCURRENTLY"
			st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
				return "", pgerr.NotSupported("ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY is not supported")
			}
			return nil
		}
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			return "ALTER TABLE", s.detachPartition(ec, rv, pc)
		}
	}
	return nil
}

func (s *Utility) attachPartition(ec *expr.EvalCtx, rv *pg.RangeVar, pc *pg.PartitionCmd) error {
	// PostgreSQL 12+: ShareUpdateExclusiveLock on the parent, so reads and
	// writes of the parent go on while a partition is attached.
	parent, err := s.LockTable(ec, rv, locks.ShareUpdateExclusiveLock)
	if err != nil {
		return err
	}
	if !parent.Partitioned() {
		return pgerr.New(pgerr.InvalidObjectDefinition, "table \"%s\" is not partitioned", parent.Name)
	}
	child, err := s.LockTable(ec, pc.Name, locks.AccessExclusiveLock)
	if err != nil {
		return err
	}
	// a partitioned table's partitions too (find_all_inheritors, against
	// circularity and for the scan of their rows)
	if _, err := s.lockInheritors(ec, child, locks.AccessExclusiveLock); err != nil {
		return err
	}
	cat := s.Cat()
	switch {
	case child.Parent != 0:
		return pgerr.New(pgerr.WrongObjectType, "\"%s\" is already a partition", child.Name)
	case cat.AncestorOf(child, parent):
		return pgerr.New(pgerr.DuplicateTable, "circular inheritance not allowed").
			WithDetail(fmt.Sprintf("\"%s\" is already a child of \"%s\".", child.Name, parent.Name))
	}
	if err := checkPartitionColumns(parent, child); err != nil {
		return err
	}
	if err := s.attachChecks(parent, child); err != nil { // conddl.go
		return err
	}
	bound, err := s.transformBound(parent, pc.Bound)
	if err != nil {
		return err
	}
	if err := s.checkNewBound(parent, child.Name, bound, pc.Bound); err != nil {
		return err
	}
	d := s.Cat().PartDesc(parent.OID)
	if d.Def >= 0 && !bound.Default {
		if err := s.checkDefaultPartition(ec, parent, bound); err != nil {
			return err
		}
	}
	// the existing rows must satisfy the new partition constraint
	var key []types.Datum
	if err := s.ScanRows(ec, child, func(row []types.Datum) error {
		key = catalog.PartitionKey(d, row, key)
		if !boundContains(d, bound, key) {
			return pgerr.New(pgerr.CheckViolation, "partition constraint of relation \"%s\" is violated by some row", child.Name)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := s.attachForeignKeys(ec, parent, child); err != nil { // conddl.go
		return err
	}
	nt := *child
	nt.Parent, nt.Bound = parent.OID, bound
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	for _, pix := range s.Cat().TableIndexes(parent) {
		if err := s.cloneIndexOnto(ec, pix, s.Cat().Tables[child.OID]); err != nil {
			return err
		}
	}
	// the foreign keys referencing the parent get clones for it (fkpart.go)
	return s.cloneReferencedKeys(ec, s.Cat().Tables[parent.OID], s.Cat().Tables[child.OID])
}

// checkPartitionColumns checks that child can be a partition of parent: PostgreSQL's
// messages for missing, extra and different columns; lockd also needs the
// columns in the parent's order.
func checkPartitionColumns(parent, child *catalog.TableDef) error {
	for _, c := range child.Cols {
		if parent.ColIndex(c.Name) < 0 {
			return pgerr.New(pgerr.DatatypeMismatch, "table \"%s\" contains column \"%s\" not found in parent \"%s\"", child.Name, c.Name, parent.Name).
				WithDetail("The new partition may contain only the columns present in parent.")
		}
	}
	for i, pc := range parent.Cols {
		j := child.ColIndex(pc.Name)
		if j < 0 {
			return pgerr.New(pgerr.DatatypeMismatch, "child table is missing column \"%s\"", pc.Name)
		}
		cc := child.Cols[j]
		if cc.TypeOID != pc.TypeOID || cc.TypeMod != pc.TypeMod {
			return pgerr.New(pgerr.DatatypeMismatch, "child table \"%s\" has different type for column \"%s\"", child.Name, pc.Name)
		}
		if pc.NotNull && !cc.NotNull {
			return pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" in child table must be marked NOT NULL", pc.Name)
		}
		if j != i {
			return pgerr.NotSupported("attaching a table whose columns are in a different order than its parent's is not supported")
		}
	}
	return nil
}

func (s *Utility) detachPartition(ec *expr.EvalCtx, rv *pg.RangeVar, pc *pg.PartitionCmd) error {
	parent, err := s.LockTable(ec, rv, locks.AccessExclusiveLock)
	if err != nil {
		return err
	}
	if !parent.Partitioned() {
		return pgerr.New(pgerr.InvalidObjectDefinition, "table \"%s\" is not partitioned", parent.Name)
	}
	child, err := s.ResolveTable(pc.Name)
	if err != nil {
		return err
	}
	if child.Parent != parent.OID {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" is not a partition of relation \"%s\"", child.Name, parent.Name)
	}
	if err := s.LockNow(ec, child.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	// the default partition's constraint changes with its siblings
	if d := s.Cat().PartDesc(parent.OID); d.Def >= 0 && d.Parts[d.Def] != child.OID {
		if err := s.LockNow(ec, d.Parts[d.Def], locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	// foreign keys referencing the partition through their clones
	if err := s.detachReferencedKeys(ec, parent, s.Cat().Tables[child.OID]); err != nil { // fkpart.go
		return err
	}
	child = s.Cat().Tables[child.OID]
	for _, ix := range s.Cat().TableIndexes(child) {
		if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if ix.Parent != 0 {
			nix := *ix
			nix.Parent = 0
			s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
		}
	}
	if err := s.detachConstraints(ec, child); err != nil { // the inherited constraints stay with it (conddl.go)
		return err
	}
	nt := *child
	nt.Parent, nt.Bound = 0, nil
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	return nil
}
