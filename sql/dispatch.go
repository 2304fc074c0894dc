package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// analyze compiles one parsed statement.
func (s *Session) analyze(n *pg.Node, text string, params *[]types.Type) (*plan.Stmt, error) {
	st := &plan.Stmt{Text: text, CatVer: s.Cat().Version, SetGen: s.Settings.Changes()}
	s.FoldedVolatile = false
	s.SublinkRels = nil
	defer func() {
		if len(s.SublinkRels) > 0 {
			st.Rels = append(st.Rels[:len(st.Rels):len(st.Rels)], s.SublinkRels...)
		}
		s.SublinkRels = nil
		st.Cacheable = !s.FoldedVolatile
		st.RoName = readOnlyName(n, st)
	}()
	if err := analyze.CheckSequenceUse(&s.Backend, n); err != nil { // sql/analyze/sequences.go
		return nil, err
	}
	switch {
	case n.GetSelectStmt() != nil && n.GetSelectStmt().IntoClause != nil: // SELECT INTO (sql/commands/createas.go)
		sel := *n.GetSelectStmt()
		into := sel.IntoClause
		sel.IntoClause = nil
		if err := s.CompileCreateTableAs(into, &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &sel}}, false, params, st); err != nil {
			return nil, err
		}
	case n.GetCreateTableAsStmt() != nil && n.GetCreateTableAsStmt().Objtype == pg.ObjectType_OBJECT_TABLE:
		ct := n.GetCreateTableAsStmt()
		if err := s.CompileCreateTableAs(ct.Into, ct.Query, ct.IfNotExists, params, st); err != nil { // sql/commands/createas.go
			return nil, err
		}
	case n.GetSelectStmt() != nil:
		p, err := s.CompileSelect(n.GetSelectStmt(), params)
		if err != nil {
			return nil, err
		}
		st.Tag = "SELECT"
		st.Cols = p.Cols
		if st.Cols == nil {
			st.Cols = []types.Column{} // a SELECT returns rows even with no columns
		}
		st.Rels = p.Rels
		st.Plan = p
	case n.GetExplainStmt() != nil:
		if err := s.compileExplain(n.GetExplainStmt(), text, params, st); err != nil { // sql/explain.go
			return nil, err
		}
	case n.GetVariableSetStmt() != nil:
		st.NoSnapshot = true
		return s.analyzeSet(n.GetVariableSetStmt(), st)
	case n.GetVariableShowStmt() != nil:
		st.NoSnapshot = true
		return s.analyzeShow(n.GetVariableShowStmt(), st)
	case n.GetTransactionStmt() != nil:
		st.NoSnapshot = true
		return s.analyzeTransaction(n.GetTransactionStmt(), st)
	case n.GetInsertStmt() != nil:
		if err := s.CompileInsert(n.GetInsertStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetUpdateStmt() != nil:
		if err := s.CompileUpdate(n.GetUpdateStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetDeleteStmt() != nil:
		if err := s.CompileDelete(n.GetDeleteStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetCreateStmt() != nil:
		if err := s.CompileCreateTable(n.GetCreateStmt(), st); err != nil {
			return nil, err
		}
	case n.GetCreateSeqStmt() != nil: // sql/commands/sequence.go
		if err := s.CompileCreateSequence(n.GetCreateSeqStmt(), st); err != nil {
			return nil, err
		}
	case n.GetAlterSeqStmt() != nil:
		if err := s.CompileAlterSequence(n.GetAlterSeqStmt(), st); err != nil {
			return nil, err
		}
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg.ObjectType_OBJECT_SEQUENCE:
		if err := s.CompileDropSequence(n.GetDropStmt(), st); err != nil {
			return nil, err
		}
	case n.GetDropStmt() != nil:
		if err := s.CompileDrop(n.GetDropStmt(), st); err != nil {
			return nil, err
		}
	case n.GetTruncateStmt() != nil:
		if err := s.CompileTruncate(n.GetTruncateStmt(), st); err != nil {
			return nil, err
		}
	case n.GetAlterTableStmt() != nil:
		if err := s.CompileAlterTable(n.GetAlterTableStmt(), st); err != nil {
			return nil, err
		}
	case n.GetIndexStmt() != nil:
		if err := s.CompileCreateIndex(n.GetIndexStmt(), st); err != nil {
			return nil, err
		}
	case n.GetCreateRoleStmt() != nil: // sql/commands/role.go
		if err := s.CompileCreateRole(n.GetCreateRoleStmt(), st); err != nil {
			return nil, err
		}
	case n.GetAlterRoleStmt() != nil:
		if err := s.CompileAlterRole(n.GetAlterRoleStmt(), st); err != nil {
			return nil, err
		}
	case n.GetAlterRoleSetStmt() != nil:
		return nil, pgerr.NotSupported("ALTER ROLE SET is not supported by lockd")
	case n.GetDropRoleStmt() != nil:
		if err := s.CompileDropRole(n.GetDropRoleStmt(), st); err != nil {
			return nil, err
		}
	case n.GetRenameStmt() != nil && n.GetRenameStmt().RenameType == pg.ObjectType_OBJECT_ROLE:
		if err := s.CompileRenameRole(n.GetRenameStmt(), st); err != nil {
			return nil, err
		}
	case n.GetRenameStmt() != nil:
		if err := s.CompileRename(n.GetRenameStmt(), st); err != nil { // sql/commands/rename.go
			return nil, err
		}
	case n.GetLockStmt() != nil:
		if err := s.CompileLock(n.GetLockStmt(), st); err != nil {
			return nil, err
		}
	case n.GetVacuumStmt() != nil:
		if err := s.CompileVacuum(n.GetVacuumStmt(), st); err != nil {
			return nil, err
		}
	case n.GetCheckPointStmt() != nil:
		if err := s.CompileCheckpoint(n.GetCheckPointStmt(), st); err != nil { // sql/commands/checkpoint.go
			return nil, err
		}
	case n.GetCopyStmt() != nil:
		if err := s.CompileCopy(n.GetCopyStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetPrepareStmt() != nil:
		if err := s.compilePrepare(n.GetPrepareStmt(), text, params, st); err != nil {
			return nil, err
		}
	case n.GetExecuteStmt() != nil:
		if err := s.compileExecute(n.GetExecuteStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetDeclareCursorStmt() != nil: // sql/cursor.go
		if err := s.compileDeclare(n.GetDeclareCursorStmt(), text, params, st); err != nil {
			return nil, err
		}
	case n.GetFetchStmt() != nil:
		if err := s.compileFetch(n.GetFetchStmt(), st); err != nil {
			return nil, err
		}
	case n.GetClosePortalStmt() != nil:
		s.compileClose(n.GetClosePortalStmt(), st)
	case n.GetDeallocateStmt() != nil:
		s.compileDeallocate(n.GetDeallocateStmt(), st)
	case n.GetDiscardStmt() != nil:
		s.compileDiscard(n.GetDiscardStmt(), st)
	case n.GetAlterSystemStmt() != nil:
		set := n.GetAlterSystemStmt().Setstmt
		st.Tag = "ALTER SYSTEM"
		st.NoBlock = "ALTER SYSTEM"
		st.NoSnapshot = true
		st.Cacheable = false
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			if !s.Superuser() {
				return "", pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to execute ALTER SYSTEM command")
			}
			var err error
			switch set.Kind {
			case pg.VariableSetKind_VAR_RESET_ALL:
				err = s.eng.settings.AlterSystemReset("all")
			case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
				err = s.eng.settings.AlterSystemReset(set.Name)
			case pg.VariableSetKind_VAR_SET_VALUE:
				var v string
				v, err = analyze.SetValue(set.Args)
				if err == nil {
					err = s.eng.settings.AlterSystem(set.Name, v)
				}
			default:
				err = pgerr.NotSupported("this form of ALTER SYSTEM is not supported")
			}
			if err != nil {
				return "", err
			}
			return "ALTER SYSTEM", nil
		}
	default:
		return nil, pgerr.NotSupported("%s is not supported by lockd yet", analyze.CommandName(n))
	}
	st.DDL = isDDL(n)
	return st, nil
}

// isDDL reports whether n changes the catalog or a relation's storage:
// before it runs, suspended portals read their remaining rows
// (sql/portal.go).
func isDDL(n *pg.Node) bool {
	switch n.Node.(type) {
	case *pg.Node_CreateStmt, *pg.Node_CreateTableAsStmt, *pg.Node_CreateSeqStmt, *pg.Node_AlterSeqStmt,
		*pg.Node_DropStmt, *pg.Node_TruncateStmt, *pg.Node_AlterTableStmt, *pg.Node_IndexStmt,
		*pg.Node_RenameStmt, *pg.Node_VacuumStmt, *pg.Node_CreateRoleStmt, *pg.Node_AlterRoleStmt, *pg.Node_DropRoleStmt:
		return true
	case *pg.Node_SelectStmt:
		return n.GetSelectStmt().IntoClause != nil
	}
	return false
}
