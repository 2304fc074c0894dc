package analyze

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// deparseDefault turns a DEFAULT expression into the text kept in the
// catalog. As in PostgreSQL, a sequence function's relation argument is a
// regclass constant: written back as 'name'::regclass, and an error when
// no such relation exists.
func DeparseDefault(s *expr.Backend, n *pg.Node) (string, error) {
	if err := regclassArgs(s, n, false); err != nil {
		return "", err
	}
	return DeparseExpr(n)
}

var regclassFuncs = map[string]bool{"nextval": true, "currval": true, "setval": true}

// regclassArgs rewrites the regclass constants of an expression tree:
// cast says n is the argument of a ::regclass cast or of a sequence
// function.
func regclassArgs(s *expr.Backend, n *pg.Node, cast bool) error {
	switch {
	case n == nil:
	case n.GetAConst() != nil:
		c := n.GetAConst()
		sv, ok := c.Val.(*pg.A_Const_Sval)
		if !ok || !cast {
			return nil
		}
		d, err := types.ParseRegName(types.TypeRegclass, sv.Sval.Sval, &s.Format)
		if err != nil {
			return expr.PosErr(pgerr.From(err), c.Location)
		}
		if name, ok := s.RegName(types.TypeRegclass, uint32(d.I)); ok {
			sv.Sval.Sval = name // as regclass prints it
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		_, tname := QualifiedName(tc.TypeName.GetNames())
		return regclassArgs(s, tc.Arg, tname == "regclass")
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		_, fname := QualifiedName(fc.Funcname)
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

func regclassList(s *expr.Backend, ns []*pg.Node) error {
	for _, n := range ns {
		if err := regclassArgs(s, n, false); err != nil {
			return err
		}
	}
	return nil
}

// checkSequenceUse applies, before a statement is analysed, the rules
// for sequences named where a table is expected and for identity
// columns: INSERT and UPDATE of a GENERATED ALWAYS column (428C9), and
// OVERRIDING USER VALUE, which gives identity columns their default.
func CheckSequenceUse(s *expr.Backend, n *pg.Node) error {
	cat := s.Cat()
	if len(cat.Sequences) == 0 {
		return nil
	}
	seq := func(rv *pg.RangeVar) *catalog.SequenceDef {
		if rv == nil || (rv.Schemaname != "" && rv.Schemaname != catalog.SequenceNamespaceName) {
			return nil
		}
		return cat.Sequence(rv.Relname)
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
		if s.Tx != expr.TxBlock {
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
func identityInsert(s *expr.Backend, ins *pg.InsertStmt) error {
	t, err := s.ResolveTable(ins.Relation)
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
		i := t.ColIndex(c.GetResTarget().GetName())
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
					items[j] = &pg.Node{Node: &pg.Node_SetToDefault{SetToDefault: &pg.SetToDefault{Location: ExprLocation(items[j])}}}
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
func identityUpdate(s *expr.Backend, up *pg.UpdateStmt) error {
	t, err := s.ResolveTable(up.Relation)
	if err != nil {
		return nil
	}
	return IdentitySetList(t, up.TargetList)
}

// identitySetList is identityUpdate's check of one SET list of table t
// (UPDATE, or INSERT ... ON CONFLICT DO UPDATE).
func IdentitySetList(t *catalog.TableDef, targets []*pg.Node) error {
	for _, n := range targets {
		rt := n.GetResTarget()
		i := t.ColIndex(rt.GetName())
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
func SkipSequence(s *expr.Backend, rv *pg.RangeVar, tag string) bool {
	q := s.RangeSequence(rv)
	if q == nil {
		return false
	}
	s.Notice(pgerr.SeverityWarning, pgerr.Warning, fmt.Sprintf("skipping \"%s\" --- cannot %s non-tables or special system tables", q.Name, strings.ToLower(tag)))
	return true
}

// codeGeneratedAlways is generated_always (identity columns).
const codeGeneratedAlways = "428C9"
