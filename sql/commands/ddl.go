package commands

import (
	"fmt"
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

func (s *Utility) CompileCreateTable(cs *pg.CreateStmt, st *plan.Stmt) error {
	switch {
	case cs.Partbound != nil && len(cs.TableElts) > 0:
		return pgerr.NotSupported("column definitions and constraints in CREATE TABLE ... PARTITION OF are not supported")
	case cs.Partbound == nil && len(cs.InhRelations) > 0:
		return pgerr.NotSupported("table inheritance is not supported")
	case cs.Relation.Relpersistence == "t":
		return pgerr.NotSupported("temporary tables are not supported")
	case cs.Relation.Schemaname != "" && cs.Relation.Schemaname != "public":
		return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", cs.Relation.Schemaname)
	}
	name := cs.Relation.Relname
	// RowFormat 1: rows record their number of attributes (rowlayout.go)
	t := &catalog.TableDef{Name: name, Unlogged: cs.Relation.Relpersistence == "u", RowFormat: 1}
	for _, o := range cs.Options {
		de := o.GetDefElem()
		switch de.Defname {
		case "fillfactor":
			v, err := analyze.DefInt(de)
			if err != nil || v < 10 || v > 100 {
				return pgerr.New(pgerr.InvalidParameterValue, "value %s out of bounds for option \"fillfactor\"", analyze.DefString(de)).
					WithDetail("Valid values are between \"10\" and \"100\".")
			}
			t.Fillfactor = v
		default:
			return pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter \"%s\"", de.Defname)
		}
	}
	var pk []string
	pkName := ""
	var colSeqs []columnSeq // serial and identity columns (seqcols.go)
	var cons tableCons      // CHECK, UNIQUE and FOREIGN KEY constraints (conddl.go)
	for _, e := range cs.TableElts {
		switch {
		case e.GetColumnDef() != nil:
			cd := e.GetColumnDef()
			a := plan.NewAnalyzer(&s.Backend, nil)
			typ, serial, err := columnType(a, cd.TypeName)
			if err != nil {
				return err
			}
			if typ.OID == types.OIDUnknown || typ.OID == types.OIDTextArray || typ.OID == types.OIDInt4Array {
				return pgerr.NotSupported("columns of type %s are not supported", typ.Name)
			}
			if t.ColIndex(cd.Colname) >= 0 {
				return pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", cd.Colname)
			}
			col := catalog.ColumnDef{Name: cd.Colname, TypeOID: typ.OID, TypeMod: typ.Mod}
			if cd.IsNotNull {
				col.NotNull = true
			}
			for _, c := range cd.Constraints {
				con := c.GetConstraint()
				switch con.Contype {
				case pg.ConstrType_CONSTR_NOTNULL:
					col.NotNull = true
				case pg.ConstrType_CONSTR_NULL:
				case pg.ConstrType_CONSTR_DEFAULT:
					text, err := analyze.DeparseDefault(&s.Backend, con.RawExpr)
					if err != nil {
						return err
					}
					if !rawNullDefault(con.RawExpr) { // altercol.go
						col.Default = text
					}
				case pg.ConstrType_CONSTR_PRIMARY:
					pk = []string{cd.Colname}
					pkName = con.Conname
					col.NotNull = true
				case pg.ConstrType_CONSTR_IDENTITY: // addColumnSequence
				default:
					if err := cons.addColumn(con, cd.Colname); err != nil {
						return err
					}
				}
			}
			if colSeqs, err = addColumnSequence(colSeqs, cd, &col, serial, name, len(t.Cols)); err != nil {
				return err
			}
			t.Cols = append(t.Cols, col)
		case e.GetConstraint() != nil:
			con := e.GetConstraint()
			if err := cons.addTable(con); err != nil {
				return err
			}
			if con.Contype != pg.ConstrType_CONSTR_PRIMARY {
				continue
			}
			for _, k := range con.Keys {
				pk = append(pk, analyze.NodeName(k))
			}
			pkName = con.Conname
		default:
			return pgerr.NotSupported("this table element is not supported")
		}
	}
	if len(t.Cols) > 1600 {
		return pgerr.New("54011", "tables can have at most 1600 columns")
	}
	// unique constraints duplicating the primary key or each other (conddl.go)
	pkName = cons.mergeUniques(pk, pkName)
	if cs.Partbound != nil { // partition.go
		return s.compileCreatePartition(cs, t, st)
	}
	if cs.Partspec != nil {
		if err := partitionSpec(t, cs.Partspec); err != nil {
			return err
		}
	}
	ifNotExists := cs.IfNotExists
	st.Tag = "CREATE TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		cat := s.Cat()
		if _, exists := cat.ByName[name]; exists {
			if ifNotExists {
				s.Notice(pgerr.SeverityNotice, pgerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", name))
				return "CREATE TABLE", nil
			}
			return "", pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", name)
		}
		nt := *t
		nt.Cols = append([]catalog.ColumnDef(nil), t.Cols...)
		seqs, err := s.createColumnSequences(ec, &nt, colSeqs)
		if err != nil {
			return "", err
		}
		nt.OID = s.Catalog.AllocOID()
		if !nt.Partitioned() { // a partitioned table has no storage
			nt.RelFile = nt.OID
			if err := s.Store.CreateRelation(storage.RelID(nt.RelFile)); err != nil {
				return "", err
			}
		}
		if err := s.LockNow(ec, nt.OID, locks.AccessExclusiveLock); err != nil {
			return "", err
		}
		s.AddCatOp(&catalog.CatOp{Kind: "create", Table: &nt})
		if err := s.createChecks(ec, s.Cat().Tables[nt.OID], &cons); err != nil { // conddl.go
			return "", err
		}
		if err := s.ownColumnSequences(ec, nt.OID, seqs); err != nil {
			return "", err
		}
		if len(pk) > 0 {
			if err := s.addIndexConstraint(ec, s.Cat().Tables[nt.OID], pkName, pk, true); err != nil { // conddl.go
				return "", err
			}
		}
		if err := s.createKeys(ec, s.Cat().Tables[nt.OID], &cons); err != nil { // conddl.go
			return "", err
		}
		return "CREATE TABLE", nil
	}
	return nil
}

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
	if t.Partitioned() { // partddl.go
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
	type entry struct {
		tid storage.TID
		row []types.Datum
	}
	var rows []entry
	if err := s.ScanTableTIDs(ec, src, func(tid storage.TID, row []types.Datum) error {
		rows = append(rows, entry{tid, append([]types.Datum(nil), row...)})
		return nil
	}); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, r := range rows {
		for _, c := range cols { // a primary key's SET NOT NULL, checked as ATRewriteTables does
			if primary && r.row[c].Null {
				name := nt.Cols[c].Name
				return pgerr.New(pgerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", name, nt.Name).OnColumn(nt.Name, name)
			}
		}
		key := s.IndexKey(nt, ix, r.row)
		if key == nil {
			continue // a NULL key is not indexed (and never a duplicate)
		}
		if unique && seen[string(key)] {
			return pgerr.New(pgerr.UniqueViolation, "could not create unique index \"%s\"", name).
				WithDetail(strings.TrimSuffix(s.UniqueViolation(nt, ix, r.row).(*pgerr.Error).Detail, " already exists.")+" is duplicated.").
				OnConstraint(nt.Name, name)
		}
		seen[string(key)] = true
		if err := s.Store.IndexInsert(s.Proc, storage.RelID(ix.RelFile), key, r.tid); err != nil {
			return err
		}
	}
	return nil
}

func (s *Utility) CompileAlterTable(at *pg.AlterTableStmt, st *plan.Stmt) error {
	if at.Objtype != pg.ObjectType_OBJECT_TABLE {
		return pgerr.NotSupported("ALTER %s is not supported", strings.TrimPrefix(at.Objtype.String(), "OBJECT_"))
	}
	if isPartitionCmd(at) { // partddl.go
		return s.compileAlterPartition(at, st)
	}
	return s.compileAlterConstraints(at, st) // ADD, DROP and VALIDATE CONSTRAINT (conddl.go)
}

func (s *Utility) CompileDrop(d *pg.DropStmt, st *plan.Stmt) error {
	if d.RemoveType == pg.ObjectType_OBJECT_INDEX {
		return s.compileDropIndex(d, st)
	}
	if d.RemoveType != pg.ObjectType_OBJECT_TABLE {
		return pgerr.NotSupported("DROP %s is not supported yet", strings.TrimPrefix(d.RemoveType.String(), "OBJECT_"))
	}
	// CASCADE: foreign keys referencing the table go too, and column
	// defaults that name sequences the dropped tables own (seqcols.go)
	cascade := d.Behavior == pg.DropBehavior_DROP_CASCADE
	var names []string
	for _, o := range d.Objects {
		schema, name := analyze.QualifiedName(o.GetList().GetItems())
		if schema != "" && schema != "public" {
			return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", schema)
		}
		names = append(names, name)
	}
	missingOK := d.MissingOk
	st.Tag = "DROP TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		before := s.Cat()
		for _, name := range names {
			t := s.Cat().Table(name)
			if t == nil && before.Table(name) != nil {
				continue // a partition dropped with its parent named earlier
			}
			if t == nil {
				if err := s.wrongDropKind(name, "table"); err != nil {
					return "", err
				}
				if missingOK {
					s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("table \"%s\" does not exist, skipping", name))
					continue
				}
				return "", pgerr.New(pgerr.UndefinedTable, "table \"%s\" does not exist", name)
			}
			if t.Partitioned() || t.Parent != 0 { // partddl.go
				if err := s.dropTableKeys(ec, t, names, cascade); err != nil { // conddl.go
					return "", err
				}
				if err := s.dropPartitionTree(ec, t); err != nil {
					return "", err
				}
				continue
			}
			if err := s.LockNow(ec, t.OID, locks.AccessExclusiveLock); err != nil {
				return "", err
			}
			t = s.Cat().Table(name)
			if t == nil {
				continue
			}
			if err := s.dropTableKeys(ec, t, names, cascade); err != nil { // foreign keys (conddl.go)
				return "", err
			}
			op := &catalog.CatOp{Kind: "drop", Oid: t.OID, OldFile: t.RelFile, OldIdx: map[uint32]uint32{}}
			for _, ix := range s.Cat().TableIndexes(t) {
				op.OldIdx[ix.OID] = ix.RelFile
			}
			s.AddCatOp(op)
		}
		if err := s.dropOwnedSequences(ec, before, names, cascade); err != nil {
			return "", err
		}
		return "DROP TABLE", nil
	}
	return nil
}

