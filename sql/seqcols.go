package sql

import (
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
)

// Columns that use sequences: serial columns (smallserial, serial,
// bigserial: an integer column with a DEFAULT nextval of a sequence the
// column owns), identity columns (GENERATED ALWAYS | BY DEFAULT AS
// IDENTITY: the same, except that the default is internal and ALWAYS
// refuses other values), column defaults that name a sequence, and what
// dropping and truncating tables does to them (transformColumnDefinition,
// rewriteTargetListIU, the dependency rules of PostgreSQL 15).

// serialTypes maps the serial pseudo-types to their column types.
var serialTypes = map[string]Type{
	"smallserial": TypeInt2, "serial2": TypeInt2,
	"serial": TypeInt4, "serial4": TypeInt4,
	"bigserial": TypeInt8, "serial8": TypeInt8,
}

// columnType is the type of a column definition; serial reports a serial
// pseudo-type, which stands for its integer type.
func columnType(a *analyzer, tn *pg.TypeName) (typ Type, serial bool, err error) {
	schema, name := qualifiedName(tn.Names)
	if t, ok := serialTypes[name]; ok && (schema == "" || schema == "pg_catalog") {
		if len(tn.ArrayBounds) > 0 {
			return Type{}, false, posErr(pgerr.NotSupported("array of serial is not implemented"), tn.Location)
		}
		return t, true, nil
	}
	typ, err = a.typeName(tn)
	return typ, false, err
}

// columnSeq is a serial or identity column of a CREATE TABLE, whose
// sequence is made when the statement runs.
type columnSeq struct {
	col      int        // position of the column
	identity string     // "a", "d"; "" for a serial column
	options  []*pg.Node // the identity's sequence options
}

// addColumnSequence checks a column's serial type or IDENTITY constraint
// (col has the column's other constraints applied) and records the
// sequence it needs.
func addColumnSequence(list []columnSeq, cd *pg.ColumnDef, col *ColumnDef, serial bool, table string, pos int) ([]columnSeq, error) {
	var ident, last *pg.Constraint
	for _, c := range cd.Constraints {
		con := c.GetConstraint()
		last = con
		if con.Contype != pg.ConstrType_CONSTR_IDENTITY {
			continue
		}
		if ident != nil {
			return nil, posErr(pgerr.New(pgerr.SyntaxError, "multiple identity specifications for column \"%s\" of table \"%s\"", cd.Colname, table), con.Location)
		}
		ident = con
	}
	switch {
	case serial:
		// the serial's default comes after the column's constraints
		if col.Default != "" {
			return nil, pgerr.New(pgerr.SyntaxError, "multiple default values specified for column \"%s\" of table \"%s\"", cd.Colname, table)
		}
		if ident != nil {
			return nil, pgerr.New(pgerr.SyntaxError, "both default and identity specified for column \"%s\" of table \"%s\"", cd.Colname, table)
		}
		col.NotNull = true
		return append(list, columnSeq{col: pos}), nil
	case ident != nil:
		if col.Default != "" {
			return nil, posErr(pgerr.New(pgerr.SyntaxError, "both default and identity specified for column \"%s\" of table \"%s\"", cd.Colname, table), last.Location)
		}
		col.NotNull = true
		col.Identity = ident.GeneratedWhen
		return append(list, columnSeq{col: pos, identity: ident.GeneratedWhen, options: ident.Options}), nil
	}
	return list, nil
}

// ownedSeq is a column sequence made for a table being created.
type ownedSeq struct {
	def *SequenceDef
	col int
}

