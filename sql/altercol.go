package sql

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
)

// ALTER TABLE's column forms: ADD [COLUMN] [IF NOT EXISTS], DROP [COLUMN]
// [IF EXISTS] [CASCADE], ALTER [COLUMN] SET DEFAULT | DROP DEFAULT,
// ALTER [COLUMN] [SET DATA] TYPE [USING], and SET (fillfactor), RESET,
// SET LOGGED | UNLOGGED. Messages, SQLSTATEs and locks are PostgreSQL
// 15's (tablecmds.c): every form takes AccessExclusiveLock on the table
// (SET/RESET of fillfactor ShareUpdateExclusiveLock) and on each partition
// it recurses to; a rewrite (rewrite.go) adds reindex_relation's
// ShareLock on the table and AccessExclusiveLock on its indexes.
//
// Subcommands run in PostgreSQL's passes (AT_PASS_*), so that, as there,
// DROP COLUMN runs before ADD COLUMN whatever their order in the
// statement. Unlike PostgreSQL, which checks new NOT NULL columns and
// rewrites a table once, after all passes (phase 3), lockd checks and
// rewrites at the subcommand that needs it; the results are the same but
// for which error comes first when a statement has several.

// AlterTable passes (PostgreSQL 15's AT_PASS_*).
const (
	passDrop           = 0
	passAlterType      = 1
	passAddCol         = 4
	passColAttrs       = 6
	passAddIndexConstr = 7
	passAddOtherConstr = 9
	passMisc           = 10
)

// compileAlterColumn compiles an ALTER TABLE subcommand other than the
// constraint ones (conddl.go) and ATTACH/DETACH PARTITION (partddl.go),
// returning what runs in which pass and the lock the table needs.
func (s *utility) compileAlterColumn(at *pg.AlterTableStmt, cmd *pg.AlterTableCmd) ([]alterCmd, locks.LockMode, error) {
	recurse := at.Relation.Inh // false: ONLY
	switch cmd.Subtype {
	case pg.AlterTableType_AT_AddColumn:
		return s.compileAddColumn(at, cmd, recurse)
	case pg.AlterTableType_AT_DropColumn:
		name, missingOK, cascade := cmd.Name, cmd.MissingOk, cmd.Behavior == pg.DropBehavior_DROP_CASCADE
		return []alterCmd{{pass: passDrop, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
			return s.dropColumn(ec, t, name, missingOK, cascade, recurse, false)
		}}}, locks.AccessExclusiveLock, nil
	case pg.AlterTableType_AT_ColumnDefault:
		name, raw := cmd.Name, cmd.Def
		var text string
		if raw != nil {
			if err := checkDefaultExpr(raw); err != nil {
				return nil, 0, err
			}
			var err error
			if text, err = deparseExpr(raw); err != nil {
				return nil, 0, err
			}
		}
		pass := passAddOtherConstr
		if raw == nil {
			pass = passDrop
		}
		return []alterCmd{{pass: pass, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
			return s.setColumnDefault(ec, t, name, text, raw != nil, recurse)
		}}}, locks.AccessExclusiveLock, nil
	case pg.AlterTableType_AT_AlterColumnType:
		cd := cmd.GetDef().GetColumnDef()
		if cd == nil {
			return nil, 0, pgerr.NotSupported("this form of ALTER COLUMN TYPE is not supported")
		}
		if cd.CollClause != nil {
			return nil, 0, pgerr.NotSupported("ALTER COLUMN ... TYPE ... COLLATE is not supported")
		}
		typ, err := newAnalyzer(&s.Backend, nil).typeName(cd.TypeName)
		if err != nil {
			return nil, 0, noPosition(err)
		}
		if err := storableType(typ); err != nil {
			return nil, 0, err
		}
		name, using := cmd.Name, cd.RawDefault
		return []alterCmd{{pass: passAlterType, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
			return s.alterColumnType(ec, t, name, typ, using, recurse, false)
		}}}, locks.AccessExclusiveLock, nil
	case pg.AlterTableType_AT_SetRelOptions, pg.AlterTableType_AT_ResetRelOptions:
		ff, err := fillfactorOption(cmd.GetDef().GetList().GetItems(), cmd.Subtype == pg.AlterTableType_AT_ResetRelOptions)
		if err != nil {
			return nil, 0, err
		}
		return []alterCmd{{pass: passMisc, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
			return s.setFillfactor(t, ff)
		}}}, locks.ShareUpdateExclusiveLock, nil
	case pg.AlterTableType_AT_SetLogged, pg.AlterTableType_AT_SetUnLogged:
		unlogged := cmd.Subtype == pg.AlterTableType_AT_SetUnLogged
		return []alterCmd{{pass: passMisc, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
			return s.setPersistence(ec, t, unlogged)
		}}}, locks.AccessExclusiveLock, nil
	}
	return nil, 0, pgerr.NotSupported("ALTER TABLE ... %s is not supported", alterCmdName(cmd))
}

