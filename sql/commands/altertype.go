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

// ALTER [COLUMN] c [SET DATA] TYPE type [USING expr] (ATPrepAlterColumnType,
// ATExecAlterColumnType, ATPostAlterTypeCleanup). The values are converted
// by the USING expression, or by an assignment cast of the column; when
// the new type stores values differently the table is rewritten and every
// index rebuilt (sql/exec/rewrite.go), otherwise (varchar(n) to a longer varchar or
// to text, a looser numeric) only the indexes on the column are rebuilt,
// keeping their files. The indexes, CHECK constraints and foreign keys on
// the column are then made again: PostgreSQL gives them new OIDs, lockd
// keeps theirs; checks and foreign keys are checked against the rows.

// alterColumnType changes column name of t to typ and, unless ONLY, of
// t's partitions.
func (s *Utility) alterColumnType(ec *expr.EvalCtx, t *catalog.TableDef, name string, typ types.Type, using *pg.Node, recurse, recursing bool) error {
	if plan.IsSystemColumn(name) {
		return pgerr.NotSupported("cannot alter system column \"%s\"", name)
	}
	i := t.ColIndex(name)
	cat := s.Cat()
	switch {
	case i < 0:
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
	case t.Parent != 0 && !recursing:
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot alter inherited column \"%s\"", name)
	case t.Partitioned() && slices.Contains(t.PartKey, i):
		return pgerr.New(pgerr.InvalidTableDefinition, "cannot alter column \"%s\" because it is part of the partition key of relation \"%s\"", name, t.Name)
	case t.Partitioned() && !recurse && len(cat.PartitionChildren(t)) > 0:
		return pgerr.New(pgerr.InvalidTableDefinition, "type of inherited column \"%s\" must be changed in child tables too", name)
	}
	col := t.Cols[i]
	if col.Identity != "" && typ.OID != types.OIDInt2 && typ.OID != types.OIDInt4 && typ.OID != types.OIDInt8 {
		return pgerr.New(pgerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
	}
	conv, err := s.transformExpr(t, i, typ, using)
	if err != nil {
		return err
	}
	nc := col
	nc.TypeOID, nc.TypeMod = typ.OID, typ.Mod
	if col.Default != "" {
		if _, err := s.compileColumnDefault(&nc, col.Default); err != nil {
			return pgerr.New(pgerr.DatatypeMismatch, "default for column \"%s\" cannot be cast automatically to type %s", name, types.FormatType(typ.OID, -1))
		}
	}
	nt := *t
	nt.Cols = append([]catalog.ColumnDef(nil), t.Cols...)
	nt.Cols[i] = nc
	switch {
	case t.Partitioned():
		s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	case typeChangeRewrites(col.Type(), typ, using, name):
		if err := s.RewriteTable(ec, t, &nt, func(ec *expr.EvalCtx, old, row []types.Datum) error {
			copy(row, old[:len(row)])
			v, err := conv.Eval(ec, old)
			row[i] = v
			return err
		}); err != nil {
			return err
		}
	default:
		// the indexes on the column are made again over the same files:
		// DefineIndex's ShareLock, the old index's AccessExclusiveLock
		var rebuilt []*catalog.IndexDef
		for _, ix := range cat.TableIndexes(t) {
			if slices.Contains(ix.Cols, i) {
				rebuilt = append(rebuilt, ix)
			}
		}
		if len(rebuilt) > 0 {
			if err := s.LockNow(ec, t.OID, locks.ShareLock); err != nil {
				return err
			}
		}
		for _, ix := range rebuilt {
			if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
				return err
			}
		}
		s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &nt})
	}
	// a re-made index names its attributes after the columns again
	for _, ix := range s.Cat().TableIndexes(s.Cat().Tables[t.OID]) {
		if ix.ColNames != nil && slices.Contains(ix.Cols, i) {
			nix := *ix
			nix.ColNames = nil
			s.AddCatOp(&catalog.CatOp{Kind: "setindex", Index: &nix})
		}
	}
	if col.Identity != "" {
		if err := s.alterIdentityType(ec, t, i, typ); err != nil {
			return err
		}
	}
	for _, k := range s.Cat().PartitionChildren(s.Cat().Tables[t.OID]) {
		if err := s.LockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
		if err := s.alterColumnType(ec, s.Cat().Tables[k.OID], name, typ, using, true, true); err != nil {
			return err
		}
	}
	return s.remakeColumnConstraints(ec, s.Cat().Tables[t.OID], i)
}

