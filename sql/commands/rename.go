package commands

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// RENAME (tablecmds.c RenameRelation, renameatt, RenameConstraint):
//
//   - ALTER TABLE | INDEX [IF EXISTS] r RENAME TO n: any relation, whichever
//     word names it, with AccessExclusiveLock — ShareUpdateExclusiveLock
//     for ALTER INDEX of an index. Nothing else is renamed (a table's
//     indexes keep their names; an index that implements a constraint is
//     the constraint, and renames it).
//   - ALTER TABLE [IF EXISTS] [ONLY] t RENAME [COLUMN] a TO b: t and its
//     partitions, AccessExclusiveLock each. The indexes on the column keep
//     the old name for their own attribute, as PostgreSQL's do; CHECK
//     constraints read the new name.
//   - ALTER TABLE [IF EXISTS] t RENAME CONSTRAINT a TO b.

func (s *Utility) CompileRename(rs *pg.RenameStmt, st *plan.Stmt) error {
	rv, newName, missingOK := rs.Relation, rs.Newname, rs.MissingOk
	if rv == nil {
		return pgerr.NotSupported("ALTER %s ... RENAME is not supported", analyze.ObjectTypeName(rs.RenameType))
	}
	tag := "ALTER TABLE"
	var run func(ec *expr.EvalCtx) error
	switch rs.RenameType {
	case pg.ObjectType_OBJECT_TABLE, pg.ObjectType_OBJECT_INDEX:
		isIndex := rs.RenameType == pg.ObjectType_OBJECT_INDEX
		if isIndex {
			tag = "ALTER INDEX"
		}
		run = func(ec *expr.EvalCtx) error { return s.renameRelation(ec, rv, newName, isIndex) }
	case pg.ObjectType_OBJECT_COLUMN:
		if rs.RelationType != pg.ObjectType_OBJECT_TABLE {
			return pgerr.NotSupported("ALTER %s ... RENAME COLUMN is not supported", analyze.ObjectTypeName(rs.RelationType))
		}
		old, recurse := rs.Subname, rv.Inh
		run = func(ec *expr.EvalCtx) error {
			t, err := s.lockRenameTarget(ec, rv)
			if err != nil {
				return err
			}
			return s.renameColumn(ec, t, old, newName, recurse, false)
		}
	case pg.ObjectType_OBJECT_TABCONSTRAINT:
		old, recurse := rs.Subname, rv.Inh
		run = func(ec *expr.EvalCtx) error {
			t, err := s.lockRenameTarget(ec, rv)
			if err != nil {
				return err
			}
			return s.renameConstraint(ec, t, old, newName, recurse)
		}
	default:
		return pgerr.NotSupported("ALTER %s ... RENAME is not supported", analyze.ObjectTypeName(rs.RenameType))
	}
	st.Tag = tag
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		_, exists := s.Cat().ByName[rv.Relname]
		if missingOK && (!exists || rv.Schemaname != "" && rv.Schemaname != "public") {
			s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("relation \"%s\" does not exist, skipping", rv.Relname))
			return tag, nil
		}
		if err := run(ec); err != nil {
			return "", err
		}
		return tag, nil
	}
	return nil
}

// lockRenameTarget resolves and locks (AccessExclusiveLock) the table of
// RENAME COLUMN or RENAME CONSTRAINT.
func (s *Utility) lockRenameTarget(ec *expr.EvalCtx, rv *pg.RangeVar) (*catalog.TableDef, error) {
	t, err := s.ResolveTable(rv)
	if err != nil {
		if kind := s.Cat().RelationKind(rv.Relname); kind == "index" || kind == "sequence" {
			return nil, pgerr.NotSupported("RENAME COLUMN or CONSTRAINT of %s \"%s\" is not supported", kind, rv.Relname)
		}
		return nil, NoPosition(err)
	}
	if err := s.LockNow(ec, t.OID, locks.AccessExclusiveLock); err != nil {
		return nil, err
	}
	if t = s.Cat().Tables[t.OID]; t == nil {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", rv.Relname)
	}
	return t, nil
}

// renameRelation is RENAME TO of a table or an index.
func (s *Utility) renameRelation(ec *expr.EvalCtx, rv *pg.RangeVar, newName string, isIndex bool) error {
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return expr.TableNotFound(rv.Schemaname+"."+rv.Relname, -1)
	}
	oid, ok := s.Cat().ByName[rv.Relname]
	if !ok {
		return expr.TableNotFound(rv.Relname, -1)
	}
	if s.Cat().Sequences[oid] != nil {
		// a default names its sequence by name (columnsequences.go): renaming
		// one would need those rewritten
		return pgerr.NotSupported("renaming sequence \"%s\" is not supported", rv.Relname)
	}
	_, objIsIndex := s.Cat().Indexes[oid]
	mode := locks.AccessExclusiveLock
	if isIndex && objIsIndex {
		mode = locks.ShareUpdateExclusiveLock
	}
	if err := s.LockNow(ec, oid, mode); err != nil {
		return err
	}
	cat := s.Cat()
	if _, taken := cat.ByName[newName]; taken {
		return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", newName)
	}
	if ix := cat.Indexes[oid]; ix != nil {
		if ix.Primary || ix.IsConstraint {
			if c, _ := cat.ConstraintNamed(ix.Table, newName); c != nil {
				return pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", newName, cat.Tables[ix.Table].Name)
			}
		}
		nix := *ix
		nix.Name = newName
		s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
		return nil
	}
	t := cat.Tables[oid]
	if t == nil {
		return expr.TableNotFound(rv.Relname, -1)
	}
	nt := *t
	nt.Name = newName
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	return nil
}