// createColumnSequences makes the sequences of a new table's serial and
// identity columns (before the table, as PostgreSQL runs the CREATE
// SEQUENCE it generates first) and sets the columns' defaults to their
// nextval.
func (s *utility) createColumnSequences(ec *evalCtx, t *TableDef, list []columnSeq) ([]ownedSeq, error) {
	var out []ownedSeq
	for _, cs := range list {
		col := &t.Cols[cs.col]
		def := &SequenceDef{Unlogged: t.Unlogged, Identity: cs.identity != ""}
		var state seqState
		opts, err := s.seqParams(cs.options, cs.identity != "", true, def, &state, col.TypeOID)
		if err != nil {
			return nil, err
		}
		switch {
		case opts.seqName != nil:
			def.Name = opts.seqName[len(opts.seqName)-1]
			if len(opts.seqName) > 1 && opts.seqName[len(opts.seqName)-2] != sequenceNamespaceName {
				return nil, pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", opts.seqName[len(opts.seqName)-2])
			}
			if _, exists := s.cat().byName[def.Name]; exists {
				return nil, pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", def.Name)
			}
		default:
			def.Name = s.cat().chooseRelationName(t.Name, col.Name, "seq", nil) // constraint.go
		}
		if err := s.createSequence(ec, def, state); err != nil {
			return nil, err
		}
		col.Default = "nextval(" + quoteLiteral(quoteIdent(def.Name)) + "::regclass)"
		out = append(out, ownedSeq{def: def, col: cs.col})
	}
	return out, nil
}

// ownColumnSequences makes the new table's columns own their sequences,
// as the ALTER SEQUENCE ... OWNED BY that PostgreSQL generates does (with
// its locks: ShareRowExclusiveLock and RowExclusiveLock on the sequence,
// AccessShareLock on the table).
func (s *utility) ownColumnSequences(ec *evalCtx, table uint32, seqs []ownedSeq) error {
	for _, o := range seqs {
		if err := s.lockNow(ec, o.def.OID, locks.ShareRowExclusiveLock); err != nil {
			return err
		}
		if _, _, _, err := seqOpen(&s.Backend, ec, o.def.OID); err != nil {
			return err
		}
		if err := s.lockNow(ec, table, locks.AccessShareLock); err != nil {
			return err
		}
		nd := *o.def
		nd.OwnedTable, nd.OwnedCol = table, o.col+1
		s.addCatOp(&catOp{kind: "setseq", seq: &nd})
	}
	return nil
}

// stripIdentity drops identity from columns copied to a new partition:
// in PostgreSQL 15 partitions do not inherit their parent's identity
// (rows inserted through the parent still get its values).
func stripIdentity(cols []ColumnDef) {
	for i := range cols {
		if cols[i].Identity != "" {
			cols[i].Identity, cols[i].Default = "", ""
		}
	}
}

// deparseDefault turns a DEFAULT expression into the text kept in the
// catalog. As in PostgreSQL, a sequence function's relation argument is a
// regclass constant: written back as 'name'::regclass, and an error when
// no such relation exists.
func deparseDefault(s *Backend, n *pg.Node) (string, error) {
	if err := regclassArgs(s, n, false); err != nil {
		return "", err
	}
	return deparseExpr(n)
}

var regclassFuncs = map[string]bool{"nextval": true, "currval": true, "setval": true}

// regclassArgs rewrites the regclass constants of an expression tree:
// cast says n is the argument of a ::regclass cast or of a sequence
// function.
func regclassArgs(s *Backend, n *pg.Node, cast bool) error {
	switch {
	case n == nil:
	case n.GetAConst() != nil:
		c := n.GetAConst()
		sv, ok := c.Val.(*pg.A_Const_Sval)
		if !ok || !cast {
			return nil
		}
		d, err := parseRegName(TypeRegclass, sv.Sval.Sval, &s.fc)
		if err != nil {
			return posErr(pgerr.From(err), c.Location)
		}
		if name, ok := s.regName(TypeRegclass, uint32(d.I)); ok {
			sv.Sval.Sval = name // as regclass prints it
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		_, tname := qualifiedName(tc.TypeName.GetNames())
		return regclassArgs(s, tc.Arg, tname == "regclass")
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		_, fname := qualifiedName(fc.Funcname)
		for i, a := range fc.Args {
			if i == 0 && regclassFuncs[fname] && a.GetAConst() != nil {
				if _, ok := a.GetAConst().Val.(*pg.A_Const_Sval); ok {
					if err := regclassArgs(s, a, true); err != nil {
						return err
					}
					fc.Args[0] = &pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: a,
						TypeName: &pg.TypeName{Names: []*pg.Node{pg.MakeStrNode("regclass")}, Typemod: -1, Location: -1}, Location: -1}}}
					continue
				}
			}
			if err := regclassArgs(s, a, false); err != nil {
				return err
			}
		}
	case n.GetAExpr() != nil:
		if err := regclassArgs(s, n.GetAExpr().Lexpr, false); err != nil {
			return err
		}
		return regclassArgs(s, n.GetAExpr().Rexpr, false)
	case n.GetBoolExpr() != nil:
		return regclassList(s, n.GetBoolExpr().Args)
	case n.GetCoalesceExpr() != nil:
		return regclassList(s, n.GetCoalesceExpr().Args)
	case n.GetMinMaxExpr() != nil:
		return regclassList(s, n.GetMinMaxExpr().Args)
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		for _, w := range ce.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				if err := regclassArgs(s, cw.Expr, false); err != nil {
					return err
				}
				if err := regclassArgs(s, cw.Result, false); err != nil {
					return err
				}
			}
		}
		return regclassArgs(s, ce.Defresult, false)
	}
	return nil
}

