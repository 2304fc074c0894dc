package commands

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/exec"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// Defining a FOREIGN KEY (ATAddForeignKeyConstraint): the referenced
// table and columns — its primary key when none are named — must be
// covered by a unique index of that table (in any column order), the
// column types must be comparable with the index's equality, and the
// rows already in the table must all reference something (unless NOT
// VALID or the table is new). The locks are PostgreSQL 15's, as pg_locks
// showed them: ShareRowExclusiveLock on both tables (the referencing one
// through ALTER TABLE), AccessShareLock on both, and for the validating
// scan RowShareLock on the referenced table and AccessShareLock on each
// table's indexes (the planner's locks of RI_Initial_Check's join).

// SQLSTATEs of constraint DDL.
const (
	codeInvalidForeignKey = "42830"
	codeDependentObjects  = "2BP01"
)

// fkeySpec is a FOREIGN KEY clause of CREATE TABLE or ALTER TABLE.
type fkeySpec struct {
	con     *pg.Constraint
	fkCols  []string // the referencing columns (a column constraint: its column)
	name    string   // chosen when the constraint is defined
	created *catalog.ConstraintDef
}

// defineForeignKey makes the constraint of spec on t. newTable: t was
// created by this statement, so there is nothing to validate.
func (s *Utility) defineForeignKey(ec *expr.EvalCtx, t *catalog.TableDef, spec *fkeySpec, others []string, newTable bool) error {
	con := spec.con
	cat := s.Cat()
	name := con.Conname
	if name != "" {
		if c, ix := cat.ConstraintNamed(t.OID, name); c != nil || ix != nil {
			return pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
		}
	} else {
		name = cat.ChooseConstraintName(t.Name, catalog.NameAddition(spec.fkCols), "fkey", others)
	}
	spec.name = name
	if len(con.FkDelSetCols) > 0 {
		return pgerr.NotSupported("ON DELETE SET NULL or SET DEFAULT with a column list is not supported")
	}
	rt, err := s.ResolveTable(con.Pktable)
	if err != nil {
		return NoPosition(err)
	}
	if err := s.LockNow(ec, rt.OID, locks.ShareRowExclusiveLock); err != nil {
		return err
	}
	if rt = s.Cat().Tables[rt.OID]; rt == nil {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", con.Pktable.Relname)
	}
	if !t.Unlogged && rt.Unlogged {
		return pgerr.New(pgerr.InvalidTableDefinition, "constraints on permanent tables may reference only permanent tables")
	}
	cols, err := fkColumns(t, spec.fkCols)
	if err != nil {
		return err
	}
	var refCols []int
	var ix *catalog.IndexDef
	if len(con.PkAttrs) == 0 {
		for _, x := range s.Cat().TableIndexes(rt) {
			if x.Primary {
				ix = x
			}
		}
		if ix == nil {
			return pgerr.New(pgerr.UndefinedObject, "there is no primary key for referenced table \"%s\"", rt.Name)
		}
		refCols = append(refCols, ix.Cols...)
	} else {
		var names []string
		for _, n := range con.PkAttrs {
			names = append(names, analyze.NodeName(n))
		}
		if refCols, err = fkColumns(rt, names); err != nil {
			return err
		}
		for i, c := range refCols {
			if slices.Contains(refCols[:i], c) {
				return pgerr.New(codeInvalidForeignKey, "foreign key referenced-columns list must not contain duplicates")
			}
		}
		for _, x := range s.Cat().TableIndexes(rt) {
			if x.Unique && len(x.Cols) == len(refCols) && sameColumnSet(x.Cols, refCols) {
				ix = x
				break
			}
		}
		if ix == nil {
			return pgerr.New(codeInvalidForeignKey, "there is no unique constraint matching given keys for referenced table \"%s\"", rt.Name)
		}
	}
	if len(cols) != len(refCols) {
		return pgerr.New(codeInvalidForeignKey, "number of referencing and referenced columns for foreign key disagree")
	}
	for i := range cols {
		fc, pc := &t.Cols[cols[i]], &rt.Cols[refCols[i]]
		if !fkTypesCompatible(fc.Type(), pc.Type()) {
			return pgerr.New(pgerr.DatatypeMismatch, "foreign key constraint \"%s\" cannot be implemented", name).
				WithDetail(fmt.Sprintf("Key columns \"%s\" and \"%s\" are of incompatible types: %s and %s.",
					fc.Name, pc.Name, types.FormatType(fc.TypeOID, -1), types.FormatType(pc.TypeOID, -1)))
		}
	}
	match := byte(catalog.FkMatchSimpl)
	if con.FkMatchtype == "f" {
		match = catalog.FkMatchFull
	}
	def := &catalog.ConstraintDef{Name: name, Kind: catalog.ConForeign, Table: t.OID, Cols: cols, RefTable: rt.OID, RefCols: refCols,
		RefIndex: ix.OID, OnUpdate: fkAction(con.FkUpdAction), OnDelete: fkAction(con.FkDelAction), Match: match,
		NotValid: con.SkipValidation && !newTable}
	// the AccessShareLocks PostgreSQL 15 holds on both tables afterwards
	for _, oid := range []uint32{t.OID, rt.OID} {
		if err := s.LockNow(ec, oid, locks.AccessShareLock); err != nil {
			return err
		}
	}
	def.OID = s.Catalog.AllocOID()
	s.AddCatOp(&catalog.CatOp{Kind: "addcon", Con: def})
	spec.created = def
	// a partitioned referenced table: a clone for each partition (foreignkeypart.go)
	if err := s.addReferencedClones(ec, def); err != nil {
		return err
	}
	if newTable || def.NotValid {
		return nil
	}
	return s.validateForeignKey(ec, s.Cat().Tables[t.OID], def)
}