// transformExpr compiles the expression that computes column i's new
// value of type typ from a row of t (ATPrepAlterColumnType).
func (s *Utility) transformExpr(t *catalog.TableDef, i int, typ types.Type, using *pg.Node) (expr.Expr, error) {
	name := t.Cols[i].Name
	a := plan.NewAnalyzer(&s.Backend, nil)
	plan.SingleTable(a, plan.NewTableSource(t, t.Name), t.Name)
	if using == nil {
		from := t.Cols[i].Type()
		if !analyze.Assignable(from, typ) {
			return nil, pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" cannot be cast automatically to type %s", name, types.FormatType(typ.OID, -1)).
				WithHint(fmt.Sprintf("You might need to specify \"USING %s::%s\".", types.QuoteIdent(name), types.FormatType(typ.OID, typ.Mod)))
		}
		return a.CastTo(&expr.ColExpr{I: i, T: from}, typ, false)
	}
	if loc, ok := analyze.FindSubLink(using); ok {
		return nil, expr.PosErr(pgerr.NotSupported("cannot use subquery in transform expression"), loc)
	}
	a.AggCtx = "transform expressions"
	e, err := a.Expr(using)
	if err != nil {
		return nil, err
	}
	if analyze.IsUnknown(e) {
		e, err = a.CoerceUnknown(e, typ)
		return e, NoPosition(err)
	}
	if !analyze.Assignable(e.Type(), typ) {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "result of USING clause for column \"%s\" cannot be cast automatically to type %s", name, types.FormatType(typ.OID, -1)).
			WithHint("You might need to add an explicit cast.")
	}
	return a.CastTo(e, typ, false)
}

// typeChangeRewrites is ATColumnChangeRequiresRewrite for lockd's storage:
// false when the values keep their bytes — the same type with a looser
// modifier (varchar_support, numeric_support, timestamp_support), or
// between text and an unconstrained varchar — and no USING expression
// other than the column itself.
func typeChangeRewrites(from, to types.Type, using *pg.Node, col string) bool {
	if using != nil {
		if name, _, ok := analyze.BareColumnName(using); !ok || name != col {
			return true
		}
	}
	looser := func() bool { return to.Mod < 0 || from.Mod >= 0 && to.Mod >= from.Mod }
	switch {
	case from.OID == to.OID && from.Mod == to.Mod:
		return false
	case from.OID == to.OID && (from.OID == types.OIDVarchar || from.OID == types.OIDTimestamp || from.OID == types.OIDTimestamptz):
		return !looser()
	case from.OID == types.OIDNumeric && to.OID == types.OIDNumeric:
		// numeric typmods are (precision << 16 | scale) + 4
		return !(to.Mod < 0 || from.Mod >= 0 && (to.Mod-4)&0xffff == (from.Mod-4)&0xffff && to.Mod >= from.Mod)
	case from.OID == types.OIDVarchar && to.OID == types.OIDText:
		return false
	case from.OID == types.OIDText && to.OID == types.OIDVarchar:
		return to.Mod >= 0
	}
	return true
}

