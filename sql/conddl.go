package sql

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
)

// Constraint DDL: the CHECK, UNIQUE and FOREIGN KEY clauses of CREATE
// TABLE; ALTER TABLE ... ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE |
// CHECK | FOREIGN KEY [NOT VALID], DROP CONSTRAINT [IF EXISTS] name
// [CASCADE], VALIDATE CONSTRAINT; and what DROP TABLE, DROP INDEX and
// TRUNCATE must do about foreign keys. Names, messages and locks are
// PostgreSQL 15's (tablecmds.c, heap.c, dependency.c).

// tableCons collects a CREATE TABLE's constraints other than its
// primary key, in the order written.
type tableCons struct {
	checks  []consClause
	uniques []consClause
	fkeys   []*fkeySpec
}

// consClause is one constraint clause; col is set for a column constraint.
type consClause struct {
	con *pg.Constraint
	col string
}

func notDeferrable(con *pg.Constraint) error {
	if con.Deferrable || con.Initdeferred {
		return pgerr.NotSupported("DEFERRABLE constraints are not supported")
	}
	return nil
}

// addColumn takes a column constraint of column col.
func (tc *tableCons) addColumn(con *pg.Constraint, col string) error {
	switch con.Contype {
	case pg.ConstrType_CONSTR_ATTR_DEFERRABLE, pg.ConstrType_CONSTR_ATTR_DEFERRED:
		return pgerr.NotSupported("DEFERRABLE constraints are not supported")
	case pg.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE, pg.ConstrType_CONSTR_ATTR_IMMEDIATE:
		return nil
	case pg.ConstrType_CONSTR_CHECK:
		tc.checks = append(tc.checks, consClause{con, col})
	case pg.ConstrType_CONSTR_UNIQUE:
		tc.uniques = append(tc.uniques, consClause{con, col})
	case pg.ConstrType_CONSTR_FOREIGN:
		tc.fkeys = append(tc.fkeys, &fkeySpec{con: con, fkCols: []string{col}})
	default:
		return pgerr.NotSupported("column constraint %s is not supported yet", strings.TrimPrefix(con.Contype.String(), "CONSTR_"))
	}
	return notDeferrable(con)
}

// addTable takes a table constraint (a PRIMARY KEY is only checked: the
// caller handles it).
func (tc *tableCons) addTable(con *pg.Constraint) error {
	if err := notDeferrable(con); err != nil {
		return err
	}
	switch con.Contype {
	case pg.ConstrType_CONSTR_PRIMARY:
	case pg.ConstrType_CONSTR_CHECK:
		tc.checks = append(tc.checks, consClause{con: con})
	case pg.ConstrType_CONSTR_UNIQUE:
		tc.uniques = append(tc.uniques, consClause{con: con})
	case pg.ConstrType_CONSTR_FOREIGN:
		tc.fkeys = append(tc.fkeys, &fkeySpec{con: con, fkCols: names(con.FkAttrs)})
	default:
		return pgerr.NotSupported("table constraint %s is not supported yet", strings.TrimPrefix(con.Contype.String(), "CONSTR_"))
	}
	return nil
}

func names(nodes []*pg.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = nodeName(n)
	}
	return out
}

// createChecks makes the CHECK constraints of a new table (before its
// indexes, as DefineRelation does).
func (s *utility) createChecks(ec *evalCtx, t *TableDef, tc *tableCons) error {
	var chosen []string
	for _, c := range tc.checks {
		if _, err := s.addCheck(ec, t, c.con, &chosen, true); err != nil {
			return err
		}
	}
	return nil
}