// alterCmdName names a subcommand lockd does not execute, in ALTER
// TABLE's own words.
func alterCmdName(cmd *pg.AlterTableCmd) string {
	switch cmd.Subtype {
	case pg.AlterTableType_AT_SetStatistics:
		return "ALTER COLUMN ... SET STATISTICS"
	case pg.AlterTableType_AT_SetOptions, pg.AlterTableType_AT_ResetOptions:
		return "ALTER COLUMN ... SET | RESET (attribute_option)"
	case pg.AlterTableType_AT_SetStorage:
		return "ALTER COLUMN ... SET STORAGE"
	case pg.AlterTableType_AT_SetCompression:
		return "ALTER COLUMN ... SET COMPRESSION"
	case pg.AlterTableType_AT_AddIdentity, pg.AlterTableType_AT_SetIdentity, pg.AlterTableType_AT_DropIdentity:
		return "ALTER COLUMN ... IDENTITY"
	case pg.AlterTableType_AT_DropExpression:
		return "ALTER COLUMN ... DROP EXPRESSION"
	case pg.AlterTableType_AT_AlterConstraint:
		return "ALTER CONSTRAINT"
	case pg.AlterTableType_AT_ClusterOn, pg.AlterTableType_AT_DropCluster:
		return "CLUSTER ON"
	case pg.AlterTableType_AT_SetAccessMethod:
		return "SET ACCESS METHOD"
	case pg.AlterTableType_AT_SetTableSpace:
		return "SET TABLESPACE"
	case pg.AlterTableType_AT_ChangeOwner:
		return "OWNER TO"
	case pg.AlterTableType_AT_ReplicaIdentity:
		return "REPLICA IDENTITY"
	case pg.AlterTableType_AT_AddInherit, pg.AlterTableType_AT_DropInherit:
		return "INHERIT"
	case pg.AlterTableType_AT_AddOf, pg.AlterTableType_AT_DropOf:
		return "OF"
	case pg.AlterTableType_AT_EnableRowSecurity, pg.AlterTableType_AT_DisableRowSecurity,
		pg.AlterTableType_AT_ForceRowSecurity, pg.AlterTableType_AT_NoForceRowSecurity:
		return "ROW LEVEL SECURITY"
	case pg.AlterTableType_AT_GenericOptions:
		return "OPTIONS"
	}
	name := strings.TrimPrefix(cmd.Subtype.String(), "AT_")
	switch {
	case strings.Contains(name, "Trig"):
		return "ENABLE | DISABLE TRIGGER"
	case strings.Contains(name, "Rule"):
		return "ENABLE | DISABLE RULE"
	}
	return name
}

// storableType refuses the types lockd's tables cannot hold.
func storableType(t Type) error {
	switch t.OID {
	case OIDBool, OIDInt2, OIDInt4, OIDInt8, OIDFloat4, OIDFloat8, OIDNumeric, OIDText, OIDVarchar, OIDBpchar,
		OIDDate, OIDTimestamp, OIDTimestamptz, OIDInterval, OIDOid:
		return nil
	}
	return pgerr.NotSupported("columns of type %s are not supported", t.Name)
}

// checkDefaultExpr is cookDefault's check of what a DEFAULT may contain.
func checkDefaultExpr(n *pg.Node) error {
	var err error
	walkRawNodes(n, func(x *pg.Node) {
		switch {
		case err != nil:
		case x.GetColumnRef() != nil:
			err = pgerr.NotSupported("cannot use column reference in DEFAULT expression")
		case x.GetSubLink() != nil:
			err = pgerr.NotSupported("cannot use subquery in DEFAULT expression")
		}
	})
	return err
}

