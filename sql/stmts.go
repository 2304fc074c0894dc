package sql

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// analyze compiles one parsed statement.
func (s *Session) analyze(n *pg.Node, text string, params *[]types.Type) (*plan.Stmt, error) {
	st := &plan.Stmt{Text: text, CatVer: s.Cat().Version}
	s.FoldedVolatile = false
	defer func() {
		st.Cacheable = !s.FoldedVolatile
		st.RoName = readOnlyName(n, st)
	}()
	if err := analyze.CheckSequenceUse(&s.Backend, n); err != nil { // seqcols.go
		return nil, err
	}
	switch {
	case n.GetSelectStmt() != nil && n.GetSelectStmt().IntoClause != nil: // SELECT INTO (createas.go)
		sel := *n.GetSelectStmt()
		into := sel.IntoClause
		sel.IntoClause = nil
		if err := s.CompileCreateTableAs(into, &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &sel}}, false, params, st); err != nil {
			return nil, err
		}
	case n.GetCreateTableAsStmt() != nil && n.GetCreateTableAsStmt().Objtype == pg.ObjectType_OBJECT_TABLE:
		ct := n.GetCreateTableAsStmt()
		if err := s.CompileCreateTableAs(ct.Into, ct.Query, ct.IfNotExists, params, st); err != nil { // createas.go
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
	case n.GetCreateSeqStmt() != nil: // sequence.go
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
	case n.GetRenameStmt() != nil:
		if err := s.CompileRename(n.GetRenameStmt(), st); err != nil { // rename.go
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
			var err error
			switch set.Kind {
			case pg.VariableSetKind_VAR_RESET_ALL:
				err = s.eng.settings.AlterSystemReset("all")
			case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
				err = s.eng.settings.AlterSystemReset(set.Name)
			case pg.VariableSetKind_VAR_SET_VALUE:
				var v string
				v, err = setValue(set.Args)
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
	return st, nil
}

func setValue(args []*pg.Node) (string, error) {
	var parts []string
	for _, a := range args {
		switch {
		case a.GetAConst() != nil:
			c := a.GetAConst()
			switch v := c.Val.(type) {
			case *pg.A_Const_Ival:
				parts = append(parts, strconv.Itoa(int(v.Ival.Ival)))
			case *pg.A_Const_Fval:
				parts = append(parts, v.Fval.Fval)
			case *pg.A_Const_Sval:
				parts = append(parts, v.Sval.Sval)
			case *pg.A_Const_Boolval:
				if v.Boolval.Boolval {
					parts = append(parts, "on")
				} else {
					parts = append(parts, "off")
				}
			default:
				return "", pgerr.New(pgerr.SyntaxError, "invalid value in SET")
			}
		case a.GetTypeCast() != nil:
			// SET TIME ZONE INTERVAL '...' HOUR TO MINUTE
			return "", pgerr.NotSupported("SET TIME ZONE with an interval is not supported")
		default:
			return "", pgerr.New(pgerr.SyntaxError, "invalid value in SET")
		}
	}
	return strings.Join(parts, ", "), nil
}

func (s *Session) analyzeSet(v *pg.VariableSetStmt, st *plan.Stmt) (*plan.Stmt, error) {
	st.Tag = "SET"
	local := v.IsLocal
	name := v.Name
	switch v.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE, pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		var value string
		if v.Kind == pg.VariableSetKind_VAR_SET_VALUE {
			var err error
			if value, err = setValue(v.Args); err != nil {
				return nil, err
			}
		}
		if v.Kind == pg.VariableSetKind_VAR_RESET {
			st.Tag = "RESET"
		}
		kind := v.Kind
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			if local && s.Tx != expr.TxBlock {
				s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "SET LOCAL can only be used in transaction blocks")
				if _, _, err := s.Gucs.Show(name); err != nil {
					return "", err
				}
				return st.Tag, nil
			}
			var err error
			if kind == pg.VariableSetKind_VAR_SET_VALUE {
				err = s.Set(name, value, local)
			} else {
				err = s.SetDefault(name, local)
			}
			if err != nil {
				return "", err
			}
			return st.Tag, nil
		}
	case pg.VariableSetKind_VAR_RESET_ALL:
		st.Tag = "RESET"
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			s.Gucs.ResetAll()
			s.RefreshFormat()
			return "RESET", nil
		}
	case pg.VariableSetKind_VAR_SET_MULTI:
		switch name {
		case "TRANSACTION", "SESSION CHARACTERISTICS":
			target := "transaction_isolation"
			isLocal := true
			if name == "SESSION CHARACTERISTICS" {
				target = "default_transaction_isolation"
				isLocal = false
			}
			var sets [][2]string
			for _, a := range v.Args {
				de := a.GetDefElem()
				if de == nil {
					continue
				}
				val := ""
				if c := de.Arg.GetAConst(); c != nil {
					if sv, ok := c.Val.(*pg.A_Const_Sval); ok {
						val = sv.Sval.Sval
					}
					if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
						val = strconv.Itoa(int(iv.Ival.Ival))
					}
				}
				switch de.Defname {
				case "transaction_isolation":
					sets = append(sets, [2]string{target, val})
				case "transaction_read_only":
					ro := "transaction_read_only"
					if !isLocal {
						ro = "default_transaction_read_only"
					}
					sets = append(sets, [2]string{ro, onOff(val == "1")})
				case "transaction_deferrable":
				}
			}
			st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
				if isLocal && s.Tx != expr.TxBlock {
					s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "SET TRANSACTION can only be used in transaction blocks")
					return "SET", nil
				}
				for _, kv := range sets {
					if err := s.Set(kv[0], kv[1], isLocal); err != nil {
						return "", err
					}
				}
				return "SET", nil
			}
		default:
			return nil, pgerr.NotSupported("SET %s is not supported", name)
		}
	default:
		return nil, pgerr.NotSupported("SET FROM CURRENT is not supported")
	}
	return st, nil
}