// mergeUniques is transformIndexConstraints' merging: a unique constraint
// on the same columns as the primary key or an earlier unique constraint
// is not made, and gives that one its name if it has none. It returns the
// primary key's name.
func (tc *tableCons) mergeUniques(pk []string, pkName string) string {
	type ixSpec struct {
		cols []string
		name *string
	}
	var kept []ixSpec
	if len(pk) > 0 {
		kept = append(kept, ixSpec{pk, &pkName})
	}
	var uniques []consClause
	for _, u := range tc.uniques {
		cols := names(u.con.Keys)
		if u.col != "" {
			cols = []string{u.col}
		}
		i := slices.IndexFunc(kept, func(k ixSpec) bool { return slices.Equal(k.cols, cols) })
		if i < 0 {
			uniques = append(uniques, u)
			kept = append(kept, ixSpec{cols, &uniques[len(uniques)-1].con.Conname})
			continue
		}
		if *kept[i].name == "" {
			*kept[i].name = u.con.Conname
		}
	}
	tc.uniques = uniques
	return pkName
}

// createKeys makes the unique constraints and foreign keys of a new
// table, after its primary key (mergeUniques has run).
func (s *utility) createKeys(ec *evalCtx, t *TableDef, tc *tableCons) error {
	var chosen []string
	for _, u := range tc.uniques {
		cols := names(u.con.Keys)
		if u.col != "" {
			cols = []string{u.col}
		}
		if err := s.addUnique(ec, t, u.con.Conname, cols, &chosen); err != nil {
			return err
		}
		t = s.cat().Tables[t.OID]
	}
	// PostgreSQL adds a new table's foreign keys with an ALTER TABLE after
	// the CREATE (transformCreateStmt), which locks the table
	// ShareRowExclusiveLock
	if len(tc.fkeys) > 0 {
		if err := s.lockNow(ec, t.OID, locks.ShareRowExclusiveLock); err != nil {
			return err
		}
	}
	var fkNames []string
	for _, f := range tc.fkeys {
		if err := s.defineForeignKey(ec, s.cat().Tables[t.OID], f, fkNames, true); err != nil {
			return err
		}
		fkNames = append(fkNames, f.name)
	}
	return nil
}

// addCheck defines a CHECK constraint on t; chosen collects the names of
// the command's checks. Unless newTable or NOT VALID, the rows already in
// t are checked.
func (s *utility) addCheck(ec *evalCtx, t *TableDef, con *pg.Constraint, chosen *[]string, newTable bool) (*ConstraintDef, error) {
	cat := s.cat()
	if con.IsNoInherit && t.Partitioned() {
		return nil, pgerr.New(pgerr.InvalidTableDefinition, "cannot add NO INHERIT constraint to partitioned table \"%s\"", t.Name)
	}
	if _, err := s.compileCheck(t, con.RawExpr); err != nil {
		return nil, err
	}
	cols := checkColumns(t, con.RawExpr)
	name := con.Conname
	if name != "" {
		if slices.Contains(*chosen, name) {
			return nil, pgerr.New(pgerr.DuplicateObject, "check constraint \"%s\" already exists", name)
		}
		if c, ix := cat.constraintNamed(t.OID, name); c != nil || ix != nil {
			if c != nil && c.Kind == conCheck && newTable {
				return nil, pgerr.New(pgerr.DuplicateObject, "check constraint \"%s\" already exists", name)
			}
			return nil, pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
		}
	} else {
		col := ""
		if len(cols) == 1 {
			col = t.Cols[cols[0]].Name
		}
		name = cat.chooseConstraintName(t.Name, col, "check", *chosen)
	}
	*chosen = append(*chosen, name)
	text, err := deparseExpr(con.RawExpr)
	if err != nil {
		return nil, err
	}
	def := &ConstraintDef{Name: name, Kind: conCheck, Table: t.OID, Cols: cols, Expr: text, NoInherit: con.IsNoInherit,
		NotValid: con.SkipValidation && !newTable}
	def.Def, def.PrettyDef = s.checkDefs(t, con.RawExpr)
	if def.NoInherit {
		def.Def += " NO INHERIT"
		def.PrettyDef += " NO INHERIT"
	}
	if def.NotValid {
		def.Def += " NOT VALID"
		def.PrettyDef += " NOT VALID"
	}
	if !newTable && !def.NotValid {
		if err := s.validateCheck(ec, t, name, con.RawExpr); err != nil {
			return nil, err
		}
	}
	def.OID = s.catalog.allocOID()
	s.addCatOp(&catOp{kind: "addcon", con: def})
	return def, nil
}