// compileColumnDefault compiles default text for column c, as cookDefault
// does: 42804 when it cannot be assigned to c's type.
func (s *utility) compileColumnDefault(c *ColumnDef, text string) (expr, error) {
	tree, err := pg.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	a := newAnalyzer(&s.Backend, nil)
	a.aggCtx = "DEFAULT expressions"
	e, err := a.expr(tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val)
	if err != nil {
		return nil, noPosition(err)
	}
	t := c.Type()
	if !isUnknown(e) && !assignable(e.typ(), t) {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" is of type %s but default expression is of type %s", c.Name, t.Name, e.typ().Name).
			WithHint("You will need to rewrite or cast the expression.")
	}
	e, err = a.assignTo(e, c)
	return e, noPosition(err)
}

// rawNullDefault reports whether a DEFAULT clause is NULL, maybe cast:
// PostgreSQL makes no default of it (AddRelationNewConstraints).
func rawNullDefault(n *pg.Node) bool {
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	c := n.GetAConst()
	return c != nil && c.Isnull
}

// isNullConst reports whether a compiled default is the NULL constant.
func isNullConst(e expr) bool {
	c, ok := e.(*constExpr)
	return ok && c.d.Null
}

// --- ADD COLUMN

// addColumnSpec is a compiled ADD COLUMN.
type addColumnSpec struct {
	col         ColumnDef
	seq         []columnSeq // a serial or identity column's sequence (seqcols.go)
	ifNotExists bool
	recurse     bool
}

func (s *utility) compileAddColumn(at *pg.AlterTableStmt, cmd *pg.AlterTableCmd, recurse bool) ([]alterCmd, locks.LockMode, error) {
	cd := cmd.GetDef().GetColumnDef()
	if cd == nil {
		return nil, 0, pgerr.NotSupported("this form of ADD COLUMN is not supported")
	}
	a := newAnalyzer(&s.Backend, nil)
	typ, serial, err := columnType(a, cd.TypeName)
	if err != nil {
		return nil, 0, err
	}
	if err := storableType(typ); err != nil {
		return nil, 0, err
	}
	if cd.CollClause != nil {
		if categoryOf(typ) != catString {
			return nil, 0, posErr(pgerr.New(pgerr.DatatypeMismatch, "collations are not supported by type %s", typ.Name), cd.CollClause.Location)
		}
		return nil, 0, pgerr.NotSupported("COLLATE in column definitions is not supported")
	}
	spec := &addColumnSpec{col: ColumnDef{Name: cd.Colname, TypeOID: typ.OID, TypeMod: typ.Mod, NotNull: cd.IsNotNull},
		ifNotExists: cmd.MissingOk, recurse: recurse}
	var cmds []alterCmd
	name := cd.Colname
	// the column's constraints become subcommands of their own, as
	// transformAlterTableStmt makes them; they are skipped when IF NOT
	// EXISTS skips the column
	later := func(pass int, run func(ec *evalCtx, t *TableDef, as *alterState) error) {
		cmds = append(cmds, alterCmd{pass: pass, run: func(ec *evalCtx, t *TableDef, as *alterState) error {
			if as.skippedCols[name] {
				return nil
			}
			return run(ec, t, as)
		}})
	}
	for _, c := range cd.Constraints {
		con := c.GetConstraint()
		switch con.Contype {
		case pg.ConstrType_CONSTR_NOTNULL:
			spec.col.NotNull = true
		case pg.ConstrType_CONSTR_NULL, pg.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE, pg.ConstrType_CONSTR_ATTR_IMMEDIATE:
		case pg.ConstrType_CONSTR_DEFAULT:
			if err := checkDefaultExpr(con.RawExpr); err != nil {
				return nil, 0, err
			}
			if spec.col.Default, err = deparseDefault(&s.Backend, con.RawExpr); err != nil {
				return nil, 0, err
			}
		case pg.ConstrType_CONSTR_PRIMARY, pg.ConstrType_CONSTR_UNIQUE:
			if err := notDeferrable(con); err != nil {
				return nil, 0, err
			}
			primary, conName := con.Contype == pg.ConstrType_CONSTR_PRIMARY, con.Conname
			if primary {
				spec.col.NotNull = true
			}
			later(passAddIndexConstr, func(ec *evalCtx, t *TableDef, as *alterState) error {
				if primary {
					return s.addIndexConstraint(ec, t, conName, []string{name}, true)
				}
				return s.addUnique(ec, t, conName, []string{name}, &as.indexNames)
			})
		case pg.ConstrType_CONSTR_CHECK:
			con := con
			later(passAddOtherConstr, func(ec *evalCtx, t *TableDef, as *alterState) error {
				_, err := s.addCheck(ec, t, con, &as.checkNames, false)
				return err
			})
		case pg.ConstrType_CONSTR_FOREIGN:
			if err := notDeferrable(con); err != nil {
				return nil, 0, err
			}
			con := con
			later(passAddOtherConstr, func(ec *evalCtx, t *TableDef, as *alterState) error {
				spec := &fkeySpec{con: con, fkCols: []string{name}}
				if err := s.defineForeignKey(ec, t, spec, as.fkNames, false); err != nil {
					return err
				}
				as.fkNames = append(as.fkNames, spec.name)
				return nil
			})
		case pg.ConstrType_CONSTR_IDENTITY: // addColumnSequence
		case pg.ConstrType_CONSTR_GENERATED:
			return nil, 0, pgerr.NotSupported("generated columns are not supported")
		default:
			return nil, 0, pgerr.NotSupported("column constraint %s is not supported yet", strings.TrimPrefix(con.Contype.String(), "CONSTR_"))
		}
	}
	if spec.seq, err = addColumnSequence(nil, cd, &spec.col, serial, at.Relation.Relname, 0); err != nil {
		return nil, 0, err
	}
	cmds = append([]alterCmd{{pass: passAddCol, run: func(ec *evalCtx, t *TableDef, as *alterState) error {
		skipped, err := s.addColumn(ec, t, spec, as, false)
		if skipped {
			if as.skippedCols == nil {
				as.skippedCols = map[string]bool{}
			}
			as.skippedCols[name] = true
		}
		return err
	}}}, cmds...)
	return cmds, locks.AccessExclusiveLock, nil
}

