package commands

import (
	"fmt"
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
	// RowFormat 1: rows record their number of attributes (sql/catalog/rowlayout.go)
	ct := &newTable{t: &catalog.TableDef{Name: cs.Relation.Relname, Unlogged: cs.Relation.Relpersistence == "u", RowFormat: 1}}
	if err := tableOptions(ct.t, cs.Options); err != nil {
		return err
	}
	for _, e := range cs.TableElts {
		var err error
		switch {
		case e.GetColumnDef() != nil:
			err = s.addColumnDef(ct, e.GetColumnDef())
		case e.GetConstraint() != nil:
			err = ct.addConstraint(e.GetConstraint())
		default:
			err = pgerr.NotSupported("this table element is not supported")
		}
		if err != nil {
			return err
		}
	}
	if len(ct.t.Cols) > 1600 {
		return pgerr.New("54011", "tables can have at most 1600 columns")
	}
	// unique constraints duplicating the primary key or each other
	ct.pkName = ct.cons.mergeUniques(ct.pk, ct.pkName)
	if cs.Partbound != nil { // partition.go
		return s.compileCreatePartition(cs, ct.t, st)
	}
	if cs.Partspec != nil {
		if err := partitionSpec(ct.t, cs.Partspec); err != nil {
			return err
		}
	}
	ifNotExists := cs.IfNotExists
	st.Tag = "CREATE TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		return s.createTable(ec, ct, ifNotExists)
	}
	return nil
}

// newTable is a CREATE TABLE as analysed: the table, its primary key,
// its serial and identity columns, and its other constraints.
type newTable struct {
	t       *catalog.TableDef
	pk      []string
	pkName  string
	colSeqs []columnSeq // serial and identity columns (columnsequences.go)
	cons    tableCons   // CHECK, UNIQUE and FOREIGN KEY constraints (constraint.go)
}

// tableOptions applies CREATE TABLE's WITH (...) storage parameters.
func tableOptions(t *catalog.TableDef, options []*pg.Node) error {
	for _, o := range options {
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
	return nil
}

// addColumnDef adds a column definition with its column constraints.
func (s *Utility) addColumnDef(ct *newTable, cd *pg.ColumnDef) error {
	t := ct.t
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
			if !analyze.IsNullLiteral(con.RawExpr) {
				col.Default = text
			}
		case pg.ConstrType_CONSTR_PRIMARY:
			ct.pk = []string{cd.Colname}
			ct.pkName = con.Conname
			col.NotNull = true
		case pg.ConstrType_CONSTR_IDENTITY: // addColumnSequence
		default:
			if err := ct.cons.addColumn(con, cd.Colname); err != nil {
				return err
			}
		}
	}
	if ct.colSeqs, err = addColumnSequence(ct.colSeqs, cd, &col, serial, t.Name, len(t.Cols)); err != nil {
		return err
	}
	t.Cols = append(t.Cols, col)
	return nil
}

// addConstraint adds a table constraint.
func (ct *newTable) addConstraint(con *pg.Constraint) error {
	if err := ct.cons.addTable(con); err != nil {
		return err
	}
	if con.Contype == pg.ConstrType_CONSTR_PRIMARY {
		for _, k := range con.Keys {
			ct.pk = append(ct.pk, analyze.NodeName(k))
		}
		ct.pkName = con.Conname
	}
	return nil
}

// createTable runs CREATE TABLE: the table with its storage, locked
// AccessExclusiveLock, then its sequences, checks, primary key and
// unique and foreign keys.
func (s *Utility) createTable(ec *expr.EvalCtx, ct *newTable, ifNotExists bool) (string, error) {
	t, name := ct.t, ct.t.Name
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
	seqs, err := s.createColumnSequences(ec, &nt, ct.colSeqs)
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
	if err := s.createChecks(ec, s.Cat().Tables[nt.OID], &ct.cons); err != nil {
		return "", err
	}
	if err := s.ownColumnSequences(ec, nt.OID, seqs); err != nil {
		return "", err
	}
	if len(ct.pk) > 0 {
		if err := s.addIndexConstraint(ec, s.Cat().Tables[nt.OID], ct.pkName, ct.pk, true); err != nil {
			return "", err
		}
	}
	if err := s.createKeys(ec, s.Cat().Tables[nt.OID], &ct.cons); err != nil {
		return "", err
	}
	return "CREATE TABLE", nil
}

func (s *Utility) CompileDrop(d *pg.DropStmt, st *plan.Stmt) error {
	if d.RemoveType == pg.ObjectType_OBJECT_INDEX {
		return s.compileDropIndex(d, st)
	}
	if d.RemoveType != pg.ObjectType_OBJECT_TABLE {
		return pgerr.NotSupported("DROP %s is not supported yet", strings.TrimPrefix(d.RemoveType.String(), "OBJECT_"))
	}
	// CASCADE: foreign keys referencing the table go too, and column
	// defaults that name sequences the dropped tables own (columnsequences.go)
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
			if t.Partitioned() || t.Parent != 0 { // partition.go
				if err := s.dropTableKeys(ec, t, names, cascade); err != nil { // constraint.go
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
			if err := s.dropTableKeys(ec, t, names, cascade); err != nil { // foreign keys (constraint.go)
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