// addUnique defines a UNIQUE constraint: a unique index named
// table_cols_key that implements it (IndexDef.IsConstraint).
func (s *utility) addUnique(ec *evalCtx, t *TableDef, name string, cols []string, chosen *[]string) error {
	cat := s.cat()
	if name != "" {
		if c, ix := cat.constraintNamed(t.OID, name); c != nil || ix != nil {
			return pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
		}
	} else {
		name = cat.chooseRelationName(t.Name, nameAddition(cols), "key", *chosen)
	}
	*chosen = append(*chosen, name)
	return s.addIndexConstraint(ec, t, name, cols, false)
}

// addIndexConstraint builds the index of a PRIMARY KEY or UNIQUE
// constraint with DefineIndex's locks: ShareLock on the table,
// AccessExclusiveLock on the new index (a partitioned table's index takes
// them in addPartitionedIndex).
func (s *utility) addIndexConstraint(ec *evalCtx, t *TableDef, name string, cols []string, primary bool) error {
	if !t.Partitioned() {
		if err := s.lockNow(ec, t.OID, locks.ShareLock); err != nil {
			return err
		}
	}
	var err error
	if primary {
		err = s.addPrimaryKey(ec, t, cols, name)
	} else {
		err = s.addIndex(ec, t, cols, name, true, false)
	}
	if err != nil {
		return err
	}
	var ix *IndexDef
	for _, x := range s.cat().tableIndexes(s.cat().Tables[t.OID]) {
		if primary && x.Primary || !primary && x.Name == name {
			ix = x
		}
	}
	if ix == nil {
		return nil
	}
	if !t.Partitioned() {
		if err := s.lockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	if !primary {
		nix := *ix
		nix.IsConstraint = true
		s.addCatOp(&catOp{kind: "setindex", index: &nix})
	}
	return nil
}

// --- ALTER TABLE

// alterCmd is one compiled ALTER TABLE subcommand.
type alterCmd struct {
	pass int // PostgreSQL's AT_PASS (altercol.go): drops, ALTER TYPE, ADD COLUMN, column attributes, index constraints, checks and foreign keys, validation
	run  func(ec *evalCtx, t *TableDef, st *alterState) error
}

// alterState is shared by the subcommands of one ALTER TABLE.
type alterState struct {
	checkNames, indexNames, fkNames []string
	skippedCols                     map[string]bool           // ADD COLUMN IF NOT EXISTS found these (altercol.go)
	phase3                          []func(ec *evalCtx) error // checks after every pass (ATRewriteTables)
}

// strongerLock is the stronger of two lock modes (ALTER TABLE takes the
// strongest its subcommands need).
func strongerLock(a, b locks.LockMode) locks.LockMode {
	if b > a {
		return b
	}
	return a
}

// compileAlterConstraints compiles ALTER TABLE subcommands that add, drop
// or validate constraints, and through compileAlterColumn (altercol.go)
// the column forms: everything but ATTACH/DETACH PARTITION. The
// table is locked in the strongest mode a subcommand needs
// (AlterTableGetLockLevel): ShareRowExclusiveLock for ADD FOREIGN KEY,
// ShareUpdateExclusiveLock for VALIDATE CONSTRAINT and SET (fillfactor),
// AccessExclusiveLock for the rest.
func (s *utility) compileAlterConstraints(at *pg.AlterTableStmt, st *Stmt) error {
	var cmds []alterCmd
	mode := locks.LockMode(0)
	for _, c := range at.Cmds {
		cmd := c.GetAlterTableCmd()
		switch cmd.Subtype {
		case pg.AlterTableType_AT_AddConstraint:
			con := cmd.GetDef().GetConstraint()
			if con == nil {
				return pgerr.NotSupported("this form of ALTER TABLE is not supported yet")
			}
			if err := notDeferrable(con); err != nil {
				return err
			}
			switch con.Contype {
			case pg.ConstrType_CONSTR_PRIMARY, pg.ConstrType_CONSTR_UNIQUE:
				mode = strongerLock(mode, locks.AccessExclusiveLock)
				primary := con.Contype == pg.ConstrType_CONSTR_PRIMARY
				cols, name := names(con.Keys), con.Conname
				cmds = append(cmds, alterCmd{pass: passAddIndexConstr, run: func(ec *evalCtx, t *TableDef, as *alterState) error {
					if primary {
						return s.addIndexConstraint(ec, t, name, cols, true)
					}
					return s.addUnique(ec, t, name, cols, &as.indexNames)
				}})
			case pg.ConstrType_CONSTR_CHECK:
				mode = strongerLock(mode, locks.AccessExclusiveLock)
				cmds = append(cmds, alterCmd{pass: passAddOtherConstr, run: func(ec *evalCtx, t *TableDef, as *alterState) error {
					_, err := s.addCheck(ec, t, con, &as.checkNames, false)
					return err
				}})
			case pg.ConstrType_CONSTR_FOREIGN:
				mode = strongerLock(mode, locks.ShareRowExclusiveLock)
				cmds = append(cmds, alterCmd{pass: passAddOtherConstr, run: func(ec *evalCtx, t *TableDef, as *alterState) error {
					spec := &fkeySpec{con: con, fkCols: names(con.FkAttrs)}
					if err := s.defineForeignKey(ec, t, spec, as.fkNames, false); err != nil {
						return err
					}
					as.fkNames = append(as.fkNames, spec.name)
					return nil
				}})
			default:
				return pgerr.NotSupported("ALTER TABLE ... ADD %s is not supported", strings.TrimPrefix(con.Contype.String(), "CONSTR_"))
			}
		case pg.AlterTableType_AT_DropConstraint:
			mode = strongerLock(mode, locks.AccessExclusiveLock)
			name, missingOK, cascade := cmd.Name, cmd.MissingOk, cmd.Behavior == pg.DropBehavior_DROP_CASCADE
			cmds = append(cmds, alterCmd{pass: passDrop, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
				return s.dropConstraint(ec, t, name, missingOK, cascade)
			}})
		case pg.AlterTableType_AT_SetNotNull, pg.AlterTableType_AT_DropNotNull:
			mode = strongerLock(mode, locks.AccessExclusiveLock)
			col, set := cmd.Name, cmd.Subtype == pg.AlterTableType_AT_SetNotNull
			pass := passDrop
			if set {
				pass = passColAttrs
			}
			cmds = append(cmds, alterCmd{pass: pass, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
				return s.setNotNull(ec, t, col, set)
			}})
		case pg.AlterTableType_AT_ValidateConstraint:
			mode = strongerLock(mode, locks.ShareUpdateExclusiveLock)
			name := cmd.Name
			cmds = append(cmds, alterCmd{pass: passMisc, run: func(ec *evalCtx, t *TableDef, _ *alterState) error {
				return s.validateConstraint(ec, t, name)
			}})
		default: // the column forms and the rest (altercol.go)
			more, m, err := s.compileAlterColumn(at, cmd)
			if err != nil {
				return err
			}
			mode = strongerLock(mode, m)
			cmds = append(cmds, more...)
		}
	}
	slices.SortStableFunc(cmds, func(a, b alterCmd) int { return a.pass - b.pass })
	rv := at.Relation
	missingOK := at.MissingOk
	first := at.Cmds[0].GetAlterTableCmd().GetSubtype()
	st.Tag = "ALTER TABLE"
	st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
		t, err := s.resolveTable(rv)
		if err != nil {
			if werr := s.alterWrongKind(rv, first); werr != nil { // an index or a sequence (altercol.go)
				return "", werr
			}
			if missingOK {
				s.notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("relation \"%s\" does not exist, skipping", rv.Relname))
				return "ALTER TABLE", nil
			}
			return "", noPosition(err)
		}
		if err := s.lockNow(ec, t.OID, mode); err != nil {
			return "", err
		}
		if t, err = s.resolveTable(rv); err != nil {
			return "", noPosition(err)
		}
		// what the subcommands read of the rows (validation, index
		// builds) includes what was committed while the lock was awaited
		defer s.txn.UseLatestSnapshot()()
		as := &alterState{}
		for _, c := range cmds {
			if err := c.run(ec, t, as); err != nil {
				return "", err
			}
			if t = s.cat().Tables[t.OID]; t == nil {
				return "", pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", rv.Relname)
			}
		}
		for _, check := range as.phase3 { // altercol.go
			if err := check(ec); err != nil {
				return "", err
			}
		}
		return "ALTER TABLE", nil
	}
	return nil
}