func (s *Utility) CompileTruncate(tr *pg.TruncateStmt, st *plan.Stmt) error {
	var rvs []*pg.RangeVar
	for _, r := range tr.Relations {
		rvs = append(rvs, r.GetRangeVar())
	}
	cascade := tr.Behavior == pg.DropBehavior_DROP_CASCADE
	restart := tr.RestartSeqs
	st.Tag = "TRUNCATE TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		var tabs, rels []*catalog.TableDef
		for _, rv := range rvs {
			t, err := s.ResolveTable(rv)
			if err != nil {
				return "", err
			}
			if err := s.LockNow(ec, t.OID, locks.AccessExclusiveLock); err != nil {
				return "", err
			}
			leaves, err := s.truncateTargets(ec, t, rv.Inh) // partddl.go
			if err != nil {
				return "", err
			}
			tabs = append(tabs, leaves...)
			rels = append(rels, t)
			if rv.Inh && t.Partitioned() {
				rels = append(rels, s.Cat().Inheritors(t)...)
			}
		}
		tabs, err := s.truncateKeys(ec, rels, tabs, cascade) // foreign keys (conddl.go)
		if err != nil {
			return "", err
		}
		for _, t := range tabs {
			// the new, empty storage is built as REINDEX builds it:
			// ShareLock on the table, AccessExclusiveLock on each index
			if err := s.LockNow(ec, t.OID, locks.ShareLock); err != nil {
				return "", err
			}
			for _, ix := range s.Cat().TableIndexes(t) {
				if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
					return "", err
				}
			}
			t = s.Cat().Tables[t.OID]
			op := &catalog.CatOp{Kind: "truncate", Oid: t.OID, OldFile: t.RelFile, OldIdx: map[uint32]uint32{}, NewIdx: map[uint32]uint32{}}
			op.Relfile = s.Catalog.AllocOID()
			if err := s.Store.CreateRelation(storage.RelID(op.Relfile)); err != nil {
				return "", err
			}
			for _, ix := range s.Cat().TableIndexes(t) {
				op.OldIdx[ix.OID] = ix.RelFile
				f := s.Catalog.AllocOID()
				if err := s.Store.CreateIndex(storage.RelID(f)); err != nil {
					return "", err
				}
				op.NewIdx[ix.OID] = f
			}
			s.AddCatOp(op)
		}
		if restart {
			if err := s.restartIdentity(ec, rvs, tabs); err != nil { // seqcols.go
				return "", err
			}
		}
		return "TRUNCATE TABLE", nil
	}
	return nil
}

