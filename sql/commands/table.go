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