// remakeColumnConstraints re-makes t's CHECK constraints and foreign keys
// on column i after its type changed: a CHECK is compiled again (an
// operator may no longer apply) and checked against the rows; a foreign
// key's column types must still be comparable, and its rows are checked.
func (s *Utility) remakeColumnConstraints(ec *expr.EvalCtx, t *catalog.TableDef, i int) error {
	cat := s.Cat()
	for _, con := range cat.TableConstraintDefs(t.OID) {
		if con.Kind != catalog.ConCheck || !slices.Contains(con.Cols, i) {
			continue
		}
		raw, err := analyze.ParseExprText(con.Expr)
		if err != nil {
			return err
		}
		if _, err := s.CompileCheck(t, raw); err != nil {
			return NoPosition(err)
		}
		if err := s.validateCheck(ec, t, con.Name, raw); err != nil {
			return err
		}
		nc := *con
		nc.Def, nc.PrettyDef = s.CheckDefsOf(t, raw, con)
		// PostgreSQL makes the constraint again from its definition's
		// text, coercions included: a later type change of another of its
		// columns reads (m)::numeric, not m
		def, _ := s.CheckDefs(t, raw)
		if inner := strings.TrimSuffix(strings.TrimPrefix(def, "CHECK ("), ")"); inner != def {
			if _, err := s.CompileCheckText(t, inner); err == nil {
				nc.Expr = inner
			}
		}
		s.AddCatOp(&catalog.CatOp{Kind: "setcon", Con: &nc})
	}
	// a clone (foreignkeypart.go) is checked with its foreign key, at the table
	// the key names
	var fks []*catalog.ConstraintDef
	for _, con := range cat.TableConstraintDefs(t.OID) {
		if con.Kind == catalog.ConForeign && !con.IsClone() && slices.Contains(con.Cols, i) {
			fks = append(fks, con)
		}
	}
	for _, con := range cat.ReferencingKeys(t.OID) {
		if !con.IsClone() && slices.Contains(con.RefCols, i) && !slices.Contains(fks, con) {
			fks = append(fks, con)
		}
	}
	for _, con := range fks {
		child, parent := cat.Tables[con.Table], cat.Tables[con.RefTable]
		// dropped (the other table's triggers go: AccessExclusiveLock)
		// and added again (ShareRowExclusiveLock and AccessShareLock on
		// both), as ATPostAlterTypeCleanup does
		for _, oid := range []uint32{con.Table, con.RefTable} {
			if oid != t.OID {
				if err := s.LockNow(ec, oid, locks.AccessExclusiveLock); err != nil {
					return err
				}
			}
		}
		for _, mode := range []locks.LockMode{locks.ShareRowExclusiveLock, locks.AccessShareLock} {
			for _, oid := range []uint32{con.Table, con.RefTable} {
				if err := s.LockNow(ec, oid, mode); err != nil {
					return err
				}
			}
		}
		// and so are its clones for the partitions it references
		// (foreignkeypart.go): their triggers go and come back
		for _, c := range cat.ConstraintClones(con) {
			for _, mode := range []locks.LockMode{locks.AccessExclusiveLock, locks.ShareRowExclusiveLock} {
				if err := s.LockNow(ec, c.RefTable, mode); err != nil {
					return err
				}
			}
		}
		for k := range con.Cols {
			fc, pc := &child.Cols[con.Cols[k]], &parent.Cols[con.RefCols[k]]
			if !fkTypesCompatible(fc.Type(), pc.Type()) {
				return pgerr.New(pgerr.DatatypeMismatch, "foreign key constraint \"%s\" cannot be implemented", con.Name).
					WithDetail(fmt.Sprintf("Key columns \"%s\" and \"%s\" are of incompatible types: %s and %s.",
						fc.Name, pc.Name, types.FormatType(fc.TypeOID, -1), types.FormatType(pc.TypeOID, -1)))
			}
		}
		if !con.NotValid {
			if err := s.validateForeignKey(ec, child, con); err != nil {
				return err
			}
		}
	}
	return nil
}

// alterIdentityType gives the sequence of identity column i of t the
// column's new type, as ATExecAlterColumnType's ALTER SEQUENCE ... AS does:
// bounds that were the old type's limits become the new one's.
func (s *Utility) alterIdentityType(ec *expr.EvalCtx, t *catalog.TableDef, i int, typ types.Type) error {
	for _, q := range s.Cat().OwnedSequences(t.OID) {
		if !q.Identity || q.OwnedCol != i+1 {
			continue
		}
		for _, mode := range []locks.LockMode{locks.ShareRowExclusiveLock, locks.RowExclusiveLock} {
			if err := s.LockNow(ec, q.OID, mode); err != nil {
				return err
			}
		}
		nq := *q
		lo, hi := seqTypeLimits(q.TypeOID)
		nlo, nhi := seqTypeLimits(typ.OID)
		if nq.Max == hi {
			nq.Max = nhi
		}
		if nq.Min == lo {
			nq.Min = nlo
		}
		nq.TypeOID = typ.OID
		name := types.FormatType(typ.OID, -1)
		switch {
		case nq.Max < nlo || nq.Max > nhi:
			return pgerr.New(pgerr.InvalidParameterValue, "MAXVALUE (%d) is out of range for sequence data type %s", nq.Max, name)
		case nq.Min < nlo || nq.Min > nhi:
			return pgerr.New(pgerr.InvalidParameterValue, "MINVALUE (%d) is out of range for sequence data type %s", nq.Min, name)
		}
		s.AddCatOp(&catalog.CatOp{Kind: "setseq", Seq: &nq})
	}
	return nil
}