func (s *Utility) CompileLock(ls *pg.LockStmt, st *plan.Stmt) error {
	mode := locks.LockMode(ls.Mode)
	if !mode.Valid() {
		return pgerr.New(pgerr.SyntaxError, "invalid lock mode")
	}
	var rvs []*pg.RangeVar
	for _, r := range ls.Relations {
		rvs = append(rvs, r.GetRangeVar())
	}
	nowait := ls.Nowait
	st.Tag = "LOCK TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if s.Tx != expr.TxBlock {
			return "", pgerr.New(pgerr.NoActiveSQLTransaction, "LOCK TABLE can only be used in transaction blocks")
		}
		for _, rv := range rvs {
			t, err := s.ResolveTable(rv)
			if err != nil {
				return "", err
			}
			ok, err := s.Acquire(ec, locks.RelationTag(catalog.DatabaseOID, t.OID), mode, false, nowait)
			if err != nil {
				return "", err
			}
			if !ok {
				return "", pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on relation \"%s\"", t.Name)
			}
			for _, k := range s.Cat().LockTableDescendants(t, rv.Inh) { // partitions too, as PostgreSQL does
				ok, err := s.Acquire(ec, locks.RelationTag(catalog.DatabaseOID, k.OID), mode, false, nowait)
				if err != nil {
					return "", err
				}
				if !ok {
					return "", pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on relation \"%s\"", k.Name)
				}
			}
		}
		return "LOCK TABLE", nil
	}
	return nil
}