// addColumn adds spec's column to t and, recursing, to its partitions.
// skipped: IF NOT EXISTS found the column there.
func (s *utility) addColumn(ec *evalCtx, t *TableDef, spec *addColumnSpec, as *alterState, recursing bool) (skipped bool, err error) {
	cat := s.cat()
	col := spec.col
	switch {
	case t.Parent != 0 && !recursing:
		return false, pgerr.New(pgerr.WrongObjectType, "cannot add column to a partition")
	case t.Partitioned() && !spec.recurse && len(cat.partitionChildren(t)) > 0:
		return false, pgerr.New(pgerr.InvalidTableDefinition, "column must be added to child tables too")
	case t.colIndex(col.Name) >= 0:
		if spec.ifNotExists {
			s.notice(pgerr.SeverityNotice, pgerr.DuplicateColumn, fmt.Sprintf("column \"%s\" of relation \"%s\" already exists, skipping", col.Name, t.Name))
			return true, nil
		}
		return false, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", col.Name, t.Name)
	case isSystemColumn(col.Name):
		return false, pgerr.New(pgerr.DuplicateColumn, "column name \"%s\" conflicts with a system column name", col.Name)
	case t.natts() >= 1600:
		return false, pgerr.New("54011", "tables can have at most 1600 columns")
	case col.Identity != "" && len(cat.partitionChildren(t)) > 0:
		return false, pgerr.New(pgerr.InvalidTableDefinition, "cannot recursively add identity column to table that has child tables")
	}
	nt := *t
	nt.Cols = append(append([]ColumnDef(nil), t.Cols...), col)
	nc := &nt.Cols[len(nt.Cols)-1]
	if n := t.natts() + 1; n != len(nt.Cols) {
		nc.Attnum = int16(n)
	}
	// a serial or identity column's sequence is made first, as the
	// CREATE SEQUENCE PostgreSQL generates runs first; its nextval is
	// the column's default
	var seqs []ownedSeq
	if len(spec.seq) > 0 {
		list := append([]columnSeq(nil), spec.seq...)
		list[0].col = len(nt.Cols) - 1
		if seqs, err = s.createColumnSequences(ec, &nt, list); err != nil {
			return false, err
		}
		col = *nc
	}
	// The default: evaluated once, it becomes the value rows already in
	// the table read (attmissingval), unless it is volatile — then every
	// row gets its own, in a rewrite.
	var def expr
	var missing Datum = NullDatum
	rewrite := false
	if col.Default != "" {
		if def, err = s.compileColumnDefault(&col, col.Default); err != nil {
			return false, err
		}
		if isNullConst(def) { // DEFAULT NULL makes no default (AddRelationNewConstraints)
			col.Default, nc.Default = "", ""
		}
		if isVolatile(def) {
			rewrite = !t.Partitioned()
		} else if missing, err = def.eval(ec, nil); err != nil {
			return false, err
		}
	}
	if !t.Partitioned() {
		if !missing.Null {
			nc.Missing = encodeMissing(nc, missing)
		}
		if t.RowFormat == 0 {
			rewrite = true // rows of a table made before ADD COLUMN existed record no length
		}
	}
	nt.RowFormat = 1
	if rewrite {
		at := len(nt.Cols) - 1
		if err := s.rewriteTable(ec, t, &nt, func(ec *evalCtx, old, row []Datum) error {
			copy(row, old[:at])
			row[at] = missing
			if def != nil && isVolatile(def) {
				v, err := def.eval(ec, nil)
				if err != nil {
					return err
				}
				row[at] = v
			}
			return nil
		}); err != nil {
			return false, err
		}
	} else {
		if col.NotNull && missing.Null && !t.Partitioned() {
			// checked once every subcommand has run, as PostgreSQL's
			// phase 3 does (a later ADD PRIMARY KEY fails first)
			oid, name := t.OID, col.Name
			as.phase3 = append(as.phase3, func(ec *evalCtx) error {
				if t := s.cat().Tables[oid]; t != nil && t.colIndex(name) >= 0 {
					return s.checkEmptyForNotNull(ec, t, name)
				}
				return nil
			})
		}
		s.addCatOp(&catOp{kind: "settable", table: &nt})
	}
	if err := s.ownColumnSequences(ec, t.OID, seqs); err != nil {
		return false, err
	}
	kid := *spec
	kid.col, kid.seq = col, nil // the partitions' default is the parent's nextval
	for _, k := range s.cat().partitionChildren(s.cat().Tables[t.OID]) {
		if err := s.lockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return false, err
		}
		if _, err := s.addColumn(ec, s.cat().Tables[k.OID], &kid, as, true); err != nil {
			return false, err
		}
	}
	return false, nil
}