// renameColumn is RENAME COLUMN old TO name of t and, unless ONLY, its
// partitions.
func (s *Utility) renameColumn(ec *expr.EvalCtx, t *catalog.TableDef, old, name string, recurse, recursing bool) error {
	if plan.IsSystemColumn(old) {
		return pgerr.NotSupported("cannot rename system column \"%s\"", old)
	}
	i := t.ColIndex(old)
	cat := s.Cat()
	kids := cat.PartitionChildren(t)
	switch {
	case i < 0:
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" does not exist", old)
	case t.Parent != 0 && !recursing:
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot rename inherited column \"%s\"", old)
	case !recurse && len(kids) > 0:
		return pgerr.New(pgerr.InvalidTableDefinition, "inherited column \"%s\" must be renamed in child tables too", old)
	case t.ColIndex(name) >= 0:
		return pgerr.New(pgerr.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", name, t.Name)
	case plan.IsSystemColumn(name):
		return pgerr.New(pgerr.DuplicateColumn, "column name \"%s\" conflicts with a system column name", name)
	}
	for _, k := range kids {
		if err := s.LockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	nt := *t
	nt.Cols = append([]catalog.ColumnDef(nil), t.Cols...)
	nt.Cols[i].Name = name
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	// the indexes keep the old name for their attribute
	for _, ix := range cat.TableIndexes(t) {
		if ix.ColNames == nil && !slices.Contains(ix.Cols, i) {
			continue
		}
		nix := *ix
		if nix.ColNames == nil {
			for k := range ix.Cols {
				nix.ColNames = append(nix.ColNames, ix.ColName(t, k))
			}
		}
		s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
	}
	// CHECK constraints name their columns in their text
	nt2 := s.Cat().Tables[t.OID]
	for _, con := range cat.TableConstraintDefs(t.OID) {
		if con.Kind != catalog.ConCheck || !slices.Contains(con.Cols, i) {
			continue
		}
		raw, err := analyze.ParseExprText(con.Expr)
		if err != nil {
			return err
		}
		analyze.RenameColumnRefs(raw, old, name)
		nc := *con
		if nc.Expr, err = analyze.DeparseExpr(raw); err != nil {
			return err
		}
		nc.Def, nc.PrettyDef = s.CheckDefsOf(nt2, raw, con)
		s.AddCatOp(&catalog.CatOp{Kind: "setcon", Con: &nc})
	}
	for _, k := range kids {
		if err := s.renameColumn(ec, s.Cat().Tables[k.OID], old, name, true, true); err != nil {
			return err
		}
	}
	return nil
}

// renameConstraint is RENAME CONSTRAINT old TO name: a CHECK or FOREIGN
// KEY in the catalog, a primary key or unique constraint with its index.
func (s *Utility) renameConstraint(ec *expr.EvalCtx, t *catalog.TableDef, old, name string, recurse bool) error {
	cat := s.Cat()
	con, ix := cat.ConstraintNamed(t.OID, old)
	if con == nil && ix == nil {
		for _, c := range cat.InheritedConstraints(t) {
			if c.Name == old {
				return pgerr.New(pgerr.InvalidTableDefinition, "cannot rename inherited constraint \"%s\"", old)
			}
		}
		return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" for table \"%s\" does not exist", old, t.Name)
	}
	if _, taken := cat.ByName[name]; ix != nil && taken {
		// the index is renamed first (RenameRelationInternal)
		return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", name)
	}
	if c, x := cat.ConstraintNamed(t.OID, name); c != nil || x != nil {
		return pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
	}
	if ix != nil {
		if err := s.LockNow(ec, ix.OID, locks.ShareUpdateExclusiveLock); err != nil {
			return err
		}
		nix := *ix
		nix.Name = name
		s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
		return nil
	}
	if con.Kind == catalog.ConCheck && !con.NoInherit && !recurse && len(cat.PartitionChildren(t)) > 0 {
		return pgerr.New(pgerr.InvalidTableDefinition, "inherited constraint \"%s\" must be renamed in child tables too", old)
	}
	nc := *con
	nc.Name = name
	s.AddCatOp(&catalog.CatOp{Kind: "setcon", Con: &nc})
	return nil
}
