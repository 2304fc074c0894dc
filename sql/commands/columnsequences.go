package commands

import (
	"fmt"
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// Columns that use sequences: serial columns (smallserial, serial,
// bigserial: an integer column with a DEFAULT nextval of a sequence the
// column owns), identity columns (GENERATED ALWAYS | BY DEFAULT AS
// IDENTITY: the same, except that the default is internal and ALWAYS
// refuses other values), column defaults that name a sequence, and what
// dropping and truncating tables does to them (transformColumnDefinition,
// rewriteTargetListIU, the dependency rules of PostgreSQL 15).

// serialTypes maps the serial pseudo-types to their column types.
var serialTypes = map[string]types.Type{
	"smallserial": types.TypeInt2, "serial2": types.TypeInt2,
	"serial": types.TypeInt4, "serial4": types.TypeInt4,
	"bigserial": types.TypeInt8, "serial8": types.TypeInt8,
}

// columnType is the type of a column definition; serial reports a serial
// pseudo-type, which stands for its integer type.
func columnType(a *analyze.Analyzer, tn *pg.TypeName) (typ types.Type, serial bool, err error) {
	schema, name := analyze.QualifiedName(tn.Names)
	if t, ok := serialTypes[name]; ok && (schema == "" || schema == "pg_catalog") {
		if len(tn.ArrayBounds) > 0 {
			return types.Type{}, false, expr.PosErr(pgerr.NotSupported("array of serial is not implemented"), tn.Location)
		}
		return t, true, nil
	}
	typ, err = a.TypeName(tn)
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
func addColumnSequence(list []columnSeq, cd *pg.ColumnDef, col *catalog.ColumnDef, serial bool, table string, pos int) ([]columnSeq, error) {
	var ident, last *pg.Constraint
	for _, c := range cd.Constraints {
		con := c.GetConstraint()
		last = con
		if con.Contype != pg.ConstrType_CONSTR_IDENTITY {
			continue
		}
		if ident != nil {
			return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "multiple identity specifications for column \"%s\" of table \"%s\"", cd.Colname, table), con.Location)
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
			return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "both default and identity specified for column \"%s\" of table \"%s\"", cd.Colname, table), last.Location)
		}
		col.NotNull = true
		col.Identity = ident.GeneratedWhen
		return append(list, columnSeq{col: pos, identity: ident.GeneratedWhen, options: ident.Options}), nil
	}
	return list, nil
}

// ownedSeq is a column sequence made for a table being created.
type ownedSeq struct {
	def *catalog.SequenceDef
	col int
}

// createColumnSequences makes the sequences of a new table's serial and
// identity columns (before the table, as PostgreSQL runs the CREATE
// SEQUENCE it generates first) and sets the columns' defaults to their
// nextval.
func (s *Utility) createColumnSequences(ec *expr.EvalCtx, t *catalog.TableDef, list []columnSeq) ([]ownedSeq, error) {
	var out []ownedSeq
	for _, cs := range list {
		col := &t.Cols[cs.col]
		def := &catalog.SequenceDef{Unlogged: t.Unlogged, Identity: cs.identity != ""}
		var state catalog.SeqState
		opts, err := s.seqParams(cs.options, cs.identity != "", true, def, &state, col.TypeOID)
		if err != nil {
			return nil, err
		}
		switch {
		case opts.seqName != nil:
			def.Name = opts.seqName[len(opts.seqName)-1]
			if len(opts.seqName) > 1 && opts.seqName[len(opts.seqName)-2] != catalog.SequenceNamespaceName {
				return nil, pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", opts.seqName[len(opts.seqName)-2])
			}
			if _, exists := s.Cat().ByName[def.Name]; exists {
				return nil, pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", def.Name)
			}
		default:
			def.Name = s.Cat().ChooseRelationName(t.Name, col.Name, "seq", nil) // constraint.go
		}
		if err := s.createSequence(ec, def, state); err != nil {
			return nil, err
		}
		col.Default = "nextval(" + funcs.QuoteLiteral(types.QuoteIdent(def.Name)) + "::regclass)"
		out = append(out, ownedSeq{def: def, col: cs.col})
	}
	return out, nil
}

// ownColumnSequences makes the new table's columns own their sequences,
// as the ALTER SEQUENCE ... OWNED BY that PostgreSQL generates does (with
// its locks: ShareRowExclusiveLock and RowExclusiveLock on the sequence,
// AccessShareLock on the table).
func (s *Utility) ownColumnSequences(ec *expr.EvalCtx, table uint32, seqs []ownedSeq) error {
	for _, o := range seqs {
		if err := s.LockNow(ec, o.def.OID, locks.ShareRowExclusiveLock); err != nil {
			return err
		}
		if _, _, _, err := funcs.SeqOpen(&s.Backend, ec, o.def.OID); err != nil {
			return err
		}
		if err := s.LockNow(ec, table, locks.AccessShareLock); err != nil {
			return err
		}
		nd := *o.def
		nd.OwnedTable, nd.OwnedCol = table, o.col+1
		s.AddCatOp(&catalog.CatOp{Kind: "setseq", Seq: &nd})
	}
	return nil
}

// stripIdentity drops identity from columns copied to a new partition:
// in PostgreSQL 15 partitions do not inherit their parent's identity
// (rows inserted through the parent still get its values).
func stripIdentity(cols []catalog.ColumnDef) {
	for i := range cols {
		if cols[i].Identity != "" {
			cols[i].Identity, cols[i].Default = "", ""
		}
	}
}

// seqUser is a column default that names a sequence.
type seqUser struct {
	t   *catalog.TableDef
	col int
}