func (s *Utility) CompileVacuum(v *pg.VacuumStmt, st *plan.Stmt) error {
	full, analyzeOnly := false, !v.IsVacuumcmd
	for _, o := range v.Options {
		de := o.GetDefElem()
		switch de.Defname {
		case "full":
			full = true
		case "analyze", "verbose", "freeze", "skip_locked", "disable_page_skipping", "index_cleanup", "truncate", "process_toast", "parallel":
		}
	}
	if full {
		return pgerr.NotSupported("VACUUM FULL is not supported")
	}
	var rvs []*pg.RangeVar
	for _, r := range v.Rels {
		rvs = append(rvs, r.GetVacuumRelation().Relation)
	}
	tag := "VACUUM"
	if analyzeOnly {
		tag = "ANALYZE"
	}
	st.Tag = tag
	if !analyzeOnly {
		st.NoBlock = "VACUUM"
	}
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		var tabs []*catalog.TableDef
		if len(rvs) == 0 {
			cat := s.Cat()
			for _, n := range cat.TableNames() {
				tabs = append(tabs, cat.Table(n))
			}
		}
		for _, rv := range rvs {
			if analyze.SkipSequence(&s.Backend, rv, tag) { // seqcols.go
				continue
			}
			t, err := s.ResolveTable(rv)
			if err != nil {
				return "", err
			}
			tabs = append(tabs, t)
		}
		tabs = s.vacuumTargets(tabs, len(rvs) > 0) // partddl.go
		for _, t := range tabs {
			if err := s.LockNow(ec, t.OID, locks.ShareUpdateExclusiveLock); err != nil {
				return "", err
			}
			if analyzeOnly {
				continue // lockd keeps no planner statistics
			}
			t = s.Cat().Tables[t.OID]
			if t == nil || t.Partitioned() {
				continue
			}
			var idx []storage.RelID
			for _, ix := range s.Cat().TableIndexes(t) {
				idx = append(idx, storage.RelID(ix.RelFile))
			}
			if _, err := s.Store.Vacuum(ec.Ctx, s.Proc, storage.RelID(t.RelFile), s.Txns.OldestXmin(), idx); err != nil {
				return "", err
			}
		}
		return tag, nil
	}
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
			if ix.Parent != 0 || ix.Partitioned() { // partddl.go
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
			if err := s.dropIndexKeys(ec, ix, cascade); err != nil { // constraints need it (conddl.go)
				return "", err
			}
			s.AddCatOp(&catalog.CatOp{Kind: "dropindex", Oid: ix.OID, OldFile: ix.RelFile, Index: ix})
		}
		return "DROP INDEX", nil
	}
	return nil
}