func (s *Session) analyzeShow(v *pg.VariableShowStmt, st *plan.Stmt) (*plan.Stmt, error) {
	st.Tag = "SHOW"
	if strings.EqualFold(v.Name, "all") {
		st.Cols = []types.Column{{Name: "name", Type: types.TypeText}, {Name: "setting", Type: types.TypeText}, {Name: "description", Type: types.TypeText}}
		st.Run = func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error) {
			for _, r := range s.Gucs.ShowAll() {
				if err := emit([]types.Datum{types.TextDatum(r.Name), types.TextDatum(r.Setting), types.TextDatum(r.Description)}); err != nil {
					return "", err
				}
			}
			return "SHOW", nil
		}
		return st, nil
	}
	_, def, err := s.Gucs.Show(v.Name)
	if err != nil {
		return nil, err
	}
	name := def.Name
	st.Cols = []types.Column{{Name: strings.ToLower(name), Type: types.TypeText}}
	if v.Name != strings.ToLower(v.Name) || name == strings.ToLower(name) {
		st.Cols[0].Name = name
	}
	st.Run = func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error) {
		val, _, err := s.Gucs.Show(name)
		if err != nil {
			return "", err
		}
		if err := emit([]types.Datum{types.TextDatum(val)}); err != nil {
			return "", err
		}
		return "SHOW", nil
	}
	return st, nil
}

func (s *Session) analyzeTransaction(t *pg.TransactionStmt, st *plan.Stmt) (*plan.Stmt, error) {
	st.TxControl = true
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		st.TxControl = false
		st.Tag = "BEGIN"
		if t.Kind == pg.TransactionStmtKind_TRANS_STMT_START {
			st.Tag = "START TRANSACTION"
		}
		var sets [][2]string
		for _, o := range t.Options {
			de := o.GetDefElem()
			if de == nil {
				continue
			}
			val := ""
			if c := de.Arg.GetAConst(); c != nil {
				switch v := c.Val.(type) {
				case *pg.A_Const_Sval:
					val = v.Sval.Sval
				case *pg.A_Const_Ival:
					val = strconv.Itoa(int(v.Ival.Ival))
				}
			}
			switch de.Defname {
			case "transaction_isolation":
				sets = append(sets, [2]string{"transaction_isolation", val})
			case "transaction_read_only":
				sets = append(sets, [2]string{"transaction_read_only", onOff(val == "1")})
			}
		}
		tag := st.Tag
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			switch s.Tx {
			case expr.TxBlock:
				s.Notice(pgerr.SeverityWarning, pgerr.ActiveSQLTransaction, "there is already a transaction in progress")
			default:
				s.Tx = expr.TxBlock
			}
			for _, kv := range sets {
				if err := s.Set(kv[0], kv[1], true); err != nil {
					return "", err
				}
			}
			return tag, nil
		}
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		st.Tag = "COMMIT"
		if t.Chain {
			return nil, pgerr.NotSupported("COMMIT AND CHAIN is not supported")
		}
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			switch s.Tx {
			case expr.TxBlock:
				s.endTxn(true)
				return "COMMIT", nil
			case expr.TxFailed:
				s.endTxn(false)
				return "ROLLBACK", nil
			default:
				s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "there is no transaction in progress")
				return "COMMIT", nil
			}
		}
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		st.Tag = "ROLLBACK"
		if t.Chain {
			return nil, pgerr.NotSupported("ROLLBACK AND CHAIN is not supported")
		}
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			switch s.Tx {
			case expr.TxBlock, expr.TxFailed:
				s.endTxn(false)
			default:
				s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "there is no transaction in progress")
			}
			return "ROLLBACK", nil
		}
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT, pg.TransactionStmtKind_TRANS_STMT_RELEASE, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return s.analyzeSavepoint(t, st)
	default:
		return nil, pgerr.NotSupported("prepared transactions (two-phase commit) are not supported")
	}
	return st, nil
}
