package commands

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// addPrimaryKey builds a unique index over existing rows (23505 on
// duplicates, 23502 on NULLs) and records it.
func (s *Utility) addPrimaryKey(ec *expr.EvalCtx, t *catalog.TableDef, colNames []string, name string) error {
	cat := s.Cat()
	for _, ixOID := range t.Indexes {
		if ix := cat.Indexes[ixOID]; ix != nil && ix.Primary {
			return pgerr.New(pgerr.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", t.Name)
		}
	}
	return s.addIndex(ec, t, colNames, name, true, true)
}

// defaultIndexName is PostgreSQL's choice: table_col1_col2_idx (or _pkey),
// made unique with a number if taken.
func defaultIndexName(cat *catalog.CatalogState, table string, cols []string, primary bool) string {
	base := table + "_" + strings.Join(cols, "_") + "_idx"
	if primary {
		base = table + "_pkey"
	}
	name := base
	for i := 1; ; i++ {
		if _, taken := cat.ByName[name]; !taken {
			return name
		}
		name = base + strconv.Itoa(i)
	}
}

// addIndex builds an index over the existing rows and records it. A
// unique index refuses duplicates (23505); a primary key also makes its
// columns NOT NULL (23502 on existing NULLs).
func (s *Utility) addIndex(ec *expr.EvalCtx, t *catalog.TableDef, colNames []string, name string, unique, primary bool) error {
	if t.Partitioned() { // partition.go
		return s.addPartitionedIndex(ec, t, colNames, name, unique, primary, 0)
	}
	cat := s.Cat()
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
	if name == "" {
		name = defaultIndexName(cat, t.Name, colNames, primary)
	}
	if _, exists := cat.ByName[name]; exists {
		return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", name)
	}
	ix := &catalog.IndexDef{Name: name, Table: t.OID, Cols: cols, Unique: unique, Primary: primary}
	ix.OID = s.Catalog.AllocOID()
	ix.RelFile = ix.OID
	if err := s.Store.CreateIndex(storage.RelID(ix.RelFile)); err != nil {
		return err
	}
	s.AddCatOp(&catalog.CatOp{Kind: "addindex", Index: ix})
	if primary { // PRIMARY KEY makes its columns NOT NULL (an operation, so that it survives the commit)
		nt := *s.Cat().Tables[t.OID]
		nt.Cols = append([]catalog.ColumnDef(nil), nt.Cols...)
		for _, c := range cols {
			nt.Cols[c].NotNull = true
		}
		s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	}
	nt := s.Cat().Tables[t.OID]
	src := plan.NewTableSource(nt, nt.Name)
	src.DecodeOnly(cols) // the key columns are all the build reads
	// the entries, then sorted: duplicates of a unique index meet, and the
	// B-tree is filled in key order
	type entry struct {
		key  []byte
		tid  storage.TID
		null bool
	}
	var entries []entry
	if ts := s.Cat().TableStats(nt.OID); ts != nil && ts.RelTuples > 0 {
		entries = make([]entry, 0, int(ts.RelTuples)+int(ts.RelTuples)/8)
	}
	// the keys are carved from large shared blocks, not allocated one by one
	var arena []byte
	var nullErr error
	if err := s.ScanTableTIDs(ec, src, func(tid storage.TID, row []types.Datum) error {
		if cap(arena)-len(arena) < 256 {
			arena = make([]byte, 0, 1<<20)
		}
		start := len(arena)
		var null bool
		arena, null = s.AppendIndexKey(arena, nt, ix, row)
		key := arena[start:len(arena):len(arena)]
		if primary && null && nullErr == nil {
			for _, c := range cols { // a primary key's SET NOT NULL, checked as ATRewriteTables does
				if row[c].Null {
					name := nt.Cols[c].Name
					nullErr = pgerr.New(pgerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", name, nt.Name).OnColumn(nt.Name, name)
					break
				}
			}
		}
		entries = append(entries, entry{key, tid, null})
		return nil
	}); err != nil {
		return err
	}
	if nullErr != nil {
		return nullErr
	}
	// A row updated without an index change (HOT) is found at its
	// chain's root: the entry names the root, not the version the scan
	// met (storage/hot.go). The scan met them in TID order.
	tids := make([]storage.TID, len(entries))
	for i := range entries {
		tids[i] = entries[i].tid
	}
	broken, err := s.Store.RootTIDs(s.Proc, storage.RelID(nt.RelFile), tids)
	if err != nil {
		return err
	}
	if broken { // pg_index.indcheckxmin (sql/exec/hotrecheck.go)
		nix := *s.Cat().Indexes[ix.OID]
		nix.CheckXmin = true
		s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
	}
	for i := range entries {
		entries[i].tid = tids[i]
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		switch {
		case tidLess(a.tid, b.tid):
			return -1
		case tidLess(b.tid, a.tid):
			return 1
		}
		return 0
	})
	// a duplicate is reported for the key whose second row comes first
	// in the table, as a build that checked row by row would meet it
	dup := -1
	for i := 1; unique && i < len(entries); i++ {
		e := &entries[i]
		if e.null || !bytes.Equal(entries[i-1].key, e.key) || i > 1 && bytes.Equal(entries[i-2].key, e.key) {
			continue // a NULL key is never a duplicate; only a group's second row counts
		}
		if dup < 0 || tidLess(e.tid, entries[dup].tid) {
			dup = i
		}
	}
	if dup >= 0 {
		row := make([]types.Datum, len(nt.Cols)+plan.NumSysCols)
		if _, err := s.Store.Fetch(s.Proc, &s.Txn, storage.RelID(nt.RelFile), entries[dup].tid, func(_ *plan.TxnHeader, data []byte) {
			_ = catalog.DecodeRow(data, nt, row)
		}); err != nil {
			return err
		}
		return pgerr.New(pgerr.UniqueViolation, "could not create unique index \"%s\"", name).
			WithDetail(strings.TrimSuffix(s.UniqueViolation(nt, ix, row).(*pgerr.Error).Detail, " already exists.")+" is duplicated.").
			OnConstraint(nt.Name, name)
	}
	// The entries go in together: the new index is logged in a few large
	// records, not one per row (storage.IndexBulkInsert).
	bulk := make([]storage.IndexEntry, len(entries))
	for i, e := range entries {
		bulk[i] = storage.IndexEntry{Key: e.key, TID: e.tid}
	}
	if err := s.Store.IndexBulkInsert(s.Proc, storage.RelID(ix.RelFile), bulk); err != nil {
		return err
	}
	s.indexBuilt(nt, ix, len(entries)) // analyze.go
	return nil
}

func (s *Utility) CompileCreateIndex(is *pg.IndexStmt, st *plan.Stmt) error {
	switch {
	case is.Concurrent:
		return pgerr.NotSupported("CREATE INDEX CONCURRENTLY is not supported")
	case is.WhereClause != nil:
		return pgerr.NotSupported("partial indexes are not supported")
	case len(is.IndexIncludingParams) > 0:
		return pgerr.NotSupported("INCLUDE columns are not supported")
	case is.AccessMethod != "" && is.AccessMethod != "btree":
		return pgerr.NotSupported("access method \"%s\" is not supported", is.AccessMethod)
	}
	var cols []string
	for _, p := range is.IndexParams {
		el := p.GetIndexElem()
		if el.Expr != nil || el.Name == "" {
			return pgerr.NotSupported("indexes on expressions are not supported")
		}
		cols = append(cols, el.Name)
	}
	rv, name, unique, ifNotExists := is.Relation, is.Idxname, is.Unique, is.IfNotExists
	st.Tag = "CREATE INDEX"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		t, err := s.ResolveTable(rv)
		if err != nil {
			return "", err
		}
		// CREATE INDEX takes ShareLock: it blocks writers, not readers.
		if err := s.LockNow(ec, t.OID, locks.ShareLock); err != nil {
			return "", err
		}
		// the build reads every row committed, also while the lock was
		// awaited (index_build reads with SnapshotAny)
		defer s.Txn.UseLatestSnapshot()()
		if name != "" {
			if _, exists := s.Cat().ByName[name]; exists && ifNotExists {
				s.Notice(pgerr.SeverityNotice, pgerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", name))
				return "CREATE INDEX", nil
			}
		}
		if err := s.addIndex(ec, s.Cat().Tables[t.OID], cols, name, unique, false); err != nil {
			return "", err
		}
		return "CREATE INDEX", nil
	}
	return nil
}

func (s *Utility) compileDropIndex(d *pg.DropStmt, st *plan.Stmt) error {
	var names []string
	for _, o := range d.Objects {
		schema, name := analyze.QualifiedName(o.GetList().GetItems())
		if schema != "" && schema != "public" {
			return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", schema)
		}
		names = append(names, name)
	}
	missingOK := d.MissingOk
	cascade := d.Behavior == pg.DropBehavior_DROP_CASCADE
	st.Tag = "DROP INDEX"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		for _, name := range names {
			oid, ok := s.Cat().ByName[name]
			ix := s.Cat().Indexes[oid]
			if !ok || ix == nil {
				if err := s.wrongDropKind(name, "index"); err != nil {
					return "", err
				}
				if missingOK {
					s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("index \"%s\" does not exist, skipping", name))
					continue
				}
				return "", pgerr.New(pgerr.UndefinedObject, "index \"%s\" does not exist", name)
			}
			if ix.Parent != 0 || ix.Partitioned() { // partition.go
				if err := s.dropIndexTree(ec, ix); err != nil {
					return "", err
				}
				continue
			}
			if ix.Primary {
				return "", pgerr.New("2BP01", "cannot drop index %s because constraint %s on table %s requires it", name, name, s.Cat().Tables[ix.Table].Name).
					WithHint("You can drop constraint " + name + " on table " + s.Cat().Tables[ix.Table].Name + " instead.")
			}
			if err := s.LockNow(ec, ix.Table, locks.AccessExclusiveLock); err != nil {
				return "", err
			}
			if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
				return "", err
			}
			if err := s.dropIndexKeys(ec, ix, cascade); err != nil { // constraints need it (constraint.go)
				return "", err
			}
			s.AddCatOp(&catalog.CatOp{Kind: "dropindex", Oid: ix.OID, OldFile: ix.RelFile, Index: ix})
		}
		return "DROP INDEX", nil
	}
	return nil
}

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

// tidLess orders heap tuple ids by block, then line pointer.
func tidLess(a, b storage.TID) bool {
	return a.Block < b.Block || a.Block == b.Block && a.Offset < b.Offset
}