func regclassList(s *Backend, ns []*pg.Node) error {
	for _, n := range ns {
		if err := regclassArgs(s, n, false); err != nil {
			return err
		}
	}
	return nil
}

// seqUser is a column default that names a sequence.
type seqUser struct {
	t   *TableDef
	col int
}

func (u seqUser) describe() string {
	return "default value for column " + u.t.Cols[u.col].Name + " of table " + quoteIdent(u.t.Name)
}

// sequenceUsers lists the column defaults that name sequence oid (a
// regclass constant, as PostgreSQL records a dependency on it), except
// those of the tables in skip and the identity columns' own defaults.
func (s *utility) sequenceUsers(oid uint32, skip map[uint32]bool) []seqUser {
	cat := s.cat()
	var tabs []*TableDef
	for _, t := range cat.Tables {
		if !skip[t.OID] {
			tabs = append(tabs, t)
		}
	}
	sort.Slice(tabs, func(i, j int) bool { return tabs[i].OID < tabs[j].OID })
	var out []seqUser
	for _, t := range tabs {
		for i := range t.Cols {
			c := &t.Cols[i]
			if c.Default == "" || c.Identity != "" || !strings.Contains(c.Default, "regclass") {
				continue
			}
			e, err := s.compileDefault(newAnalyzer(&s.Backend, nil), c)
			if err == nil && exprNamesRelation(e, oid) {
				out = append(out, seqUser{t: t, col: i})
			}
		}
	}
	return out
}

// exprNamesRelation reports whether e holds the regclass constant oid.
func exprNamesRelation(e expr, oid uint32) bool {
	if c, ok := e.(*constExpr); ok && c.t.OID == OIDRegclass && !c.d.Null && uint32(c.d.I) == oid {
		return true
	}
	for _, p := range exprChildren(e) {
		if exprNamesRelation(*p, oid) {
			return true
		}
	}
	return false
}

