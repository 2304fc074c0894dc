package analyze

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// objectTypeName is the SQL name of an object type, as in DROP's tag.
func ObjectTypeName(t pg.ObjectType) string {
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
func CommandName(n *pg.Node) string {
	switch {
	case n.GetCreateStmt() != nil:
		return "CREATE TABLE"
	case n.GetDropStmt() != nil:
		return "DROP " + ObjectTypeName(n.GetDropStmt().RemoveType)
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
			return "ALTER " + ObjectTypeName(rs.RelationType)
		case pg.ObjectType_OBJECT_TABCONSTRAINT:
			return "ALTER TABLE"
		default:
			return "ALTER " + ObjectTypeName(rs.RenameType)
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
	if name, ok := commandNames[NodeKind(n)]; ok {
		return name
	}
	return strings.ToUpper(strings.TrimSuffix(NodeKind(n), "Stmt")) + " statement"
}