// checkEmptyForNotNull: a NOT NULL column added without a default has
// NULL in every row already there (23502 if there is one).
func (s *utility) checkEmptyForNotNull(ec *evalCtx, t *TableDef, col string) error {
	restore := s.txn.UseLatestSnapshot()
	defer restore()
	found := false
	err := s.scanTable(ec, newTableSource(t, t.Name), func([]Datum) error {
		found = true
		return errStopScan
	})
	if err != nil && err != errStopScan {
		return err
	}
	if found {
		return pgerr.New(pgerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", col, t.Name).OnColumn(t.Name, col)
	}
	return nil
}

// --- DROP COLUMN

// dropColumn drops column name of t: the indexes and constraints that
// use it go with it; foreign keys of other tables that reference it need
// CASCADE. The rows are left as they are (rowlayout.go).
func (s *utility) dropColumn(ec *evalCtx, t *TableDef, name string, missingOK, cascade, recurse, recursing bool) error {
	if isSystemColumn(name) {
		return pgerr.NotSupported("cannot drop system column \"%s\"", name)
	}
	i := t.colIndex(name)
	cat := s.cat()
	switch {
	case i < 0 && missingOK && !recursing:
		s.notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("column \"%s\" of relation \"%s\" does not exist, skipping", name, t.Name))
		return nil
	case i < 0:
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
	case t.Parent != 0 && !recursing:
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop inherited column \"%s\"", name)
	case t.Partitioned() && slices.Contains(t.PartKey, i):
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop column \"%s\" because it is part of the partition key of relation \"%s\"", name, t.Name)
	case t.Partitioned() && !recurse && len(cat.partitionChildren(t)) > 0:
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop column from only the partitioned table when partitions exist").
			WithHint("Do not specify the ONLY keyword.")
	}
	// foreign keys referencing the column: CASCADE or refuse
	// (reportDependentObjects); a foreign key on the column itself goes
	// with it
	var deps []*ConstraintDef
	for _, con := range cat.referencingKeys(t.OID) {
		root := cat.rootConstraint(con) // a clone stands for its foreign key (fkpart.go)
		if slices.Contains(con.RefCols, i) && !(root.Table == t.OID && slices.Contains(root.Cols, i)) && !slices.Contains(deps, root) {
			deps = append(deps, root)
		}
	}
	what := fmt.Sprintf("column %s of table %s", name, t.Name)
	if err := s.cascadeOrRefuse(ec, what, deps, what, cascade); err != nil {
		return err
	}
	for _, ix := range s.cat().tableIndexes(t) {
		if slices.Contains(ix.Cols, i) {
			if err := s.dropIndexWithColumn(ec, ix); err != nil {
				return err
			}
		}
	}
	for _, con := range s.cat().tableConstraintDefs(t.OID) {
		switch {
		case con.isClone() || !slices.Contains(con.Cols, i):
		case con.Kind == conForeign:
			if err := s.dropForeignKey(ec, con); err != nil { // with its clones (fkpart.go)
				return err
			}
		default:
			s.addCatOp(&catOp{kind: "dropcon", con: con})
		}
	}
	// the sequences the column owns (serial, identity) go with it
	var owned []uint32
	for _, q := range s.cat().ownedSequences(t.OID) {
		if q.OwnedCol == i+1 {
			if err := s.lockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
			owned = append(owned, q.OID)
		}
	}
	if err := s.dropSequences(ec, owned, map[uint32]bool{t.OID: true}, cascade, what); err != nil { // seqcols.go
		return err
	}
	cat = s.cat()
	t = cat.Tables[t.OID]
	nt := *t
	nt.Cols = append([]ColumnDef(nil), t.Cols...)
	nt.numberColumns()
	c := nt.Cols[i]
	nt.Dropped = append(append([]DroppedColumn(nil), t.Dropped...), DroppedColumn{Attnum: c.Attnum, TypeOID: c.TypeOID, TypeMod: c.TypeMod})
	nt.Cols = slices.Delete(nt.Cols, i, i+1)
	shift := func(cols []int) []int {
		if cols == nil {
			return nil
		}
		out := make([]int, len(cols))
		for k, c := range cols {
			if out[k] = c; c > i {
				out[k] = c - 1
			}
		}
		return out
	}
	nt.PartKey = shift(t.PartKey)
	s.addCatOp(&catOp{kind: "settable", table: &nt})
	for _, ix := range cat.tableIndexes(t) {
		nix := *ix
		nix.Cols = shift(ix.Cols)
		s.addCatOp(&catOp{kind: "setindex", index: &nix})
	}
	for _, con := range cat.tableConstraintDefs(t.OID) {
		nc := *con
		nc.Cols = shift(con.Cols)
		if con.RefTable == t.OID {
			nc.RefCols = shift(con.RefCols)
		}
		s.addCatOp(&catOp{kind: "setcon", con: &nc})
	}
	for _, con := range cat.referencingKeys(t.OID) {
		if con.Table == t.OID {
			continue // done above
		}
		nc := *con
		nc.RefCols = shift(con.RefCols)
		s.addCatOp(&catOp{kind: "setcon", con: &nc})
	}
	for _, q := range cat.ownedSequences(t.OID) {
		if q.OwnedCol > i+1 { // OwnedCol is a column position + 1
			nq := *q
			nq.OwnedCol--
			s.addCatOp(&catOp{kind: "setseq", seq: &nq})
		}
	}
	for _, k := range s.cat().partitionChildren(s.cat().Tables[t.OID]) {
		if err := s.lockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.dropColumn(ec, s.cat().Tables[k.OID], name, missingOK, cascade, true, true); err != nil {
			return err
		}
	}
	return nil
}

