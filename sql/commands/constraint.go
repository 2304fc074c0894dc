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
	"lockd/storage"
)

// validateCheck scans t (every leaf partition of it) for a row the new
// check e fails (ALTER TABLE ADD CHECK, VALIDATE CONSTRAINT).
func (s *Utility) validateCheck(ec *expr.EvalCtx, t *catalog.TableDef, name string, n *pg.Node) error {
	// validateCheckConstraint reads with GetLatestSnapshot: rows committed
	// while the locks were awaited are checked too
	defer s.Txn.UseLatestSnapshot()()
	for _, leaf := range s.LeafTables(t) {
		e, err := s.CompileCheck(leaf, n)
		if err != nil {
			return err
		}
		failed := false
		err = s.ScanTableTIDs(ec, plan.NewTableSource(leaf, leaf.Name), func(_ storage.TID, row []types.Datum) error {
			v, err := e.Eval(ec, row)
			if err != nil {
				return err
			}
			if !v.Null && v.I == 0 {
				failed = true
				return expr.ErrStopScan
			}
			return nil
		})
		if err != nil && err != expr.ErrStopScan {
			return err
		}
		if failed {
			return pgerr.New(pgerr.CheckViolation, "check constraint \"%s\" of relation \"%s\" is violated by some row", name, leaf.Name).
				OnConstraint(leaf.Name, name)
		}
	}
	return nil
}

// checkColumns lists the distinct columns a CHECK expression names, in
// order of appearance (for conkey and for the generated name: table_col_check
// when there is exactly one).
func checkColumns(t *catalog.TableDef, n *pg.Node) []int {
	var cols []int
	for _, name := range analyze.ColumnRefNames(n) {
		if i := t.ColIndex(name); i >= 0 {
			cols = append(cols, i)
		}
	}
	return cols
}

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
		out[i] = analyze.NodeName(n)
	}
	return out
}