// dropSequences drops sequences locked AccessExclusiveLock, after
// PostgreSQL's dependency checks: an identity sequence goes only with its
// table, and column defaults naming a sequence stop a RESTRICT drop and
// are dropped by CASCADE. dropping lists the tables the statement drops;
// orig names what the statement drops, for the error ("" when it names
// several objects).
func (s *utility) dropSequences(ec *evalCtx, oids []uint32, dropping map[uint32]bool, cascade bool, orig string) error {
	cat := s.cat()
	var users []seqUser
	var lines []string
	for _, oid := range oids {
		q := cat.Sequences[oid]
		if q == nil {
			continue
		}
		if q.Identity && !dropping[q.OwnedTable] {
			if t := cat.Tables[q.OwnedTable]; t != nil && q.OwnedCol > 0 && q.OwnedCol <= len(t.Cols) {
				col := t.Cols[q.OwnedCol-1].Name
				return pgerr.New(codeDependentObjects, "cannot drop sequence %s because column %s of table %s requires it", quoteIdent(q.Name), col, quoteIdent(t.Name)).
					WithHint(fmt.Sprintf("You can drop column %s of table %s instead.", col, quoteIdent(t.Name)))
			}
		}
		for _, u := range s.sequenceUsers(oid, dropping) {
			users = append(users, u)
			lines = append(lines, u.describe()+" depends on sequence "+quoteIdent(q.Name))
		}
	}
	if len(users) > 0 && !cascade {
		msg := "cannot drop " + orig + " because other objects depend on it"
		if orig == "" {
			msg = "cannot drop desired object(s) because other objects depend on them"
		}
		return pgerr.New(codeDependentObjects, "%s", msg).WithDetail(strings.Join(lines, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	if len(users) > 0 {
		if len(users) == 1 {
			s.notice(pgerr.SeverityNotice, "00000", "drop cascades to "+users[0].describe())
		} else {
			var detail []string
			for _, u := range users {
				detail = append(detail, "drop cascades to "+u.describe())
			}
			s.notices = append(s.notices, &pgerr.Error{Severity: pgerr.SeverityNotice, Code: "00000",
				Message: fmt.Sprintf("drop cascades to %d other objects", len(users)), Detail: strings.Join(detail, "\n")})
		}
		for _, u := range users {
			if err := s.lockNow(ec, u.t.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
			nt := *s.cat().Tables[u.t.OID]
			nt.Cols = append([]ColumnDef(nil), nt.Cols...)
			nt.Cols[u.col].Default = ""
			s.addCatOp(&catOp{kind: "settable", table: &nt})
		}
	}
	for _, oid := range oids {
		if q := s.cat().Sequences[oid]; q != nil {
			s.addCatOp(&catOp{kind: "dropseq", oid: oid, oldFile: q.RelFile})
		}
	}
	return nil
}

// dropOwnedSequences drops, with the tables a DROP TABLE dropped, the
// sequences their columns own (serial, identity, OWNED BY). before is the
// catalog as the statement began; names are the tables it named.
func (s *utility) dropOwnedSequences(ec *evalCtx, before *catalogState, names []string, cascade bool) error {
	dropped := map[uint32]bool{}
	var oids []uint32
	var tabs []*TableDef
	for _, t := range before.Tables {
		if s.cat().Tables[t.OID] == nil {
			dropped[t.OID] = true
			tabs = append(tabs, t)
		}
	}
	sort.Slice(tabs, func(i, j int) bool { return tabs[i].OID < tabs[j].OID })
	for _, t := range tabs {
		for _, q := range s.cat().ownedSequences(t.OID) {
			if err := s.lockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
			oids = append(oids, q.OID)
		}
	}
	if len(oids) == 0 {
		return nil
	}
	orig := ""
	if len(names) == 1 {
		orig = "table " + quoteIdent(names[0])
	}
	return s.dropSequences(ec, oids, dropped, cascade, orig)
}

// restartIdentity is TRUNCATE ... RESTART IDENTITY: the sequences owned by
// the truncated tables' columns start again (ResetSequence, which gives
// each new storage, so a rollback undoes it). rvs are the tables named
// (their partitioned ones own sequences too), leaves the tables truncated
// (with those CASCADE added).
func (s *utility) restartIdentity(ec *evalCtx, rvs []*pg.RangeVar, leaves []*TableDef) error {
	seen := map[uint32]bool{}
	var seqs []*SequenceDef
	add := func(t *TableDef) {
		for _, q := range s.cat().ownedSequences(t.OID) {
			if !seen[q.OID] {
				seen[q.OID] = true
				seqs = append(seqs, q)
			}
		}
	}
	for _, rv := range rvs {
		t, err := s.resolveTable(rv)
		if err != nil {
			return err
		}
		add(t)
		for _, k := range s.cat().lockTableDescendants(t, rv.Inh) {
			add(k)
		}
	}
	for _, t := range leaves {
		add(t)
	}
	for _, q := range seqs {
		if err := s.lockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	for _, q := range seqs {
		elm, q, _, err := seqOpen(&s.Backend, ec, q.OID)
		if err != nil {
			return err
		}
		nd := *q
		if err := s.seqLogged(&nd); err != nil {
			return err
		}
		nd.RelFile = s.catalog.allocOID()
		s.seqs.create(nd.RelFile, seqState{LastValue: q.Start})
		s.addCatOp(&catOp{kind: "setseq", seq: &nd, relfile: nd.RelFile, oldFile: q.RelFile})
		elm.cached = elm.last
	}
	return nil
}

// checkSequenceUse applies, before a statement is analysed, the rules
// for sequences named where a table is expected and for identity
// columns: INSERT and UPDATE of a GENERATED ALWAYS column (428C9), and
// OVERRIDING USER VALUE, which gives identity columns their default.
func checkSequenceUse(s *Backend, n *pg.Node) error {
	cat := s.cat()
	if len(cat.Sequences) == 0 {
		return nil
	}
	seq := func(rv *pg.RangeVar) *SequenceDef {
		if rv == nil || (rv.Schemaname != "" && rv.Schemaname != sequenceNamespaceName) {
			return nil
		}
		return cat.sequence(rv.Relname)
	}
	notSupported := func(msg, name string) error {
		return pgerr.New(pgerr.WrongObjectType, msg, name).WithDetail("This operation is not supported for sequences.")
	}
	switch {
	case n.GetInsertStmt() != nil:
		ins := n.GetInsertStmt()
		if q := seq(ins.Relation); q != nil {
			return pgerr.New(pgerr.WrongObjectType, "cannot change sequence \"%s\"", q.Name)
		}
		return identityInsert(s, ins)
	case n.GetUpdateStmt() != nil:
		up := n.GetUpdateStmt()
		if q := seq(up.Relation); q != nil {
			return pgerr.New(pgerr.WrongObjectType, "cannot change sequence \"%s\"", q.Name)
		}
		return identityUpdate(s, up)
	case n.GetDeleteStmt() != nil:
		if q := seq(n.GetDeleteStmt().Relation); q != nil {
			return pgerr.New(pgerr.WrongObjectType, "cannot change sequence \"%s\"", q.Name)
		}
	case n.GetCopyStmt() != nil:
		cs := n.GetCopyStmt()
		if q := seq(cs.Relation); q != nil {
			if cs.IsFrom {
				return pgerr.New(pgerr.WrongObjectType, "cannot copy to sequence \"%s\"", q.Name)
			}
			return pgerr.New(pgerr.WrongObjectType, "cannot copy from sequence \"%s\"", q.Name)
		}
	case n.GetTruncateStmt() != nil:
		for _, r := range n.GetTruncateStmt().Relations {
			if q := seq(r.GetRangeVar()); q != nil {
				return pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a table", q.Name)
			}
		}
	case n.GetLockStmt() != nil:
		if s.tx != txBlock {
			return nil // LOCK TABLE's transaction-block check comes first
		}
		for _, r := range n.GetLockStmt().Relations {
			if q := seq(r.GetRangeVar()); q != nil {
				return notSupported("cannot lock relation \"%s\"", q.Name)
			}
		}
	case n.GetIndexStmt() != nil:
		if q := seq(n.GetIndexStmt().Relation); q != nil {
			return notSupported("cannot create index on relation \"%s\"", q.Name)
		}
	case n.GetAlterTableStmt() != nil:
		at := n.GetAlterTableStmt()
		if q := seq(at.Relation); q != nil && at.Objtype == pg.ObjectType_OBJECT_TABLE {
			for _, c := range at.Cmds {
				if c.GetAlterTableCmd().GetSubtype() == pg.AlterTableType_AT_AddConstraint {
					return notSupported("ALTER action ADD CONSTRAINT cannot be performed on relation \"%s\"", q.Name)
				}
			}
		}
	}
	return nil
}

func generatedAlways(msg, col string) *pgerr.Error {
	return pgerr.New(codeGeneratedAlways, msg, col).
		WithDetail(fmt.Sprintf("Column \"%s\" is an identity column defined as GENERATED ALWAYS.", col))
}

// identityInsert is rewriteTargetListIU for identity columns. OVERRIDING
// USER VALUE turns the values given for them into DEFAULT; the change is
// made in the parse tree, and is the same when made again.
func identityInsert(s *Backend, ins *pg.InsertStmt) error {
	t, err := s.resolveTable(ins.Relation)
	if err != nil {
		return nil // compileInsert reports it
	}
	has := false
	for i := range t.Cols {
		has = has || t.Cols[i].Identity != ""
	}
	if !has {
		return nil
	}
	var targets []int
	if len(ins.Cols) == 0 {
		for i := range t.Cols {
			targets = append(targets, i)
		}
	}
	for _, c := range ins.Cols {
		i := t.colIndex(c.GetResTarget().GetName())
		if i < 0 {
			return nil // compileInsert reports it
		}
		targets = append(targets, i)
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil {
		return nil // DEFAULT VALUES
	}
	for j, c := range targets {
		col := &t.Cols[c]
		if col.Identity == "" {
			continue
		}
		switch ins.Override {
		case pg.OverridingKind_OVERRIDING_SYSTEM_VALUE:
		case pg.OverridingKind_OVERRIDING_USER_VALUE:
			if len(sel.ValuesLists) == 0 {
				return pgerr.NotSupported("OVERRIDING USER VALUE with INSERT ... SELECT is not supported")
			}
			for _, vl := range sel.ValuesLists {
				items := vl.GetList().GetItems()
				if j < len(items) && items[j].GetSetToDefault() == nil {
					items[j] = &pg.Node{Node: &pg.Node_SetToDefault{SetToDefault: &pg.SetToDefault{Location: exprLocation(items[j])}}}
				}
			}
		default:
			if col.Identity != "a" {
				continue
			}
			ok := len(sel.ValuesLists) > 0
			for _, vl := range sel.ValuesLists {
				items := vl.GetList().GetItems()
				if j < len(items) && items[j].GetSetToDefault() == nil {
					ok = false
				}
			}
			if !ok {
				return generatedAlways("cannot insert a non-DEFAULT value into column \"%s\"", col.Name).
					WithHint("Use OVERRIDING SYSTEM VALUE to override.")
			}
		}
	}
	return nil
}

// identityUpdate refuses to set a GENERATED ALWAYS column to anything but
// DEFAULT.
func identityUpdate(s *Backend, up *pg.UpdateStmt) error {
	t, err := s.resolveTable(up.Relation)
	if err != nil {
		return nil
	}
	return identitySetList(t, up.TargetList)
}

// identitySetList is identityUpdate's check of one SET list of table t
// (UPDATE, or INSERT ... ON CONFLICT DO UPDATE).
func identitySetList(t *TableDef, targets []*pg.Node) error {
	for _, n := range targets {
		rt := n.GetResTarget()
		i := t.colIndex(rt.GetName())
		if i < 0 || t.Cols[i].Identity != "a" {
			continue
		}
		val := rt.Val
		if m := val.GetMultiAssignRef(); m != nil {
			val = nil
			if r := m.Source.GetRowExpr(); r != nil && int(m.Colno) <= len(r.Args) {
				val = r.Args[m.Colno-1]
			}
		}
		if val.GetSetToDefault() == nil {
			return generatedAlways("column \"%s\" can only be updated to DEFAULT", t.Cols[i].Name)
		}
	}
	return nil
}

// skipSequence is VACUUM's and ANALYZE's answer to a sequence: a warning,
// and nothing done.
func skipSequence(s *Backend, rv *pg.RangeVar, tag string) bool {
	q := s.rangeSequence(rv)
	if q == nil {
		return false
	}
	s.notice(pgerr.SeverityWarning, pgerr.Warning, fmt.Sprintf("skipping \"%s\" --- cannot %s non-tables or special system tables", q.Name, strings.ToLower(tag)))
	return true
}

// serialSequence is pg_get_serial_sequence(table, column): the sequence
// owned by a column (serial, identity or OWNED BY), schema-qualified.
func serialSequence(ec *evalCtx, v []Datum) (Datum, error) {
	s := ec.s
	parts, err := splitQualifiedName(v[0].S)
	if err != nil {
		return Datum{}, err
	}
	name := parts[len(parts)-1]
	cat := s.cat()
	oid, ok := cat.byName[name]
	if !ok || (len(parts) > 1 && parts[len(parts)-2] != sequenceNamespaceName) {
		return Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", strings.Join(parts, "."))
	}
	col := -1
	if t := cat.Tables[oid]; t != nil {
		col = t.colIndex(v[1].S)
	}
	if col < 0 {
		return Datum{}, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", v[1].S, name)
	}
	for _, q := range cat.ownedSequences(oid) {
		if q.OwnedCol == col+1 {
			return textDatum(quoteIdent(sequenceNamespaceName) + "." + quoteIdent(q.Name)), nil
		}
	}
	return NullDatum, nil
}