// dropIndexWithColumn drops an index (and a partitioned index's tree)
// whose column is dropped: an automatic dependency, whatever the index
// implements.
func (s *utility) dropIndexWithColumn(ec *evalCtx, ix *IndexDef) error {
	if err := s.lockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	for _, child := range s.childIndexes(ix) {
		if err := s.lockNow(ec, child.Table, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.dropIndexWithColumn(ec, child); err != nil {
			return err
		}
	}
	s.addCatOp(&catOp{kind: "dropindex", oid: ix.OID, oldFile: ix.RelFile, index: ix})
	return nil
}

// --- SET DEFAULT, DROP DEFAULT

// setColumnDefault is ALTER COLUMN SET DEFAULT text (set) or DROP DEFAULT, on t
// and, unless ONLY, its partitions.
func (s *utility) setColumnDefault(ec *evalCtx, t *TableDef, name, text string, set, recurse bool) error {
	if isSystemColumn(name) {
		return pgerr.NotSupported("cannot alter system column \"%s\"", name)
	}
	i := t.colIndex(name)
	if i < 0 {
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
	}
	if t.Cols[i].Identity != "" {
		err := pgerr.New(pgerr.SyntaxError, "column \"%s\" of relation \"%s\" is an identity column", name, t.Name)
		if !set {
			err = err.WithHint("Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead.")
		}
		return err
	}
	if set {
		def, err := s.compileColumnDefault(&t.Cols[i], text)
		if err != nil {
			return err
		}
		if isNullConst(def) { // SET DEFAULT NULL removes the default, as DROP DEFAULT
			text = ""
		}
	}
	nt := *t
	nt.Cols = append([]ColumnDef(nil), t.Cols...)
	nt.Cols[i].Default = text
	s.addCatOp(&catOp{kind: "settable", table: &nt})
	if !recurse {
		return nil
	}
	for _, k := range s.cat().partitionChildren(s.cat().Tables[t.OID]) {
		if err := s.lockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.setColumnDefault(ec, s.cat().Tables[k.OID], name, text, set, true); err != nil {
			return err
		}
	}
	return nil
}

// --- SET (fillfactor), RESET, SET LOGGED | UNLOGGED

// fillfactorOption reads the storage parameters of SET (fillfactor = n),
// RESET (fillfactor) or CREATE TABLE AS ... WITH (fillfactor = n): the
// new fillfactor, 0 for the default. Other storage parameters are 0A000,
// names PostgreSQL does not know 22023.
func fillfactorOption(opts []*pg.Node, reset bool) (int, error) {
	ff := 0
	for _, o := range opts {
		de := o.GetDefElem()
		switch {
		case de.Defnamespace != "":
			return 0, pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter namespace \"%s\"", de.Defnamespace)
		case de.Defname == "fillfactor":
			if reset {
				ff = 0
				continue
			}
			v, err := defInt(de)
			if err != nil || v < 10 || v > 100 {
				return 0, pgerr.New(pgerr.InvalidParameterValue, "value %s out of bounds for option \"fillfactor\"", defString(de)).
					WithDetail("Valid values are between \"10\" and \"100\".")
			}
			ff = v
		case slices.Contains(heapRelOptions, de.Defname):
			return 0, pgerr.NotSupported("storage parameter \"%s\" is not supported", de.Defname)
		default:
			return 0, pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter \"%s\"", de.Defname)
		}
	}
	return ff, nil
}