// dropConstraint is ALTER TABLE ... DROP CONSTRAINT: a CHECK or FOREIGN
// KEY goes from the catalog (a foreign key also locks the referenced table
// AccessExclusiveLock: its triggers live there); a primary key or unique
// constraint drops its index, and with CASCADE the foreign keys that need
// that index.
func (s *utility) dropConstraint(ec *evalCtx, t *TableDef, name string, missingOK, cascade bool) error {
	con, ix := s.cat().constraintNamed(t.OID, name)
	switch {
	case con == nil && ix == nil:
		if slices.ContainsFunc(s.cat().inheritedConstraints(t), func(c *ConstraintDef) bool { return c.Name == name }) {
			return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop inherited constraint \"%s\" of relation \"%s\"", name, t.Name)
		}
		if missingOK {
			s.notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("constraint \"%s\" of relation \"%s\" does not exist, skipping", name, t.Name))
			return nil
		}
		return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", name, t.Name)
	case con != nil && con.isClone():
		// a partition's share of a foreign key referencing a partitioned
		// table goes only with it (fkpart.go)
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop inherited constraint \"%s\" of relation \"%s\"", name, t.Name)
	case con != nil && con.Kind == conForeign:
		return s.dropForeignKey(ec, con) // with its clones (fkpart.go)
	case con != nil:
		s.addCatOp(&catOp{kind: "dropcon", con: con})
		return nil
	}
	deps := s.indexDependents(ix)
	what := fmt.Sprintf("constraint %s on table %s", name, t.Name)
	if err := s.cascadeOrRefuse(ec, what, deps, "index "+ix.Name, cascade); err != nil {
		return err
	}
	if ix.Partitioned() {
		return s.dropIndexTree(ec, ix)
	}
	if err := s.lockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	s.addCatOp(&catOp{kind: "dropindex", oid: ix.OID, oldFile: ix.RelFile, index: ix})
	return nil
}

