package commands

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// ALTER TABLE's column forms: ADD [COLUMN] [IF NOT EXISTS], DROP [COLUMN]
// [IF EXISTS] [CASCADE], ALTER [COLUMN] SET DEFAULT | DROP DEFAULT,
// ALTER [COLUMN] [SET DATA] TYPE [USING], and SET (fillfactor), RESET,
// SET LOGGED | UNLOGGED. Messages, SQLSTATEs and locks are PostgreSQL
// 15's (tablecmds.c): every form takes AccessExclusiveLock on the table
// (SET/RESET of fillfactor ShareUpdateExclusiveLock) and on each partition
// it recurses to; a rewrite (sql/exec/rewrite.go) adds reindex_relation's
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
// constraint ones (constraint.go) and ATTACH/DETACH PARTITION (partition.go),
// returning what runs in which pass and the lock the table needs.
func (s *Utility) compileAlterColumn(at *pg.AlterTableStmt, cmd *pg.AlterTableCmd) ([]alterCmd, locks.LockMode, error) {
	recurse := at.Relation.Inh // false: ONLY
	switch cmd.Subtype {
	case pg.AlterTableType_AT_AddColumn:
		return s.compileAddColumn(at, cmd, recurse)
	case pg.AlterTableType_AT_DropColumn:
		name, missingOK, cascade := cmd.Name, cmd.MissingOk, cmd.Behavior == pg.DropBehavior_DROP_CASCADE
		return []alterCmd{{pass: passDrop, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
			return s.dropColumn(ec, t, name, missingOK, cascade, recurse, false)
		}}}, locks.AccessExclusiveLock, nil
	case pg.AlterTableType_AT_ColumnDefault:
		name, raw := cmd.Name, cmd.Def
		var text string
		if raw != nil {
			if err := analyze.CheckDefaultExpr(raw); err != nil {
				return nil, 0, err
			}
			var err error
			if text, err = analyze.DeparseExpr(raw); err != nil {
				return nil, 0, err
			}
		}
		pass := passAddOtherConstr
		if raw == nil {
			pass = passDrop
		}
		return []alterCmd{{pass: pass, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
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
		typ, err := plan.NewAnalyzer(&s.Backend, nil).TypeName(cd.TypeName)
		if err != nil {
			return nil, 0, NoPosition(err)
		}
		if err := storableType(typ); err != nil {
			return nil, 0, err
		}
		name, using := cmd.Name, cd.RawDefault
		return []alterCmd{{pass: passAlterType, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
			return s.alterColumnType(ec, t, name, typ, using, recurse, false)
		}}}, locks.AccessExclusiveLock, nil
	case pg.AlterTableType_AT_SetRelOptions, pg.AlterTableType_AT_ResetRelOptions:
		ff, err := fillfactorOption(cmd.GetDef().GetList().GetItems(), cmd.Subtype == pg.AlterTableType_AT_ResetRelOptions)
		if err != nil {
			return nil, 0, err
		}
		return []alterCmd{{pass: passMisc, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
			return s.setFillfactor(t, ff)
		}}}, locks.ShareUpdateExclusiveLock, nil
	case pg.AlterTableType_AT_SetStatistics:
		if cmd.Name == "" {
			return nil, 0, pgerr.NotSupported("ALTER TABLE ... ALTER COLUMN number ... SET STATISTICS is not supported")
		}
		n := cmd.GetDef().GetInteger()
		if n == nil {
			return nil, 0, pgerr.NotSupported("this form of SET STATISTICS is not supported")
		}
		name, target := cmd.Name, int(n.Ival)
		if target < -1 {
			return nil, 0, pgerr.New(pgerr.InvalidParameterValue, "statistics target %d is too low", target)
		}
		return []alterCmd{{pass: passMisc, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
			return s.setStatistics(ec, t, name, target, recurse)
		}}}, locks.ShareUpdateExclusiveLock, nil
	case pg.AlterTableType_AT_SetLogged, pg.AlterTableType_AT_SetUnLogged:
		unlogged := cmd.Subtype == pg.AlterTableType_AT_SetUnLogged
		return []alterCmd{{pass: passMisc, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
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
func storableType(t types.Type) error {
	switch t.OID {
	case types.OIDBool, types.OIDInt2, types.OIDInt4, types.OIDInt8, types.OIDFloat4, types.OIDFloat8, types.OIDNumeric, types.OIDText, types.OIDVarchar, types.OIDBpchar,
		types.OIDDate, types.OIDTimestamp, types.OIDTimestamptz, types.OIDInterval, types.OIDOid:
		return nil
	}
	return pgerr.NotSupported("columns of type %s are not supported", t.Name)
}

// compileColumnDefault compiles default text for column c, as cookDefault
// does: 42804 when it cannot be assigned to c's type.
func (s *Utility) compileColumnDefault(c *catalog.ColumnDef, text string) (expr.Expr, error) {
	tree, err := pg.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	a := plan.NewAnalyzer(&s.Backend, nil)
	a.AggCtx = "DEFAULT expressions"
	e, err := a.Expr(tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val)
	if err != nil {
		return nil, NoPosition(err)
	}
	t := c.Type()
	if !analyze.IsUnknown(e) && !analyze.Assignable(e.Type(), t) {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" is of type %s but default expression is of type %s", c.Name, t.Name, e.Type().Name).
			WithHint("You will need to rewrite or cast the expression.")
	}
	e, err = a.AssignTo(e, c)
	return e, NoPosition(err)
}

// isNullConst reports whether a compiled default is the NULL constant.
func isNullConst(e expr.Expr) bool {
	c, ok := e.(*expr.ConstExpr)
	return ok && c.D.Null
}

// --- ADD COLUMN

// addColumnSpec is a compiled ADD COLUMN.
type addColumnSpec struct {
	col         catalog.ColumnDef
	seq         []columnSeq // a serial or identity column's sequence (columnsequences.go)
	ifNotExists bool
	recurse     bool
}

func (s *Utility) compileAddColumn(at *pg.AlterTableStmt, cmd *pg.AlterTableCmd, recurse bool) ([]alterCmd, locks.LockMode, error) {
	cd := cmd.GetDef().GetColumnDef()
	if cd == nil {
		return nil, 0, pgerr.NotSupported("this form of ADD COLUMN is not supported")
	}
	a := plan.NewAnalyzer(&s.Backend, nil)
	typ, serial, err := columnType(a, cd.TypeName)
	if err != nil {
		return nil, 0, err
	}
	if err := storableType(typ); err != nil {
		return nil, 0, err
	}
	if cd.CollClause != nil {
		if types.CategoryOf(typ) != types.CatString {
			return nil, 0, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "collations are not supported by type %s", typ.Name), cd.CollClause.Location)
		}
		return nil, 0, pgerr.NotSupported("COLLATE in column definitions is not supported")
	}
	spec := &addColumnSpec{col: catalog.ColumnDef{Name: cd.Colname, TypeOID: typ.OID, TypeMod: typ.Mod, NotNull: cd.IsNotNull},
		ifNotExists: cmd.MissingOk, recurse: recurse}
	var cmds []alterCmd
	name := cd.Colname
	// the column's constraints become subcommands of their own, as
	// transformAlterTableStmt makes them; they are skipped when IF NOT
	// EXISTS skips the column
	later := func(pass int, run func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error) {
		cmds = append(cmds, alterCmd{pass: pass, run: func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
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
			if err := analyze.CheckDefaultExpr(con.RawExpr); err != nil {
				return nil, 0, err
			}
			if spec.col.Default, err = analyze.DeparseDefault(&s.Backend, con.RawExpr); err != nil {
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
			later(passAddIndexConstr, func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
				if primary {
					return s.addIndexConstraint(ec, t, conName, []string{name}, true)
				}
				return s.addUnique(ec, t, conName, []string{name}, &as.indexNames)
			})
		case pg.ConstrType_CONSTR_CHECK:
			con := con
			later(passAddOtherConstr, func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
				_, err := s.addCheck(ec, t, con, &as.checkNames, false)
				return err
			})
		case pg.ConstrType_CONSTR_FOREIGN:
			if err := notDeferrable(con); err != nil {
				return nil, 0, err
			}
			con := con
			later(passAddOtherConstr, func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
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
	cmds = append([]alterCmd{{pass: passAddCol, run: func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
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
func (s *Utility) addColumn(ec *expr.EvalCtx, t *catalog.TableDef, spec *addColumnSpec, as *alterState, recursing bool) (skipped bool, err error) {
	cat := s.Cat()
	col := spec.col
	switch {
	case t.Parent != 0 && !recursing:
		return false, pgerr.New(pgerr.WrongObjectType, "cannot add column to a partition")
	case t.Partitioned() && !spec.recurse && len(cat.PartitionChildren(t)) > 0:
		return false, pgerr.New(pgerr.InvalidTableDefinition, "column must be added to child tables too")
	case t.ColIndex(col.Name) >= 0:
		if spec.ifNotExists {
			s.Notice(pgerr.SeverityNotice, pgerr.DuplicateColumn, fmt.Sprintf("column \"%s\" of relation \"%s\" already exists, skipping", col.Name, t.Name))
			return true, nil
		}
		return false, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", col.Name, t.Name)
	case plan.IsSystemColumn(col.Name):
		return false, pgerr.New(pgerr.DuplicateColumn, "column name \"%s\" conflicts with a system column name", col.Name)
	case t.Natts() >= 1600:
		return false, pgerr.New("54011", "tables can have at most 1600 columns")
	case col.Identity != "" && len(cat.PartitionChildren(t)) > 0:
		return false, pgerr.New(pgerr.InvalidTableDefinition, "cannot recursively add identity column to table that has child tables")
	}
	nt := *t
	nt.Cols = append(append([]catalog.ColumnDef(nil), t.Cols...), col)
	nc := &nt.Cols[len(nt.Cols)-1]
	if n := t.Natts() + 1; n != len(nt.Cols) {
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
	var def expr.Expr
	var missing types.Datum = types.NullDatum
	rewrite := false
	if col.Default != "" {
		if def, err = s.compileColumnDefault(&col, col.Default); err != nil {
			return false, err
		}
		if isNullConst(def) { // DEFAULT NULL makes no default (AddRelationNewConstraints)
			col.Default, nc.Default = "", ""
		}
		if expr.IsVolatile(def) {
			rewrite = !t.Partitioned()
		} else if missing, err = def.Eval(ec, nil); err != nil {
			return false, err
		}
	}
	if !t.Partitioned() {
		if !missing.Null {
			nc.Missing = catalog.EncodeMissing(nc, missing)
		}
		if t.RowFormat == 0 {
			rewrite = true // rows of a table made before ADD COLUMN existed record no length
		}
	}
	nt.RowFormat = 1
	if rewrite {
		at := len(nt.Cols) - 1
		if err := s.RewriteTable(ec, t, &nt, func(ec *expr.EvalCtx, old, row []types.Datum) error {
			copy(row, old[:at])
			row[at] = missing
			if def != nil && expr.IsVolatile(def) {
				v, err := def.Eval(ec, nil)
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
			as.phase3 = append(as.phase3, func(ec *expr.EvalCtx) error {
				if t := s.Cat().Tables[oid]; t != nil && t.ColIndex(name) >= 0 {
					return s.checkEmptyForNotNull(ec, t, name)
				}
				return nil
			})
		}
		s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	}
	if err := s.ownColumnSequences(ec, t.OID, seqs); err != nil {
		return false, err
	}
	kid := *spec
	kid.col, kid.seq = col, nil // the partitions' default is the parent's nextval
	for _, k := range s.Cat().PartitionChildren(s.Cat().Tables[t.OID]) {
		if err := s.LockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return false, err
		}
		if _, err := s.addColumn(ec, s.Cat().Tables[k.OID], &kid, as, true); err != nil {
			return false, err
		}
	}
	return false, nil
}

// checkEmptyForNotNull: a NOT NULL column added without a default has
// NULL in every row already there (23502 if there is one).
func (s *Utility) checkEmptyForNotNull(ec *expr.EvalCtx, t *catalog.TableDef, col string) error {
	restore := s.Txn.UseLatestSnapshot()
	defer restore()
	found := false
	err := s.ScanTable(ec, plan.NewTableSource(t, t.Name), func([]types.Datum) error {
		found = true
		return expr.ErrStopScan
	})
	if err != nil && err != expr.ErrStopScan {
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
// CASCADE. The rows are left as they are (sql/catalog/rowlayout.go).
func (s *Utility) dropColumn(ec *expr.EvalCtx, t *catalog.TableDef, name string, missingOK, cascade, recurse, recursing bool) error {
	if plan.IsSystemColumn(name) {
		return pgerr.NotSupported("cannot drop system column \"%s\"", name)
	}
	i := t.ColIndex(name)
	cat := s.Cat()
	switch {
	case i < 0 && missingOK && !recursing:
		s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("column \"%s\" of relation \"%s\" does not exist, skipping", name, t.Name))
		return nil
	case i < 0:
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
	case t.Parent != 0 && !recursing:
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop inherited column \"%s\"", name)
	case t.Partitioned() && slices.Contains(t.PartKey, i):
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop column \"%s\" because it is part of the partition key of relation \"%s\"", name, t.Name)
	case t.Partitioned() && !recurse && len(cat.PartitionChildren(t)) > 0:
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop column from only the partitioned table when partitions exist").
			WithHint("Do not specify the ONLY keyword.")
	}
	// foreign keys referencing the column: CASCADE or refuse
	// (reportDependentObjects); a foreign key on the column itself goes
	// with it
	var deps []*catalog.ConstraintDef
	for _, con := range cat.ReferencingKeys(t.OID) {
		root := cat.RootConstraint(con) // a clone stands for its foreign key (sql/catalog/constraint.go)
		if slices.Contains(con.RefCols, i) && !(root.Table == t.OID && slices.Contains(root.Cols, i)) && !slices.Contains(deps, root) {
			deps = append(deps, root)
		}
	}
	what := fmt.Sprintf("column %s of table %s", name, t.Name)
	if err := s.cascadeOrRefuse(ec, what, deps, what, cascade); err != nil {
		return err
	}
	for _, ix := range s.Cat().TableIndexes(t) {
		if slices.Contains(ix.Cols, i) {
			if err := s.dropIndexWithColumn(ec, ix); err != nil {
				return err
			}
		}
	}
	for _, con := range s.Cat().TableConstraintDefs(t.OID) {
		switch {
		case con.IsClone() || !slices.Contains(con.Cols, i):
		case con.Kind == catalog.ConForeign:
			if err := s.dropForeignKey(ec, con); err != nil { // with its clones (foreignkeypart.go)
				return err
			}
		default:
			s.AddCatOp(&catalog.CatOp{Kind: "dropcon", Con: con})
		}
	}
	// the sequences the column owns (serial, identity) go with it
	var owned []uint32
	for _, q := range s.Cat().OwnedSequences(t.OID) {
		if q.OwnedCol == i+1 {
			if err := s.LockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
			owned = append(owned, q.OID)
		}
	}
	if err := s.dropSequences(ec, owned, map[uint32]bool{t.OID: true}, cascade, what); err != nil { // columnsequences.go
		return err
	}
	cat = s.Cat()
	t = cat.Tables[t.OID]
	nt := *t
	nt.Cols = append([]catalog.ColumnDef(nil), t.Cols...)
	nt.NumberColumns()
	c := nt.Cols[i]
	nt.Dropped = append(append([]catalog.DroppedColumn(nil), t.Dropped...), catalog.DroppedColumn{Attnum: c.Attnum, TypeOID: c.TypeOID, TypeMod: c.TypeMod})
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
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	for _, ix := range cat.TableIndexes(t) {
		nix := *ix
		nix.Cols = shift(ix.Cols)
		s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
	}
	for _, con := range cat.TableConstraintDefs(t.OID) {
		nc := *con
		nc.Cols = shift(con.Cols)
		if con.RefTable == t.OID {
			nc.RefCols = shift(con.RefCols)
		}
		s.AddCatOp(&catalog.CatOp{Kind: "setcon", Con: &nc})
	}
	for _, con := range cat.ReferencingKeys(t.OID) {
		if con.Table == t.OID {
			continue // done above
		}
		nc := *con
		nc.RefCols = shift(con.RefCols)
		s.AddCatOp(&catalog.CatOp{Kind: "setcon", Con: &nc})
	}
	for _, q := range cat.OwnedSequences(t.OID) {
		if q.OwnedCol > i+1 { // OwnedCol is a column position + 1
			nq := *q
			nq.OwnedCol--
			s.AddCatOp(&catalog.CatOp{Kind: "setseq", Seq: &nq})
		}
	}
	for _, k := range s.Cat().PartitionChildren(s.Cat().Tables[t.OID]) {
		if err := s.LockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.dropColumn(ec, s.Cat().Tables[k.OID], name, missingOK, cascade, true, true); err != nil {
			return err
		}
	}
	return nil
}

// dropIndexWithColumn drops an index (and a partitioned index's tree)
// whose column is dropped: an automatic dependency, whatever the index
// implements.
func (s *Utility) dropIndexWithColumn(ec *expr.EvalCtx, ix *catalog.IndexDef) error {
	if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	for _, child := range s.childIndexes(ix) {
		if err := s.LockNow(ec, child.Table, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.dropIndexWithColumn(ec, child); err != nil {
			return err
		}
	}
	s.AddCatOp(&catalog.CatOp{Kind: "dropindex", Oid: ix.OID, OldFile: ix.RelFile, Index: ix})
	return nil
}

// --- SET DEFAULT, DROP DEFAULT

// setColumnDefault is ALTER COLUMN SET DEFAULT text (set) or DROP DEFAULT, on t
// and, unless ONLY, its partitions.
func (s *Utility) setColumnDefault(ec *expr.EvalCtx, t *catalog.TableDef, name, text string, set, recurse bool) error {
	if plan.IsSystemColumn(name) {
		return pgerr.NotSupported("cannot alter system column \"%s\"", name)
	}
	i := t.ColIndex(name)
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
	nt.Cols = append([]catalog.ColumnDef(nil), t.Cols...)
	nt.Cols[i].Default = text
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	if !recurse {
		return nil
	}
	for _, k := range s.Cat().PartitionChildren(s.Cat().Tables[t.OID]) {
		if err := s.LockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.setColumnDefault(ec, s.Cat().Tables[k.OID], name, text, set, true); err != nil {
			return err
		}
	}
	return nil
}

// setStatistics is ALTER COLUMN SET STATISTICS (ATExecSetStatistics):
// the column's pg_attribute.attstattarget, which ANALYZE samples and
// keeps statistics for (-1: default_statistics_target, 0: none), on t
// and, unless ONLY, its partitions.
func (s *Utility) setStatistics(ec *expr.EvalCtx, t *catalog.TableDef, name string, target int, recurse bool) error {
	if plan.IsSystemColumn(name) {
		return pgerr.NotSupported("cannot alter system column \"%s\"", name)
	}
	i := t.ColIndex(name)
	if i < 0 {
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
	}
	if target > 10000 {
		target = 10000
		s.Notice(pgerr.SeverityWarning, pgerr.InvalidParameterValue, "lowering statistics target to 10000")
	}
	nt := *t
	nt.Cols = append([]catalog.ColumnDef(nil), t.Cols...)
	nt.Cols[i].StatTarget = nil
	if target >= 0 {
		v := int16(target)
		nt.Cols[i].StatTarget = &v
	}
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	if !recurse {
		return nil
	}
	for _, k := range s.Cat().PartitionChildren(s.Cat().Tables[t.OID]) {
		if err := s.LockNow(ec, k.OID, locks.ShareUpdateExclusiveLock); err != nil {
			return err
		}
		if err := s.setStatistics(ec, s.Cat().Tables[k.OID], name, target, true); err != nil {
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
			v, err := analyze.DefInt(de)
			if err != nil || v < 10 || v > 100 {
				return 0, pgerr.New(pgerr.InvalidParameterValue, "value %s out of bounds for option \"fillfactor\"", analyze.DefString(de)).
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
func (s *Utility) setFillfactor(t *catalog.TableDef, ff int) error {
	if t.Partitioned() {
		return pgerr.New(pgerr.InvalidParameterValue, "unrecognized parameter \"fillfactor\"")
	}
	nt := *t
	nt.Fillfactor = ff
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	return nil
}

// setPersistence is SET LOGGED | UNLOGGED: a rewrite into new storage,
// as PostgreSQL makes one (nothing happens for a table already so, or a
// partitioned table). lockd logs unlogged tables too (docs/wal.md); the flag is what
// pg_class.relpersistence and psql show.
func (s *Utility) setPersistence(ec *expr.EvalCtx, t *catalog.TableDef, unlogged bool) error {
	if t.Partitioned() || t.Unlogged == unlogged {
		return nil
	}
	// ATPrepChangePersistence: permanent tables may reference only
	// permanent ones (self-references aside)
	cat := s.Cat()
	if unlogged {
		for _, con := range cat.ReferencingKeys(t.OID) {
			if other := cat.Tables[con.Table]; other != nil && con.Table != t.OID && !other.Unlogged {
				return pgerr.New(pgerr.InvalidTableDefinition, "could not change table \"%s\" to unlogged because it references logged table \"%s\"", t.Name, other.Name).
					OnConstraint(t.Name, con.Name)
			}
		}
	} else {
		for _, con := range cat.TableConstraintDefs(t.OID) {
			if other := cat.Tables[con.RefTable]; con.Kind == catalog.ConForeign && other != nil && con.RefTable != t.OID && other.Unlogged {
				return pgerr.New(pgerr.InvalidTableDefinition, "could not change table \"%s\" to logged because it references unlogged table \"%s\"", t.Name, other.Name).
					OnConstraint(t.Name, con.Name)
			}
		}
	}
	nt := *t
	nt.Unlogged = unlogged
	return s.RewriteTable(ec, t, &nt, func(_ *expr.EvalCtx, old, row []types.Datum) error {
		copy(row, old)
		return nil
	})
}

// alterWrongKind is ATWrongRelkindError for ALTER TABLE of an index or a
// sequence with subcommand sub, or nil when rv names neither.
func (s *Utility) alterWrongKind(rv *pg.RangeVar, sub pg.AlterTableType) error {
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return nil
	}
	kind := s.Cat().RelationKind(rv.Relname)
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

func (s *Utility) CompileAlterTable(at *pg.AlterTableStmt, st *plan.Stmt) error {
	if at.Objtype != pg.ObjectType_OBJECT_TABLE {
		return pgerr.NotSupported("ALTER %s is not supported", strings.TrimPrefix(at.Objtype.String(), "OBJECT_"))
	}
	if isPartitionCmd(at) { // partition.go
		return s.compileAlterPartition(at, st)
	}
	return s.compileAlterConstraints(at, st) // ADD, DROP and VALIDATE CONSTRAINT (constraint.go)
}