func fkAction(a string) byte {
	if a == "" {
		return catalog.FkNoAction
	}
	return a[0]
}

// noPosition drops the cursor position from a lookup error: PostgreSQL's
// RangeVarGetRelid errors in DDL carry none.
func NoPosition(err error) error {
	if pe, ok := err.(*pgerr.Error); ok {
		pe.Position = 0
	}
	return err
}

// fkColumns resolves the column names of a foreign key.
func fkColumns(t *catalog.TableDef, names []string) ([]int, error) {
	var out []int
	for _, n := range names {
		i := t.ColIndex(n)
		if i < 0 {
			return nil, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" referenced in foreign key constraint does not exist", n)
		}
		out = append(out, i)
	}
	return out, nil
}

func sameColumnSet(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// fkTypesCompatible: the referenced type's btree operator family compares
// it with the referencing type, directly (the integer, float, string and
// datetime families) or after an implicit cast of the referencing value.
func fkTypesCompatible(fk, pk types.Type) bool {
	if fk.OID == pk.OID {
		return true
	}
	family := func(o uint32) int {
		switch o {
		case types.OIDInt2, types.OIDInt4, types.OIDInt8:
			return 1
		case types.OIDFloat4, types.OIDFloat8:
			return 2
		case types.OIDText, types.OIDVarchar, types.OIDBpchar:
			return 3
		case types.OIDDate, types.OIDTimestamp, types.OIDTimestamptz:
			return 4
		}
		return 0
	}
	if f := family(fk.OID); f != 0 && f == family(pk.OID) {
		return true
	}
	return analyze.ImplicitCast(fk, pk)
}

// validateForeignKey checks every row of t (each leaf partition) against
// the new constraint (RI_Initial_Check): no row locks, the tables being
// held in ShareRowExclusiveLock.
func (s *Utility) validateForeignKey(ec *expr.EvalCtx, t *catalog.TableDef, con *catalog.ConstraintDef) error {
	cat := s.Cat()
	rt := cat.Tables[con.RefTable]
	if err := s.LockNow(ec, rt.OID, locks.RowShareLock); err != nil {
		return err
	}
	// the join's planner locks: the referenced table (a partitioned one
	// with all its partitions, foreignkeypart.go) and its indexes, then those of
	// the referencing table's leaves
	if err := s.LockTree(ec, rt, locks.AccessShareLock); err != nil {
		return err
	}
	leaves := s.LeafTables(t)
	for _, tab := range leaves {
		for _, ix := range cat.TableIndexes(tab) {
			if err := s.LockNow(ec, ix.OID, locks.AccessShareLock); err != nil {
				return err
			}
		}
	}
	for _, leaf := range leaves {
		if err := s.LockNow(ec, leaf.OID, locks.AccessShareLock); err != nil {
			return err
		}
	}
	fk, err := s.NewFKRef(con)
	if err != nil {
		return err
	}
	vals := make([]types.Datum, len(con.Cols))
	var last []byte
	for _, leaf := range leaves {
		var bad error
		err := s.ScanTableTIDs(ec, plan.NewTableSource(leaf, leaf.Name), func(_ storage.TID, row []types.Datum) error {
			nulls := 0
			for i, c := range con.Cols {
				vals[i] = row[c]
				if row[c].Null {
					nulls++
				}
			}
			switch {
			case nulls == len(vals):
				return nil
			case nulls > 0:
				if con.Match == catalog.FkMatchFull {
					bad = exec.MatchFullError(leaf, con)
					return expr.ErrStopScan
				}
				return nil
			}
			key, ok := fk.PkKey(ec, vals, fk.FkTypes)
			if ok && last != nil && string(key) == string(last) {
				return nil // the same key as the row before (pgbench_accounts.bid)
			}
			found, err := s.PkVisible(ec, fk, ok)
			if err != nil {
				return err
			}
			if !found {
				bad = fk.NotPresent(leaf, vals)
				return expr.ErrStopScan
			}
			last = append(last[:0], key...)
			return nil
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