// createChecks makes the CHECK constraints of a new table (before its
// indexes, as DefineRelation does).
func (s *Utility) createChecks(ec *expr.EvalCtx, t *catalog.TableDef, tc *tableCons) error {
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
func (s *Utility) createKeys(ec *expr.EvalCtx, t *catalog.TableDef, tc *tableCons) error {
	var chosen []string
	for _, u := range tc.uniques {
		cols := names(u.con.Keys)
		if u.col != "" {
			cols = []string{u.col}
		}
		if err := s.addUnique(ec, t, u.con.Conname, cols, &chosen); err != nil {
			return err
		}
		t = s.Cat().Tables[t.OID]
	}
	// PostgreSQL adds a new table's foreign keys with an ALTER TABLE after
	// the CREATE (transformCreateStmt), which locks the table
	// ShareRowExclusiveLock
	if len(tc.fkeys) > 0 {
		if err := s.LockNow(ec, t.OID, locks.ShareRowExclusiveLock); err != nil {
			return err
		}
	}
	var fkNames []string
	for _, f := range tc.fkeys {
		if err := s.defineForeignKey(ec, s.Cat().Tables[t.OID], f, fkNames, true); err != nil {
			return err
		}
		fkNames = append(fkNames, f.name)
	}
	return nil
}

// addCheck defines a CHECK constraint on t; chosen collects the names of
// the command's checks. Unless newTable or NOT VALID, the rows already in
// t are checked.
func (s *Utility) addCheck(ec *expr.EvalCtx, t *catalog.TableDef, con *pg.Constraint, chosen *[]string, newTable bool) (*catalog.ConstraintDef, error) {
	cat := s.Cat()
	if con.IsNoInherit && t.Partitioned() {
		return nil, pgerr.New(pgerr.InvalidTableDefinition, "cannot add NO INHERIT constraint to partitioned table \"%s\"", t.Name)
	}
	if _, err := s.CompileCheck(t, con.RawExpr); err != nil {
		return nil, err
	}
	cols := checkColumns(t, con.RawExpr)
	name := con.Conname
	if name != "" {
		if slices.Contains(*chosen, name) {
			return nil, pgerr.New(pgerr.DuplicateObject, "check constraint \"%s\" already exists", name)
		}
		if c, ix := cat.ConstraintNamed(t.OID, name); c != nil || ix != nil {
			if c != nil && c.Kind == catalog.ConCheck && newTable {
				return nil, pgerr.New(pgerr.DuplicateObject, "check constraint \"%s\" already exists", name)
			}
			return nil, pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
		}
	} else {
		col := ""
		if len(cols) == 1 {
			col = t.Cols[cols[0]].Name
		}
		name = cat.ChooseConstraintName(t.Name, col, "check", *chosen)
	}
	*chosen = append(*chosen, name)
	text, err := analyze.DeparseExpr(con.RawExpr)
	if err != nil {
		return nil, err
	}
	def := &catalog.ConstraintDef{Name: name, Kind: catalog.ConCheck, Table: t.OID, Cols: cols, Expr: text, NoInherit: con.IsNoInherit,
		NotValid: con.SkipValidation && !newTable}
	def.Def, def.PrettyDef = s.CheckDefs(t, con.RawExpr)
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
	def.OID = s.Catalog.AllocOID()
	s.AddCatOp(&catalog.CatOp{Kind: "addcon", Con: def})
	return def, nil
}

// addUnique defines a UNIQUE constraint: a unique index named
// table_cols_key that implements it (IndexDef.IsConstraint).
func (s *Utility) addUnique(ec *expr.EvalCtx, t *catalog.TableDef, name string, cols []string, chosen *[]string) error {
	cat := s.Cat()
	if name != "" {
		if c, ix := cat.ConstraintNamed(t.OID, name); c != nil || ix != nil {
			return pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
		}
	} else {
		name = cat.ChooseRelationName(t.Name, catalog.NameAddition(cols), "key", *chosen)
	}
	*chosen = append(*chosen, name)
	return s.addIndexConstraint(ec, t, name, cols, false)
}

// addIndexConstraint builds the index of a PRIMARY KEY or UNIQUE
// constraint with DefineIndex's locks: ShareLock on the table,
// AccessExclusiveLock on the new index (a partitioned table's index takes
// them in addPartitionedIndex).
func (s *Utility) addIndexConstraint(ec *expr.EvalCtx, t *catalog.TableDef, name string, cols []string, primary bool) error {
	if !t.Partitioned() {
		if err := s.LockNow(ec, t.OID, locks.ShareLock); err != nil {
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
	var ix *catalog.IndexDef
	for _, x := range s.Cat().TableIndexes(s.Cat().Tables[t.OID]) {
		if primary && x.Primary || !primary && x.Name == name {
			ix = x
		}
	}
	if ix == nil {
		return nil
	}
	if !t.Partitioned() {
		if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	if !primary {
		nix := *ix
		nix.IsConstraint = true
		s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
	}
	return nil
}

// --- ALTER TABLE

// alterCmd is one compiled ALTER TABLE subcommand.
type alterCmd struct {
	pass int // PostgreSQL's AT_PASS (altertable.go): drops, ALTER TYPE, ADD COLUMN, column attributes, index constraints, checks and foreign keys, validation
	run  func(ec *expr.EvalCtx, t *catalog.TableDef, st *alterState) error
}

// alterState is shared by the subcommands of one ALTER TABLE.
type alterState struct {
	checkNames, indexNames, fkNames []string
	skippedCols                     map[string]bool                // ADD COLUMN IF NOT EXISTS found these (altertable.go)
	phase3                          []func(ec *expr.EvalCtx) error // checks after every pass (ATRewriteTables)
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
// or validate constraints, and through compileAlterColumn (altertable.go)
// the column forms: everything but ATTACH/DETACH PARTITION. The
// table is locked in the strongest mode a subcommand needs
// (AlterTableGetLockLevel): ShareRowExclusiveLock for ADD FOREIGN KEY,
// ShareUpdateExclusiveLock for VALIDATE CONSTRAINT and SET (fillfactor),
// AccessExclusiveLock for the rest.
func (s *Utility) compileAlterConstraints(at *pg.AlterTableStmt, st *plan.Stmt) error {
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
				cmds = append(cmds, alterCmd{pass: passAddIndexConstr, run: func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
					if primary {
						return s.addIndexConstraint(ec, t, name, cols, true)
					}
					return s.addUnique(ec, t, name, cols, &as.indexNames)
				}})
			case pg.ConstrType_CONSTR_CHECK:
				mode = strongerLock(mode, locks.AccessExclusiveLock)
				cmds = append(cmds, alterCmd{pass: passAddOtherConstr, run: func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
					_, err := s.addCheck(ec, t, con, &as.checkNames, false)
					return err
				}})
			case pg.ConstrType_CONSTR_FOREIGN:
				mode = strongerLock(mode, locks.ShareRowExclusiveLock)
				cmds = append(cmds, alterCmd{pass: passAddOtherConstr, run: func(ec *expr.EvalCtx, t *catalog.TableDef, as *alterState) error {
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
			cmds = append(cmds, alterCmd{pass: passDrop, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
				return s.dropConstraint(ec, t, name, missingOK, cascade)
			}})
		case pg.AlterTableType_AT_SetNotNull, pg.AlterTableType_AT_DropNotNull:
			mode = strongerLock(mode, locks.AccessExclusiveLock)
			col, set := cmd.Name, cmd.Subtype == pg.AlterTableType_AT_SetNotNull
			pass := passDrop
			if set {
				pass = passColAttrs
			}
			cmds = append(cmds, alterCmd{pass: pass, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
				return s.setNotNull(ec, t, col, set)
			}})
		case pg.AlterTableType_AT_ValidateConstraint:
			mode = strongerLock(mode, locks.ShareUpdateExclusiveLock)
			name := cmd.Name
			cmds = append(cmds, alterCmd{pass: passMisc, run: func(ec *expr.EvalCtx, t *catalog.TableDef, _ *alterState) error {
				return s.validateConstraint(ec, t, name)
			}})
		default: // the column forms and the rest (altertable.go)
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
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		t, err := s.ResolveTable(rv)
		if err != nil {
			if werr := s.alterWrongKind(rv, first); werr != nil { // an index or a sequence (altertable.go)
				return "", werr
			}
			if missingOK {
				s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("relation \"%s\" does not exist, skipping", rv.Relname))
				return "ALTER TABLE", nil
			}
			return "", NoPosition(err)
		}
		if err := s.LockNow(ec, t.OID, mode); err != nil {
			return "", err
		}
		if t, err = s.ResolveTable(rv); err != nil {
			return "", NoPosition(err)
		}
		// what the subcommands read of the rows (validation, index
		// builds) includes what was committed while the lock was awaited
		defer s.Txn.UseLatestSnapshot()()
		as := &alterState{}
		for _, c := range cmds {
			if err := c.run(ec, t, as); err != nil {
				return "", err
			}
			if t = s.Cat().Tables[t.OID]; t == nil {
				return "", pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", rv.Relname)
			}
		}
		for _, check := range as.phase3 { // altertable.go
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
func (s *Utility) dropConstraint(ec *expr.EvalCtx, t *catalog.TableDef, name string, missingOK, cascade bool) error {
	con, ix := s.Cat().ConstraintNamed(t.OID, name)
	switch {
	case con == nil && ix == nil:
		if slices.ContainsFunc(s.Cat().InheritedConstraints(t), func(c *catalog.ConstraintDef) bool { return c.Name == name }) {
			return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop inherited constraint \"%s\" of relation \"%s\"", name, t.Name)
		}
		if missingOK {
			s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("constraint \"%s\" of relation \"%s\" does not exist, skipping", name, t.Name))
			return nil
		}
		return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", name, t.Name)
	case con != nil && con.IsClone():
		// a partition's share of a foreign key referencing a partitioned
		// table goes only with it (foreignkeypart.go)
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot drop inherited constraint \"%s\" of relation \"%s\"", name, t.Name)
	case con != nil && con.Kind == catalog.ConForeign:
		return s.dropForeignKey(ec, con) // with its clones (foreignkeypart.go)
	case con != nil:
		s.AddCatOp(&catalog.CatOp{Kind: "dropcon", Con: con})
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
	if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	s.AddCatOp(&catalog.CatOp{Kind: "dropindex", Oid: ix.OID, OldFile: ix.RelFile, Index: ix})
	return nil
}

// indexDependents lists the foreign keys that use ix as their referenced
// key.
func (s *Utility) indexDependents(ix *catalog.IndexDef) []*catalog.ConstraintDef {
	var out []*catalog.ConstraintDef
	for _, con := range s.Cat().ReferencingKeys(ix.Table) {
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
func (s *Utility) cascadeOrRefuse(ec *expr.EvalCtx, what string, deps []*catalog.ConstraintDef, on string, cascade bool) error {
	return s.cascadeOrRefuseVia(ec, what, deps, func(int) string { return on }, cascade)
}

// cascadeOrRefuseVia is cascadeOrRefuse with the object each dependency
// is on given per dependency (on(i) for deps[i]).
func (s *Utility) cascadeOrRefuseVia(ec *expr.EvalCtx, what string, deps []*catalog.ConstraintDef, on func(i int) string, cascade bool) error {
	if len(deps) == 0 {
		return nil
	}
	cat := s.Cat()
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
	s.Notices = append(s.Notices, n)
	for _, d := range deps {
		if err := s.dropForeignKey(ec, d); err != nil { // foreignkeypart.go
			return err
		}
	}
	return nil
}

// setNotNull is ALTER TABLE ... ALTER COLUMN col SET | DROP NOT NULL, for
// t and its partitions. SET checks the rows already there.
func (s *Utility) setNotNull(ec *expr.EvalCtx, t *catalog.TableDef, col string, set bool) error {
	i := t.ColIndex(col)
	if i < 0 {
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, t.Name)
	}
	if !set {
		for _, ix := range s.Cat().TableIndexes(t) {
			if ix.Primary && slices.Contains(ix.Cols, i) {
				return pgerr.New(pgerr.InvalidTableDefinition, "column \"%s\" is in a primary key", col)
			}
		}
		if t.Parent != 0 {
			if p := s.Cat().Tables[t.Parent]; p != nil && p.Cols[i].NotNull {
				return pgerr.New(pgerr.InvalidTableDefinition, "column \"%s\" is marked NOT NULL in parent table", col)
			}
		}
	}
	tabs := []*catalog.TableDef{t}
	for j := 0; j < len(tabs); j++ {
		tab := tabs[j]
		if j > 0 {
			if err := s.LockNow(ec, tab.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
		}
		tabs = append(tabs, s.Cat().PartitionChildren(tab)...)
		if tab.Cols[i].NotNull == set {
			continue
		}
		if set && !tab.Partitioned() {
			found := false
			restore := s.Txn.UseLatestSnapshot() // the partition's lock may have been awaited
			err := s.ScanTableTIDs(ec, plan.NewTableSource(tab, tab.Name), func(_ storage.TID, row []types.Datum) error {
				if row[i].Null {
					found = true
					return expr.ErrStopScan
				}
				return nil
			})
			restore()
			if err != nil && err != expr.ErrStopScan {
				return err
			}
			if found {
				return pgerr.New(pgerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", col, tab.Name).OnColumn(tab.Name, col)
			}
		}
		nt := *tab
		nt.Cols = append([]catalog.ColumnDef(nil), tab.Cols...)
		nt.Cols[i].NotNull = set
		s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	}
	return nil
}

// validateConstraint is ALTER TABLE ... VALIDATE CONSTRAINT.
func (s *Utility) validateConstraint(ec *expr.EvalCtx, t *catalog.TableDef, name string) error {
	con, ix := s.Cat().ConstraintNamed(t.OID, name)
	switch {
	case con == nil && ix == nil:
		return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", name, t.Name)
	case con == nil:
		return pgerr.New(pgerr.WrongObjectType, "constraint \"%s\" of relation \"%s\" is not a foreign key or check constraint", name, t.Name)
	case !con.NotValid:
		return nil
	}
	switch con.Kind {
	case catalog.ConCheck:
		tree, err := pg.Parse("SELECT " + con.Expr)
		if err != nil {
			return err
		}
		if err := s.validateCheck(ec, t, con.Name, tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val); err != nil {
			return err
		}
	case catalog.ConForeign:
		if err := s.validateForeignKey(ec, t, con); err != nil {
			return err
		}
	}
	nc := *con
	nc.NotValid = false
	nc.Def = strings.TrimSuffix(nc.Def, " NOT VALID")
	nc.PrettyDef = strings.TrimSuffix(nc.PrettyDef, " NOT VALID")
	s.AddCatOp(&catalog.CatOp{Kind: "setcon", Con: &nc})
	return nil
}

// --- DROP TABLE, DROP INDEX, TRUNCATE

// dropTableKeys handles the foreign keys of a table t that DROP TABLE is
// about to drop, dropping is the set of tables the statement drops: the
// tables t references are locked AccessExclusiveLock (their RI triggers
// go too), and foreign keys of other tables referencing t refuse the
// drop or, with CASCADE, go with it.
func (s *Utility) dropTableKeys(ec *expr.EvalCtx, t *catalog.TableDef, dropping []string, cascade bool) error {
	cat := s.Cat()
	if len(cat.Constraints) == 0 {
		return nil
	}
	var deps []*catalog.ConstraintDef
	var via []string
	if t.Partitioned() || t.Parent != 0 {
		// the keys referencing t's partitions too, through their clones
		deps, via = s.referencedPartitionDeps(t, dropping) // foreignkeypart.go
	} else {
		for _, con := range cat.ReferencingKeys(t.OID) {
			if owner := cat.Tables[con.Table]; owner != nil && owner.OID != t.OID && !slices.Contains(dropping, owner.Name) {
				deps = append(deps, con)
				via = append(via, t.Name)
			}
		}
	}
	if err := s.cascadeOrRefuseVia(ec, "table "+t.Name, deps, func(i int) string { return "table " + via[i] }, cascade); err != nil {
		return err
	}
	for _, con := range cat.TableConstraintDefs(t.OID) {
		if con.Kind == catalog.ConForeign && con.RefTable != t.OID {
			if err := s.LockNow(ec, con.RefTable, locks.AccessExclusiveLock); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropIndexKeys handles DROP INDEX of an index a constraint needs: one
// that implements a unique constraint can only go with it; a unique index
// that foreign keys reference needs CASCADE.
func (s *Utility) dropIndexKeys(ec *expr.EvalCtx, ix *catalog.IndexDef, cascade bool) error {
	t := s.Cat().Tables[ix.Table]
	if ix.IsConstraint {
		return pgerr.New(codeDependentObjects, "cannot drop index %s because constraint %s on table %s requires it", ix.Name, ix.Name, t.Name).
			WithHint("You can drop constraint " + ix.Name + " on table " + t.Name + " instead.")
	}
	return s.cascadeOrRefuse(ec, "index "+ix.Name, s.indexDependents(ix), "index "+ix.Name, cascade)
}

// attachChecks: a table being attached as a partition must already have
// each CHECK constraint of its new ancestors, same name and expression
// (MergeConstraintsIntoExisting).
func (s *Utility) attachChecks(parent, child *catalog.TableDef) error {
	cat := s.Cat()
	for _, a := range append([]*catalog.TableDef{parent}, cat.Ancestors(parent)...) {
		for _, con := range cat.TableConstraintDefs(a.OID) {
			if con.Kind != catalog.ConCheck || con.NoInherit {
				continue
			}
			own, _ := cat.ConstraintNamed(child.OID, con.Name)
			switch {
			case own == nil || own.Kind != catalog.ConCheck:
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
func (s *Utility) attachForeignKeys(ec *expr.EvalCtx, parent, child *catalog.TableDef) error {
	cat := s.Cat()
	for _, a := range append([]*catalog.TableDef{parent}, cat.Ancestors(parent)...) {
		for _, con := range cat.TableConstraintDefs(a.OID) {
			if con.Kind != catalog.ConForeign || con.IsClone() {
				continue
			}
			if err := s.LockNow(ec, con.RefTable, locks.ShareRowExclusiveLock); err != nil {
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
// (DetachPartitionFinalize, foreignkeypart.go).
func (s *Utility) detachConstraints(ec *expr.EvalCtx, child *catalog.TableDef) error {
	for _, con := range s.Cat().InheritedConstraints(child) {
		nc := *con
		nc.OID = s.Catalog.AllocOID()
		nc.Table = child.OID
		s.AddCatOp(&catalog.CatOp{Kind: "addcon", Con: &nc})
		if nc.Kind == catalog.ConForeign {
			if err := s.addReferencedClones(ec, &nc); err != nil {
				return err
			}
		}
	}
	return nil
}
