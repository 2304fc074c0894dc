package sql

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/guc"
	"lockd/pgerr"
	"lockd/txn"
)

// analyze compiles one parsed statement.
func (s *Session) analyze(n *pg.Node, text string, params *[]Type) (*Stmt, error) {
	st := &Stmt{Text: text, catVer: s.cat().Version}
	s.foldedVolatile = false
	defer func() {
		st.cacheable = !s.foldedVolatile
		st.roName = readOnlyName(n, st)
	}()
	if err := checkSequenceUse(&s.Backend, n); err != nil { // seqcols.go
		return nil, err
	}
	switch {
	case n.GetSelectStmt() != nil && n.GetSelectStmt().IntoClause != nil: // SELECT INTO (createas.go)
		sel := *n.GetSelectStmt()
		into := sel.IntoClause
		sel.IntoClause = nil
		if err := s.compileCreateTableAs(into, &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &sel}}, false, params, st); err != nil {
			return nil, err
		}
	case n.GetCreateTableAsStmt() != nil && n.GetCreateTableAsStmt().Objtype == pg.ObjectType_OBJECT_TABLE:
		ct := n.GetCreateTableAsStmt()
		if err := s.compileCreateTableAs(ct.Into, ct.Query, ct.IfNotExists, params, st); err != nil { // createas.go
			return nil, err
		}
	case n.GetSelectStmt() != nil:
		p, err := s.compileSelect(n.GetSelectStmt(), params)
		if err != nil {
			return nil, err
		}
		st.Tag = "SELECT"
		st.cols = p.cols
		if st.cols == nil {
			st.cols = []Column{} // a SELECT returns rows even with no columns
		}
		st.rels = p.rels
		st.plan = p
	case n.GetVariableSetStmt() != nil:
		st.noSnapshot = true
		return s.analyzeSet(n.GetVariableSetStmt(), st)
	case n.GetVariableShowStmt() != nil:
		st.noSnapshot = true
		return s.analyzeShow(n.GetVariableShowStmt(), st)
	case n.GetTransactionStmt() != nil:
		st.noSnapshot = true
		return s.analyzeTransaction(n.GetTransactionStmt(), st)
	case n.GetInsertStmt() != nil:
		if err := s.compileInsert(n.GetInsertStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetUpdateStmt() != nil:
		if err := s.compileUpdate(n.GetUpdateStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetDeleteStmt() != nil:
		if err := s.compileDelete(n.GetDeleteStmt(), params, st); err != nil {
			return nil, err
		}
	case n.GetCreateStmt() != nil:
		if err := s.compileCreateTable(n.GetCreateStmt(), st); err != nil {
			return nil, err
		}
	case n.GetCreateSeqStmt() != nil: // sequence.go
		if err := s.compileCreateSequence(n.GetCreateSeqStmt(), st); err != nil {
			return nil, err
		}
	case n.GetAlterSeqStmt() != nil:
		if err := s.compileAlterSequence(n.GetAlterSeqStmt(), st); err != nil {
			return nil, err
		}
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg.ObjectType_OBJECT_SEQUENCE:
		if err := s.compileDropSequence(n.GetDropStmt(), st); err != nil {
			return nil, err
		}
	case n.GetDropStmt() != nil:
		if err := s.compileDrop(n.GetDropStmt(), st); err != nil {
			return nil, err
		}
	case n.GetTruncateStmt() != nil:
		if err := s.compileTruncate(n.GetTruncateStmt(), st); err != nil {
			return nil, err
		}
	case n.GetAlterTableStmt() != nil:
		if err := s.compileAlterTable(n.GetAlterTableStmt(), st); err != nil {
			return nil, err
		}
	case n.GetIndexStmt() != nil:
		if err := s.compileCreateIndex(n.GetIndexStmt(), st); err != nil {
			return nil, err
		}
	case n.GetRenameStmt() != nil:
		if err := s.compileRename(n.GetRenameStmt(), st); err != nil { // rename.go
			return nil, err
		}
	case n.GetLockStmt() != nil:
		if err := s.compileLock(n.GetLockStmt(), st); err != nil {
			return nil, err
		}
	case n.GetVacuumStmt() != nil:
		if err := s.compileVacuum(n.GetVacuumStmt(), st); err != nil {
			return nil, err
		}
	case n.GetCopyStmt() != nil:
		if err := s.compileCopy(n.GetCopyStmt(), params, st); err != nil {
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
		st.noBlock = "ALTER SYSTEM"
		st.noSnapshot = true
		st.cacheable = false
		st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
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
		return nil, pgerr.NotSupported("%s is not supported by lockd yet", commandName(n))
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

func (s *Backend) set(name, value string, local bool) error {
	if strings.EqualFold(name, "transaction_read_only") {
		if d, ok := guc.Lookup(name); ok {
			if v, err := guc.ParseValue(d, value); err == nil && !v.Bool {
				if err := s.checkReadWrite(); err != nil {
					return err
				}
			}
		}
	}
	if strings.EqualFold(name, "transaction_isolation") && s.tx != txNone {
		// PostgreSQL: the level is fixed by the first query of a transaction.
		d, _, err := s.gucs.Show(name)
		if err == nil && d != value {
			if err := s.txn.SetIsolation(isolationOf(value)); err != nil {
				return pgerr.New(pgerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
			}
		}
	}
	_, err := s.gucs.Set(name, value, local)
	if err == nil && strings.EqualFold(name, "timezone") {
		s.refreshFormat()
	}
	return err
}

// isolationOf maps a transaction_isolation value to the level lockd runs:
// SERIALIZABLE runs as REPEATABLE READ (documented), READ UNCOMMITTED as
// READ COMMITTED (as in PostgreSQL).
func isolationOf(v string) txn.Isolation {
	switch strings.ToLower(v) {
	case "repeatable read", "serializable":
		return txn.RepeatableRead
	}
	return txn.ReadCommitted
}

func (s *Backend) setDefault(name string, local bool) error {
	_, err := s.gucs.SetDefault(name, local)
	if err == nil && strings.EqualFold(name, "timezone") {
		s.refreshFormat()
	}
	return err
}

func (s *Session) analyzeSet(v *pg.VariableSetStmt, st *Stmt) (*Stmt, error) {
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
		st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
			if local && s.tx != txBlock {
				s.notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "SET LOCAL can only be used in transaction blocks")
				if _, _, err := s.gucs.Show(name); err != nil {
					return "", err
				}
				return st.Tag, nil
			}
			var err error
			if kind == pg.VariableSetKind_VAR_SET_VALUE {
				err = s.set(name, value, local)
			} else {
				err = s.setDefault(name, local)
			}
			if err != nil {
				return "", err
			}
			return st.Tag, nil
		}
	case pg.VariableSetKind_VAR_RESET_ALL:
		st.Tag = "RESET"
		st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
			s.gucs.ResetAll()
			s.refreshFormat()
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
			st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
				if isLocal && s.tx != txBlock {
					s.notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "SET TRANSACTION can only be used in transaction blocks")
					return "SET", nil
				}
				for _, kv := range sets {
					if err := s.set(kv[0], kv[1], isLocal); err != nil {
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

func (s *Session) analyzeShow(v *pg.VariableShowStmt, st *Stmt) (*Stmt, error) {
	st.Tag = "SHOW"
	if strings.EqualFold(v.Name, "all") {
		st.cols = []Column{{Name: "name", Type: TypeText}, {Name: "setting", Type: TypeText}, {Name: "description", Type: TypeText}}
		st.run = func(ec *evalCtx, emit func([]Datum) error) (string, error) {
			for _, r := range s.gucs.ShowAll() {
				if err := emit([]Datum{textDatum(r.Name), textDatum(r.Setting), textDatum(r.Description)}); err != nil {
					return "", err
				}
			}
			return "SHOW", nil
		}
		return st, nil
	}
	_, def, err := s.gucs.Show(v.Name)
	if err != nil {
		return nil, err
	}
	name := def.Name
	st.cols = []Column{{Name: strings.ToLower(name), Type: TypeText}}
	if v.Name != strings.ToLower(v.Name) || name == strings.ToLower(name) {
		st.cols[0].Name = name
	}
	st.run = func(ec *evalCtx, emit func([]Datum) error) (string, error) {
		val, _, err := s.gucs.Show(name)
		if err != nil {
			return "", err
		}
		if err := emit([]Datum{textDatum(val)}); err != nil {
			return "", err
		}
		return "SHOW", nil
	}
	return st, nil
}

func (s *Session) analyzeTransaction(t *pg.TransactionStmt, st *Stmt) (*Stmt, error) {
	st.txControl = true
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		st.txControl = false
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
		st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
			switch s.tx {
			case txBlock:
				s.notice(pgerr.SeverityWarning, pgerr.ActiveSQLTransaction, "there is already a transaction in progress")
			default:
				s.tx = txBlock
			}
			for _, kv := range sets {
				if err := s.set(kv[0], kv[1], true); err != nil {
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
		st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
			switch s.tx {
			case txBlock:
				s.endTxn(true)
				return "COMMIT", nil
			case txFailed:
				s.endTxn(false)
				return "ROLLBACK", nil
			default:
				s.notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "there is no transaction in progress")
				return "COMMIT", nil
			}
		}
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		st.Tag = "ROLLBACK"
		if t.Chain {
			return nil, pgerr.NotSupported("ROLLBACK AND CHAIN is not supported")
		}
		st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
			switch s.tx {
			case txBlock, txFailed:
				s.endTxn(false)
			default:
				s.notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "there is no transaction in progress")
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

// objectTypeName is the SQL name of an object type, as in DROP's tag.
func objectTypeName(t pg.ObjectType) string {
	switch t {
	case pg.ObjectType_OBJECT_TABLE:
		return "TABLE"
	case pg.ObjectType_OBJECT_INDEX:
		return "INDEX"
	case pg.ObjectType_OBJECT_SEQUENCE:
		return "SEQUENCE"
	case pg.ObjectType_OBJECT_VIEW:
		return "VIEW"
	case pg.ObjectType_OBJECT_MATVIEW:
		return "MATERIALIZED VIEW"
	case pg.ObjectType_OBJECT_SCHEMA:
		return "SCHEMA"
	case pg.ObjectType_OBJECT_TYPE:
		return "TYPE"
	case pg.ObjectType_OBJECT_FUNCTION:
		return "FUNCTION"
	case pg.ObjectType_OBJECT_EXTENSION:
		return "EXTENSION"
	case pg.ObjectType_OBJECT_TRIGGER:
		return "TRIGGER"
	case pg.ObjectType_OBJECT_ROLE:
		return "ROLE"
	}
	return strings.TrimPrefix(t.String(), "OBJECT_")
}

// commandNames are the command tags of statements commandName does not
// spell out, by parse node kind.
var commandNames = map[string]string{
	"CreateTrigStmt": "CREATE TRIGGER", "RuleStmt": "CREATE RULE", "ClusterStmt": "CLUSTER",
	"ReindexStmt": "REINDEX", "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW",
	"CreateEnumStmt": "CREATE TYPE", "CompositeTypeStmt": "CREATE TYPE", "CreateDomainStmt": "CREATE DOMAIN",
	"CreatePolicyStmt": "CREATE POLICY", "DropdbStmt": "DROP DATABASE", "AlterRoleStmt": "ALTER ROLE",
	"DropRoleStmt": "DROP ROLE", "GrantRoleStmt": "GRANT ROLE", "AlterDatabaseStmt": "ALTER DATABASE",
	"AlterDatabaseSetStmt":   "ALTER DATABASE",
	"CreatePublicationStmt":  "CREATE PUBLICATION",
	"CreateSubscriptionStmt": "CREATE SUBSCRIPTION", "CreateStatsStmt": "CREATE STATISTICS",
	"CreateEventTrigStmt": "CREATE EVENT TRIGGER", "CreateTableSpaceStmt": "CREATE TABLESPACE",
	"SecLabelStmt": "SECURITY LABEL", "ReassignOwnedStmt": "REASSIGN OWNED", "DropOwnedStmt": "DROP OWNED",
	"AlterFunctionStmt": "ALTER FUNCTION", "UnlistenStmt": "UNLISTEN", "ClosePortalStmt": "CLOSE CURSOR",
	"LoadStmt": "LOAD", "ConstraintsSetStmt": "SET CONSTRAINTS", "AlterDefaultPrivilegesStmt": "ALTER DEFAULT PRIVILEGES",
	"CreateCastStmt": "CREATE CAST", "CreateOpClassStmt": "CREATE OPERATOR CLASS",
	"AlterSystemStmt": "ALTER SYSTEM", "ImportForeignSchemaStmt": "IMPORT FOREIGN SCHEMA",
}

// commandName names a statement for the 0A000 message, using
// PostgreSQL's command tags.
func commandName(n *pg.Node) string {
	switch {
	case n.GetCreateStmt() != nil:
		return "CREATE TABLE"
	case n.GetDropStmt() != nil:
		return "DROP " + objectTypeName(n.GetDropStmt().RemoveType)
	case n.GetInsertStmt() != nil:
		return "INSERT"
	case n.GetUpdateStmt() != nil:
		return "UPDATE"
	case n.GetDeleteStmt() != nil:
		return "DELETE"
	case n.GetCopyStmt() != nil:
		return "COPY"
	case n.GetTruncateStmt() != nil:
		return "TRUNCATE TABLE"
	case n.GetAlterTableStmt() != nil:
		return "ALTER TABLE"
	case n.GetRenameStmt() != nil:
		// CreateCommandTag: a column's relation names the command
		switch rs := n.GetRenameStmt(); rs.RenameType {
		case pg.ObjectType_OBJECT_COLUMN:
			return "ALTER " + objectTypeName(rs.RelationType)
		case pg.ObjectType_OBJECT_TABCONSTRAINT:
			return "ALTER TABLE"
		default:
			return "ALTER " + objectTypeName(rs.RenameType)
		}
	case n.GetIndexStmt() != nil:
		return "CREATE INDEX"
	case n.GetVacuumStmt() != nil:
		if n.GetVacuumStmt().IsVacuumcmd {
			return "VACUUM"
		}
		return "ANALYZE"
	case n.GetLockStmt() != nil:
		return "LOCK TABLE"
	case n.GetExplainStmt() != nil:
		return "EXPLAIN"
	case n.GetCreateFunctionStmt() != nil:
		return "CREATE FUNCTION"
	case n.GetViewStmt() != nil:
		return "CREATE VIEW"
	case n.GetCreateSchemaStmt() != nil:
		return "CREATE SCHEMA"
	case n.GetCreatedbStmt() != nil:
		return "CREATE DATABASE"
	case n.GetCreateTableAsStmt() != nil:
		if n.GetCreateTableAsStmt().Objtype == pg.ObjectType_OBJECT_MATVIEW {
			return "CREATE MATERIALIZED VIEW"
		}
		return "CREATE TABLE AS"
	case n.GetMergeStmt() != nil:
		return "MERGE"
	case n.GetCreateRoleStmt() != nil:
		return "CREATE ROLE"
	case n.GetPrepareStmt() != nil:
		return "PREPARE"
	case n.GetExecuteStmt() != nil:
		return "EXECUTE"
	case n.GetDeallocateStmt() != nil:
		return "DEALLOCATE"
	case n.GetDeclareCursorStmt() != nil:
		return "DECLARE CURSOR"
	case n.GetFetchStmt() != nil:
		return "FETCH"
	case n.GetListenStmt() != nil:
		return "LISTEN"
	case n.GetNotifyStmt() != nil:
		return "NOTIFY"
	case n.GetDoStmt() != nil:
		return "DO"
	case n.GetCheckPointStmt() != nil:
		return "CHECKPOINT"
	case n.GetDiscardStmt() != nil:
		return "DISCARD"
	case n.GetCreateSeqStmt() != nil:
		return "CREATE SEQUENCE"
	case n.GetAlterSeqStmt() != nil:
		return "ALTER SEQUENCE"
	case n.GetCreateExtensionStmt() != nil:
		return "CREATE EXTENSION"
	case n.GetGrantStmt() != nil:
		return "GRANT"
	case n.GetCommentStmt() != nil:
		return "COMMENT"
	case n.GetCallStmt() != nil:
		return "CALL"
	}
	if name, ok := commandNames[nodeKind(n)]; ok {
		return name
	}
	return strings.ToUpper(strings.TrimSuffix(nodeKind(n), "Stmt")) + " statement"
}