// heapRelOptions are the storage parameters PostgreSQL 15 knows for a
// table besides fillfactor.
var heapRelOptions = []string{"autovacuum_enabled", "autovacuum_vacuum_threshold", "autovacuum_vacuum_insert_threshold",
	"autovacuum_analyze_threshold", "autovacuum_vacuum_scale_factor", "autovacuum_vacuum_insert_scale_factor",
	"autovacuum_analyze_scale_factor", "autovacuum_vacuum_cost_delay", "autovacuum_vacuum_cost_limit",
	"autovacuum_freeze_min_age", "autovacuum_freeze_max_age", "autovacuum_freeze_table_age",
	"autovacuum_multixact_freeze_min_age", "autovacuum_multixact_freeze_max_age", "autovacuum_multixact_freeze_table_age",
	"log_autovacuum_min_duration", "toast_tuple_target", "user_catalog_table", "parallel_workers",
	"vacuum_index_cleanup", "vacuum_truncate"}

// setFillfactor is SET (fillfactor = n) / RESET (fillfactor). A
// partitioned table has no storage parameters (22023, as PostgreSQL's
// partitioned reloptions know none).
func (s *utility) setFillfactor(t *TableDef, ff int) error {
	if t.Partitioned() {
		return pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter \"fillfactor\"")
	}
	nt := *t
	nt.Fillfactor = ff
	s.addCatOp(&catOp{kind: "settable", table: &nt})
	return nil
}