// indexDependents lists the foreign keys that use ix as their referenced
// key.
func (s *utility) indexDependents(ix *IndexDef) []*ConstraintDef {
	var out []*ConstraintDef
	for _, con := range s.cat().referencingKeys(ix.Table) {
		if con.RefIndex == ix.OID {
			out = append(out, con)
		}
	}
	return out
}

// cascadeOrRefuse handles the foreign keys that depend on an object being
// dropped (reportDependentObjects): without CASCADE a 2BP01 error listing
// them, with CASCADE a notice and each dropped, its table locked
// AccessExclusiveLock.
func (s *utility) cascadeOrRefuse(ec *evalCtx, what string, deps []*ConstraintDef, on string, cascade bool) error {
	return s.cascadeOrRefuseVia(ec, what, deps, func(int) string { return on }, cascade)
}

// cascadeOrRefuseVia is cascadeOrRefuse with the object each dependency
// is on given per dependency (on(i) for deps[i]).
func (s *utility) cascadeOrRefuseVia(ec *evalCtx, what string, deps []*ConstraintDef, on func(i int) string, cascade bool) error {
	if len(deps) == 0 {
		return nil
	}
	cat := s.cat()
	var lines []string
	for _, d := range deps {
		lines = append(lines, fmt.Sprintf("constraint %s on table %s", d.Name, cat.Tables[d.Table].Name))
	}
	if !cascade {
		detail := make([]string, len(lines))
		for i, l := range lines {
			detail[i] = l + " depends on " + on(i)
		}
		return pgerr.New(codeDependentObjects, "cannot drop %s because other objects depend on it", what).
			WithDetail(strings.Join(detail, "\n")).WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	n := &pgerr.Error{Severity: pgerr.SeverityNotice, Code: "00000"}
	if len(lines) == 1 {
		n.Message = "drop cascades to " + lines[0]
	} else {
		n.Message = fmt.Sprintf("drop cascades to %d other objects", len(lines))
		for i := range lines {
			lines[i] = "drop cascades to " + lines[i]
		}
		n.Detail = strings.Join(lines, "\n")
	}
	s.notices = append(s.notices, n)
	for _, d := range deps {
		if err := s.dropForeignKey(ec, d); err != nil { // fkpart.go
			return err
		}
	}
	return nil
}

// setNotNull is ALTER TABLE ... ALTER COLUMN col SET | DROP NOT NULL, for
// t and its partitions. SET checks the rows already there.
func (s *utility) setNotNull(ec *evalCtx, t *TableDef, col string, set bool) error {
	i := t.colIndex(col)
	if i < 0 {
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, t.Name)
	}
	if !set {
		for _, ix := range s.cat().tableIndexes(t) {
			if ix.Primary && slices.Contains(ix.Cols, i) {
				return pgerr.New(pgerr.InvalidTableDefinition, "column \"%s\" is in a primary key", col)
			}
		}
		if t.Parent != 0 {
			if p := s.cat().Tables[t.Parent]; p != nil && p.Cols[i].NotNull {
				return pgerr.New(pgerr.InvalidTableDefinition, "column \"%s\" is marked NOT NULL in parent table", col)
			}
		}
	}
	tabs := []*TableDef{t}
	for j := 0; j < len(tabs); j++ {
		tab := tabs[j]
		if j > 0 {
			if err := s.lockNow(ec, tab.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
		}
		tabs = append(tabs, s.cat().partitionChildren(tab)...)
		if tab.Cols[i].NotNull == set {
			continue
		}
		if set && !tab.Partitioned() {
			found := false
			restore := s.txn.UseLatestSnapshot() // the partition's lock may have been awaited
			err := s.scanTableTIDs(ec, newTableSource(tab, tab.Name), func(_ storage.TID, row []Datum) error {
				if row[i].Null {
					found = true
					return errStopScan
				}
				return nil
			})
			restore()
			if err != nil && err != errStopScan {
				return err
			}
			if found {
				return pgerr.New(pgerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", col, tab.Name).OnColumn(tab.Name, col)
			}
		}
		nt := *tab
		nt.Cols = append([]ColumnDef(nil), tab.Cols...)
		nt.Cols[i].NotNull = set
		s.addCatOp(&catOp{kind: "settable", table: &nt})
	}
	return nil
}

// validateConstraint is ALTER TABLE ... VALIDATE CONSTRAINT.
func (s *utility) validateConstraint(ec *evalCtx, t *TableDef, name string) error {
	con, ix := s.cat().constraintNamed(t.OID, name)
	switch {
	case con == nil && ix == nil:
		return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", name, t.Name)
	case con == nil:
		return pgerr.New(pgerr.WrongObjectType, "constraint \"%s\" of relation \"%s\" is not a foreign key or check constraint", name, t.Name)
	case !con.NotValid:
		return nil
	}
	switch con.Kind {
	case conCheck:
		tree, err := pg.Parse("SELECT " + con.Expr)
		if err != nil {
			return err
		}
		if err := s.validateCheck(ec, t, con.Name, tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val); err != nil {
			return err
		}
	case conForeign:
		if err := s.validateForeignKey(ec, t, con); err != nil {
			return err
		}
	}
	nc := *con
	nc.NotValid = false
	nc.Def = strings.TrimSuffix(nc.Def, " NOT VALID")
	nc.PrettyDef = strings.TrimSuffix(nc.PrettyDef, " NOT VALID")
	s.addCatOp(&catOp{kind: "setcon", con: &nc})
	return nil
}

// --- DROP TABLE, DROP INDEX, TRUNCATE

// dropTableKeys handles the foreign keys of a table t that DROP TABLE is
// about to drop, dropping is the set of tables the statement drops: the
// tables t references are locked AccessExclusiveLock (their RI triggers
// go too), and foreign keys of other tables referencing t refuse the
// drop or, with CASCADE, go with it.
func (s *utility) dropTableKeys(ec *evalCtx, t *TableDef, dropping []string, cascade bool) error {
	cat := s.cat()
	if len(cat.Constraints) == 0 {
		return nil
	}
	var deps []*ConstraintDef
	var via []string
	if t.Partitioned() || t.Parent != 0 {
		// the keys referencing t's partitions too, through their clones
		deps, via = s.referencedPartitionDeps(t, dropping) // fkpart.go
	} else {
		for _, con := range cat.referencingKeys(t.OID) {
			if owner := cat.Tables[con.Table]; owner != nil && owner.OID != t.OID && !slices.Contains(dropping, owner.Name) {
				deps = append(deps, con)
				via = append(via, t.Name)
			}
		}
	}
	if err := s.cascadeOrRefuseVia(ec, "table "+t.Name, deps, func(i int) string { return "table " + via[i] }, cascade); err != nil {
		return err
	}
	for _, con := range cat.tableConstraintDefs(t.OID) {
		if con.Kind == conForeign && con.RefTable != t.OID {
			if err := s.lockNow(ec, con.RefTable, locks.AccessExclusiveLock); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropIndexKeys handles DROP INDEX of an index a constraint needs: one
// that implements a unique constraint can only go with it; a unique index
// that foreign keys reference needs CASCADE.
func (s *utility) dropIndexKeys(ec *evalCtx, ix *IndexDef, cascade bool) error {
	t := s.cat().Tables[ix.Table]
	if ix.IsConstraint {
		return pgerr.New(codeDependentObjects, "cannot drop index %s because constraint %s on table %s requires it", ix.Name, ix.Name, t.Name).
			WithHint("You can drop constraint " + ix.Name + " on table " + t.Name + " instead.")
	}
	return s.cascadeOrRefuse(ec, "index "+ix.Name, s.indexDependents(ix), "index "+ix.Name, cascade)
}

// truncateKeys is heap_truncate_check_FKs for TRUNCATE of tabs, the
// leaves of rels (the tables named and, partitioned ones, everything under
// them, in ExecuteTruncate's order): a table of rels referenced by a
// foreign key of a table not truncated with it refuses; with CASCADE those
// tables are truncated too, locked AccessExclusiveLock, found round by
// round as heap_truncate_find_FKs finds them: each round's tables in OID
// order, a notice each — a partitioned referencing table's partitions
// included, which carry the foreign key too.
func (s *utility) truncateKeys(ec *evalCtx, rels, tabs []*TableDef, cascade bool) ([]*TableDef, error) {
	cat := s.cat()
	if len(cat.Constraints) == 0 {
		return tabs, nil
	}
	in := map[uint32]bool{}
	mark := func(t *TableDef) {
		in[t.OID] = true
		for _, a := range cat.ancestors(t) {
			in[a.OID] = true
		}
	}
	for _, t := range rels {
		mark(t)
	}
	rels = append([]*TableDef(nil), rels...)
	for done := 0; done < len(rels); {
		var found []*TableDef
		seen := map[uint32]bool{}
		for ; done < len(rels); done++ {
			t := rels[done]
			for _, r := range append([]*TableDef{t}, cat.ancestors(t)...) {
				for _, con := range cat.referencingKeys(r.OID) {
					owner := cat.Tables[con.Table]
					if in[con.Table] || owner == nil || seen[owner.OID] {
						continue
					}
					if !cascade {
						return nil, pgerr.NotSupported("cannot truncate a table referenced in a foreign key constraint").
							WithDetail(fmt.Sprintf("Table \"%s\" references \"%s\".", owner.Name, r.Name)).
							WithHint(fmt.Sprintf("Truncate table \"%s\" at the same time, or use TRUNCATE ... CASCADE.", owner.Name))
					}
					for _, k := range append([]*TableDef{owner}, cat.inheritors(owner)...) {
						if !seen[k.OID] {
							seen[k.OID] = true
							found = append(found, k)
						}
					}
				}
			}
		}
		slices.SortFunc(found, func(a, b *TableDef) int { return int(a.OID) - int(b.OID) })
		for _, k := range found {
			s.notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("truncate cascades to table \"%s\"", k.Name))
			if err := s.lockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
				return nil, err
			}
			mark(k)
			if !k.Partitioned() {
				tabs = append(tabs, k)
			}
			rels = append(rels, k)
		}
	}
	return tabs, nil
}

// --- partitions

// A partition obeys its own constraints and those of its partitioned
// ancestors; lockd keeps them on the ancestor (PostgreSQL copies CHECKs
// to each partition and clones foreign keys with conparentid, which
// pg_constraint shows: see inheritedConstraints).

// inheritedConstraints lists the constraints t has from its ancestors,
// nearest first, leaving out those t has one of the same name of itself.
func (c *catalogState) inheritedConstraints(t *TableDef) []*ConstraintDef {
	var out []*ConstraintDef
	own := c.tableConstraintDefs(t.OID)
	for _, a := range c.ancestors(t) {
		for _, con := range c.tableConstraintDefs(a.OID) {
			// clones belong to the referenced side's partitions, not to
			// the referencing table's (fkpart.go)
			if con.NoInherit || con.isClone() || slices.ContainsFunc(own, func(o *ConstraintDef) bool { return o.Name == con.Name }) ||
				slices.ContainsFunc(out, func(o *ConstraintDef) bool { return o.Name == con.Name }) {
				continue
			}
			out = append(out, con)
		}
	}
	return out
}

// attachChecks: a table being attached as a partition must already have
// each CHECK constraint of its new ancestors, same name and expression
// (MergeConstraintsIntoExisting).
func (s *utility) attachChecks(parent, child *TableDef) error {
	cat := s.cat()
	for _, a := range append([]*TableDef{parent}, cat.ancestors(parent)...) {
		for _, con := range cat.tableConstraintDefs(a.OID) {
			if con.Kind != conCheck || con.NoInherit {
				continue
			}
			own, _ := cat.constraintNamed(child.OID, con.Name)
			switch {
			case own == nil || own.Kind != conCheck:
				return pgerr.New(pgerr.DatatypeMismatch, "child table is missing constraint \"%s\"", con.Name)
			case own.Expr != con.Expr && own.Def != con.Def:
				return pgerr.New(pgerr.DatatypeMismatch, "child table \"%s\" has different definition for check constraint \"%s\"", child.Name, con.Name)
			}
		}
	}
	return nil
}

// attachForeignKeys checks the rows of a table being attached as a
// partition against the foreign keys of its new ancestors.
func (s *utility) attachForeignKeys(ec *evalCtx, parent, child *TableDef) error {
	cat := s.cat()
	for _, a := range append([]*TableDef{parent}, cat.ancestors(parent)...) {
		for _, con := range cat.tableConstraintDefs(a.OID) {
			if con.Kind != conForeign || con.isClone() {
				continue
			}
			if err := s.lockNow(ec, con.RefTable, locks.ShareRowExclusiveLock); err != nil {
				return err
			}
			if err := s.validateForeignKey(ec, child, con); err != nil {
				return err
			}
		}
	}
	return nil
}

// detachConstraints gives a partition being detached the constraints it
// had from its ancestors as its own, as PostgreSQL's detached partition
// keeps its copies and clones; a foreign key referencing a partitioned
// table gets clones of its own for the referenced partitions
// (DetachPartitionFinalize, fkpart.go).
func (s *utility) detachConstraints(ec *evalCtx, child *TableDef) error {
	for _, con := range s.cat().inheritedConstraints(child) {
		nc := *con
		nc.OID = s.catalog.allocOID()
		nc.Table = child.OID
		s.addCatOp(&catOp{kind: "addcon", con: &nc})
		if nc.Kind == conForeign {
			if err := s.addReferencedClones(ec, &nc); err != nil {
				return err
			}
		}
	}
	return nil
}