func (u seqUser) describe() string {
	return "default value for column " + u.t.Cols[u.col].Name + " of table " + types.QuoteIdent(u.t.Name)
}

// sequenceUsers lists the column defaults that name sequence oid (a
// regclass constant, as PostgreSQL records a dependency on it), except
// those of the tables in skip and the identity columns' own defaults.
func (s *Utility) sequenceUsers(oid uint32, skip map[uint32]bool) []seqUser {
	cat := s.Cat()
	var tabs []*catalog.TableDef
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
			e, err := s.CompileDefault(plan.NewAnalyzer(&s.Backend, nil), c)
			if err == nil && exprNamesRelation(e, oid) {
				out = append(out, seqUser{t: t, col: i})
			}
		}
	}
	return out
}

// exprNamesRelation reports whether e holds the regclass constant oid.
func exprNamesRelation(e expr.Expr, oid uint32) bool {
	if c, ok := e.(*expr.ConstExpr); ok && c.T.OID == types.OIDRegclass && !c.D.Null && uint32(c.D.I) == oid {
		return true
	}
	for _, p := range expr.ExprChildren(e) {
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
func (s *Utility) dropSequences(ec *expr.EvalCtx, oids []uint32, dropping map[uint32]bool, cascade bool, orig string) error {
	cat := s.Cat()
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
				return pgerr.New(codeDependentObjects, "cannot drop sequence %s because column %s of table %s requires it", types.QuoteIdent(q.Name), col, types.QuoteIdent(t.Name)).
					WithHint(fmt.Sprintf("You can drop column %s of table %s instead.", col, types.QuoteIdent(t.Name)))
			}
		}
		for _, u := range s.sequenceUsers(oid, dropping) {
			users = append(users, u)
			lines = append(lines, u.describe()+" depends on sequence "+types.QuoteIdent(q.Name))
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
			s.Notice(pgerr.SeverityNotice, "00000", "drop cascades to "+users[0].describe())
		} else {
			var detail []string
			for _, u := range users {
				detail = append(detail, "drop cascades to "+u.describe())
			}
			s.Notices = append(s.Notices, &pgerr.Error{Severity: pgerr.SeverityNotice, Code: "00000",
				Message: fmt.Sprintf("drop cascades to %d other objects", len(users)), Detail: strings.Join(detail, "\n")})
		}
		for _, u := range users {
			if err := s.LockNow(ec, u.t.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
			nt := *s.Cat().Tables[u.t.OID]
			nt.Cols = append([]catalog.ColumnDef(nil), nt.Cols...)
			nt.Cols[u.col].Default = ""
			s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
		}
	}
	for _, oid := range oids {
		if q := s.Cat().Sequences[oid]; q != nil {
			s.AddCatOp(&catalog.CatOp{Kind: "dropseq", Oid: oid, OldFile: q.RelFile})
		}
	}
	return nil
}

// dropOwnedSequences drops, with the tables a DROP TABLE dropped, the
// sequences their columns own (serial, identity, OWNED BY). before is the
// catalog as the statement began; names are the tables it named.
func (s *Utility) dropOwnedSequences(ec *expr.EvalCtx, before *catalog.CatalogState, names []string, cascade bool) error {
	dropped := map[uint32]bool{}
	var oids []uint32
	var tabs []*catalog.TableDef
	for _, t := range before.Tables {
		if s.Cat().Tables[t.OID] == nil {
			dropped[t.OID] = true
			tabs = append(tabs, t)
		}
	}
	sort.Slice(tabs, func(i, j int) bool { return tabs[i].OID < tabs[j].OID })
	for _, t := range tabs {
		for _, q := range s.Cat().OwnedSequences(t.OID) {
			if err := s.LockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
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
		orig = "table " + types.QuoteIdent(names[0])
	}
	return s.dropSequences(ec, oids, dropped, cascade, orig)
}

// restartIdentity is TRUNCATE ... RESTART IDENTITY: the sequences owned by
// the truncated tables' columns start again (ResetSequence, which gives
// each new storage, so a rollback undoes it). rvs are the tables named
// (their partitioned ones own sequences too), leaves the tables truncated
// (with those CASCADE added).
func (s *Utility) restartIdentity(ec *expr.EvalCtx, rvs []*pg.RangeVar, leaves []*catalog.TableDef) error {
	seen := map[uint32]bool{}
	var seqs []*catalog.SequenceDef
	add := func(t *catalog.TableDef) {
		for _, q := range s.Cat().OwnedSequences(t.OID) {
			if !seen[q.OID] {
				seen[q.OID] = true
				seqs = append(seqs, q)
			}
		}
	}
	for _, rv := range rvs {
		t, err := s.ResolveTable(rv)
		if err != nil {
			return err
		}
		add(t)
		for _, k := range s.Cat().LockTableDescendants(t, rv.Inh) {
			add(k)
		}
	}
	for _, t := range leaves {
		add(t)
	}
	for _, q := range seqs {
		if err := s.LockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	for _, q := range seqs {
		elm, q, _, err := funcs.SeqOpen(&s.Backend, ec, q.OID)
		if err != nil {
			return err
		}
		nd := *q
		if err := s.SeqLogged(&nd); err != nil {
			return err
		}
		nd.RelFile = s.Catalog.AllocOID()
		s.Seqs.Create(nd.RelFile, catalog.SeqState{LastValue: q.Start})
		s.AddCatOp(&catalog.CatOp{Kind: "setseq", Seq: &nd, Relfile: nd.RelFile, OldFile: q.RelFile})
		elm.Cached = elm.Last
	}
	return nil
}