// setPersistence is SET LOGGED | UNLOGGED: a rewrite into new storage,
// as PostgreSQL makes one (nothing happens for a table already so, or a
// partitioned table). lockd writes no WAL either way; the flag is what
// pg_class.relpersistence and psql show.
func (s *utility) setPersistence(ec *evalCtx, t *TableDef, unlogged bool) error {
	if t.Partitioned() || t.Unlogged == unlogged {
		return nil
	}
	// ATPrepChangePersistence: permanent tables may reference only
	// permanent ones (self-references aside)
	cat := s.cat()
	if unlogged {
		for _, con := range cat.referencingKeys(t.OID) {
			if other := cat.Tables[con.Table]; other != nil && con.Table != t.OID && !other.Unlogged {
				return pgerr.New(pgerr.InvalidTableDefinition, "could not change table \"%s\" to unlogged because it references logged table \"%s\"", t.Name, other.Name).
					OnConstraint(t.Name, con.Name)
			}
		}
	} else {
		for _, con := range cat.tableConstraintDefs(t.OID) {
			if other := cat.Tables[con.RefTable]; con.Kind == conForeign && other != nil && con.RefTable != t.OID && other.Unlogged {
				return pgerr.New(pgerr.InvalidTableDefinition, "could not change table \"%s\" to logged because it references unlogged table \"%s\"", t.Name, other.Name).
					OnConstraint(t.Name, con.Name)
			}
		}
	}
	nt := *t
	nt.Unlogged = unlogged
	return s.rewriteTable(ec, t, &nt, func(_ *evalCtx, old, row []Datum) error {
		copy(row, old)
		return nil
	})
}

// prettyDefault is pg_get_expr(adbin, adrelid, true) of column c's
// default, as ruleutils prints the analysed expression — the literal
// typed ('x'::text), coerced to the column's type with the assignment
// cast hidden — when checkdeparse.go models it.
func prettyDefault(s *Backend, c *ColumnDef) (string, bool) {
	raw, err := parseExprText(c.Default)
	if err != nil || checkDefaultExpr(raw) != nil {
		return "", false
	}
	a := newExprAnalyzer(s, nil) // a default reads no column
	x, err := a.deparseTree(raw)
	if err != nil {
		return "", false
	}
	// coerce_to_target_type: to the type, then the length coercion of its
	// typmod (both hidden, as implicit casts are)
	t := c.Type()
	base := t
	base.Mod = -1
	if x = a.treeCoerce(x, base, true); t.Mod >= 0 {
		x = &treeNode{kind: tnCast, t: t, args: []*treeNode{x}, implicit: true, byFunc: true}
	}
	return printTree(x, true), true
}

// alterWrongKind is ATWrongRelkindError for ALTER TABLE of an index or a
// sequence with subcommand sub, or nil when rv names neither.
func (s *utility) alterWrongKind(rv *pg.RangeVar, sub pg.AlterTableType) error {
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return nil
	}
	kind := s.cat().relationKind(rv.Relname)
	if kind != "index" && kind != "sequence" {
		return nil
	}
	action, ok := map[pg.AlterTableType]string{
		pg.AlterTableType_AT_AddColumn:          "ADD COLUMN",
		pg.AlterTableType_AT_DropColumn:         "DROP COLUMN",
		pg.AlterTableType_AT_ColumnDefault:      "ALTER COLUMN ... SET DEFAULT",
		pg.AlterTableType_AT_AlterColumnType:    "ALTER COLUMN ... SET DATA TYPE",
		pg.AlterTableType_AT_SetNotNull:         "ALTER COLUMN ... SET NOT NULL",
		pg.AlterTableType_AT_DropNotNull:        "ALTER COLUMN ... DROP NOT NULL",
		pg.AlterTableType_AT_AddConstraint:      "ADD CONSTRAINT",
		pg.AlterTableType_AT_DropConstraint:     "DROP CONSTRAINT",
		pg.AlterTableType_AT_ValidateConstraint: "VALIDATE CONSTRAINT",
		pg.AlterTableType_AT_SetLogged:          "SET LOGGED",
		pg.AlterTableType_AT_SetUnLogged:        "SET UNLOGGED",
	}[sub]
	if !ok {
		return pgerr.NotSupported("ALTER TABLE ... %s of %s \"%s\" is not supported", alterCmdName(&pg.AlterTableCmd{Subtype: sub}), kind, rv.Relname)
	}
	plural := map[string]string{"index": "indexes", "sequence": "sequences"}[kind]
	return pgerr.New(pgerr.WrongObjectType, "ALTER action %s cannot be performed on relation \"%s\"", action, rv.Relname).
		WithDetail("This operation is not supported for " + plural + ".")
}
