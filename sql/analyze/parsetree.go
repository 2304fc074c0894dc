package analyze

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/funcs"
)

// parseExprText parses a stored expression (a CHECK's Expr, a DEFAULT).
func ParseExprText(text string) (*pg.Node, error) {
	tree, err := pg.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	return tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val, nil
}

func NodeName(n *pg.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

func QualifiedName(nodes []*pg.Node) (schema, name string) {
	switch len(nodes) {
	case 0:
		return "", ""
	case 1:
		return "", NodeName(nodes[0])
	default:
		return NodeName(nodes[len(nodes)-2]), NodeName(nodes[len(nodes)-1])
	}
}

// nodeKind names a parse node for error messages.
func NodeKind(n *pg.Node) string {
	s := fmt.Sprintf("%T", n.GetNode())
	s = strings.TrimPrefix(s, "*pg_query.Node_")
	return s
}

// outputName is the column name PostgreSQL gives an unnamed target
// (FigureColname).
func OutputName(n *pg.Node) string {
	name, _ := figureColname(n)
	if name == "" {
		return "?column?"
	}
	return name
}

// figureColname returns a name for n and how strongly it holds: 2 for a
// column or function name, 1 for a type name from a cast (which a
// stronger inner name beats), 0 for none.
func figureColname(n *pg.Node) (string, int) {
	switch {
	case n == nil:
		return "", 0
	case n.GetColumnRef() != nil:
		f := n.GetColumnRef().Fields
		if f[len(f)-1].GetAStar() != nil {
			if len(f) > 1 {
				return NodeName(f[len(f)-2]), 2
			}
			return "", 0
		}
		return NodeName(f[len(f)-1]), 2
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		for i := len(ind.Indirection) - 1; i >= 0; i-- {
			if s := ind.Indirection[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
		return figureColname(ind.Arg)
	case n.GetFuncCall() != nil:
		_, name := QualifiedName(n.GetFuncCall().Funcname)
		return name, 2
	case n.GetAExpr() != nil:
		if n.GetAExpr().Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		if name, strength := figureColname(tc.Arg); strength > 1 {
			return name, strength
		}
		_, name := QualifiedName(tc.TypeName.Names)
		switch name {
		case "int", "integer":
			name = "int4"
		case "bigint":
			name = "int8"
		case "smallint":
			name = "int2"
		case "boolean":
			name = "bool"
		case "double precision":
			name = "float8"
		case "real":
			name = "float4"
		case "character", "char":
			name = "bpchar"
		}
		return name, 1
	case n.GetCollateClause() != nil:
		return figureColname(n.GetCollateClause().Arg)
	case n.GetRowExpr() != nil:
		return "row", 2
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg.SubLinkType_EXPR_SUBLINK:
			if sel := sl.Subselect.GetSelectStmt(); sel != nil && len(sel.TargetList) > 0 {
				rt := sel.TargetList[0].GetResTarget()
				if rt.Name != "" {
					return rt.Name, 2
				}
				return figureColname(rt.Val)
			}
		}
	case n.GetSqlvalueFunction() != nil:
		return funcs.SQLValueFunctionName(n.GetSqlvalueFunction().Op), 2
	case n.GetCaseExpr() != nil:
		if name, strength := figureColname(n.GetCaseExpr().Defresult); strength > 1 {
			return name, strength
		}
		return "case", 1
	case n.GetCoalesceExpr() != nil:
		return "coalesce", 2
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg.MinMaxOp_IS_GREATEST {
			return "greatest", 2
		}
		return "least", 2
	case n.GetAArrayExpr() != nil:
		return "array", 2
	}
	return "", 0
}

// exprLocation is the leftmost source position of an expression node
// (PostgreSQL's exprLocation), or -1.
func ExprLocation(n *pg.Node) int32 {
	if n == nil {
		return -1
	}
	min := func(a, b int32) int32 {
		if a < 0 || (b >= 0 && b < a) {
			return b
		}
		return a
	}
	switch {
	case n.GetAConst() != nil:
		return n.GetAConst().Location
	case n.GetColumnRef() != nil:
		return n.GetColumnRef().Location
	case n.GetParamRef() != nil:
		return n.GetParamRef().Location
	case n.GetFuncCall() != nil:
		return n.GetFuncCall().Location
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		return min(ExprLocation(tc.Arg), tc.Location)
	case n.GetAExpr() != nil:
		x := n.GetAExpr()
		return min(ExprLocation(x.Lexpr), x.Location)
	case n.GetBoolExpr() != nil:
		return n.GetBoolExpr().Location
	case n.GetSubLink() != nil:
		return n.GetSubLink().Location
	case n.GetCaseExpr() != nil:
		return n.GetCaseExpr().Location
	case n.GetRowExpr() != nil:
		return n.GetRowExpr().Location
	case n.GetAArrayExpr() != nil:
		return n.GetAArrayExpr().Location
	case n.GetCollateClause() != nil:
		return min(ExprLocation(n.GetCollateClause().Arg), n.GetCollateClause().Location)
	case n.GetNullTest() != nil:
		return min(ExprLocation(n.GetNullTest().Arg), n.GetNullTest().Location)
	}
	return -1
}

// findSubLink reports where n contains a subquery.
func FindSubLink(n *pg.Node) (int32, bool) {
	loc, found := int32(-1), false
	WalkRawNodes(n, func(x *pg.Node) {
		if sl := x.GetSubLink(); sl != nil && !found {
			loc, found = sl.Location, true
		}
	})
	return loc, found
}

func DefInt(de *pg.DefElem) (int, error) {
	if c := de.Arg.GetInteger(); c != nil {
		return int(c.Ival), nil
	}
	return strconv.Atoi(DefString(de))
}

func DefString(de *pg.DefElem) string {
	switch {
	case de.Arg == nil:
		return ""
	case de.Arg.GetString_() != nil:
		return de.Arg.GetString_().Sval
	case de.Arg.GetInteger() != nil:
		return strconv.Itoa(int(de.Arg.GetInteger().Ival))
	case de.Arg.GetFloat() != nil:
		return de.Arg.GetFloat().Fval
	case de.Arg.GetBoolean() != nil:
		if de.Arg.GetBoolean().Boolval {
			return "true"
		}
		return "false"
	case de.Arg.GetTypeName() != nil:
		_, n := QualifiedName(de.Arg.GetTypeName().Names)
		return n
	}
	return ""
}

// deparseExpr turns an expression node back into SQL text (for DEFAULT).
func DeparseExpr(n *pg.Node) (string, error) {
	tree := &pg.ParseResult{Version: parserVersion(), Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
		TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: n}}}},
	}}}}}}
	s, err := pg.Deparse(tree)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(s, "SELECT "), nil
}

var parserVersionOnce struct {
	sync.Once
	v int32
}

// parserVersion is the parse-tree version pg_query expects back in Deparse.
func parserVersion() int32 {
	parserVersionOnce.Do(func() {
		if tree, err := pg.Parse("SELECT 1"); err == nil {
			parserVersionOnce.v = tree.Version
		}
	})
	return parserVersionOnce.v
}

// walkRawNodes calls fn for n and the sub-expressions of the expression
// node kinds a CHECK constraint can hold.
func WalkRawNodes(n *pg.Node, fn func(*pg.Node)) {
	if n == nil {
		return
	}
	fn(n)
	each := func(l []*pg.Node) {
		for _, x := range l {
			WalkRawNodes(x, fn)
		}
	}
	switch {
	case n.GetAExpr() != nil:
		x := n.GetAExpr()
		WalkRawNodes(x.Lexpr, fn)
		WalkRawNodes(x.Rexpr, fn)
	case n.GetBoolExpr() != nil:
		each(n.GetBoolExpr().Args)
	case n.GetFuncCall() != nil:
		each(n.GetFuncCall().Args)
	case n.GetTypeCast() != nil:
		WalkRawNodes(n.GetTypeCast().Arg, fn)
	case n.GetNullTest() != nil:
		WalkRawNodes(n.GetNullTest().Arg, fn)
	case n.GetBooleanTest() != nil:
		WalkRawNodes(n.GetBooleanTest().Arg, fn)
	case n.GetCoalesceExpr() != nil:
		each(n.GetCoalesceExpr().Args)
	case n.GetMinMaxExpr() != nil:
		each(n.GetMinMaxExpr().Args)
	case n.GetCaseExpr() != nil:
		c := n.GetCaseExpr()
		WalkRawNodes(c.Arg, fn)
		each(c.Args)
		WalkRawNodes(c.Defresult, fn)
	case n.GetCaseWhen() != nil:
		WalkRawNodes(n.GetCaseWhen().Expr, fn)
		WalkRawNodes(n.GetCaseWhen().Result, fn)
	case n.GetAArrayExpr() != nil:
		each(n.GetAArrayExpr().Elements)
	case n.GetList() != nil:
		each(n.GetList().Items)
	case n.GetCollateClause() != nil:
		WalkRawNodes(n.GetCollateClause().Arg, fn)
	case n.GetAIndirection() != nil:
		WalkRawNodes(n.GetAIndirection().Arg, fn)
	case n.GetRowExpr() != nil:
		each(n.GetRowExpr().Args)
	case n.GetSubLink() != nil:
		WalkRawNodes(n.GetSubLink().Testexpr, fn)
	}
}

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

// SetValue is the value of a SET or ALTER SYSTEM SET as the text
// guc parses: constants joined by ", " (ExtractSetVariableArgs).
func SetValue(args []*pg.Node) (string, error) {
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

// NodeLocation is the location a parse node records for itself (or -1):
// a constant's, a column reference's, a cast's, an operator's or a
// function call's.
func NodeLocation(n *pg.Node) int32 {
	switch {
	case n.GetAConst() != nil:
		return n.GetAConst().Location
	case n.GetColumnRef() != nil:
		return n.GetColumnRef().Location
	case n.GetTypeCast() != nil:
		return n.GetTypeCast().Location
	case n.GetAExpr() != nil:
		return n.GetAExpr().Location
	case n.GetFuncCall() != nil:
		return n.GetFuncCall().Location
	}
	return -1
}

// BareColumnName reports whether n is an unqualified column reference,
// and its name and location.
func BareColumnName(n *pg.Node) (string, int32, bool) {
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
		return NodeName(cr.Fields[0]), cr.Location, true
	}
	return "", 0, false
}

// IsColumnRef reports whether n is a column reference (of any form).
func IsColumnRef(n *pg.Node) bool { return n.GetColumnRef() != nil }

// StarRef returns n as a column reference ending in * (SELECT *, t.*),
// or nil.
func StarRef(n *pg.Node) *pg.ColumnRef {
	if cr := n.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
		return cr
	}
	return nil
}

// IsNullLiteral reports whether n is NULL, maybe cast: PostgreSQL makes
// no default of a DEFAULT NULL (AddRelationNewConstraints).
func IsNullLiteral(n *pg.Node) bool {
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	c := n.GetAConst()
	return c != nil && c.Isnull
}

// ColumnRefNames lists the column names n refers to, in order of
// appearance, each once.
func ColumnRefNames(n *pg.Node) []string {
	var out []string
	WalkRawNodes(n, func(x *pg.Node) {
		cr := x.GetColumnRef()
		if cr == nil || len(cr.Fields) == 0 {
			return
		}
		if name := NodeName(cr.Fields[len(cr.Fields)-1]); name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	})
	return out
}

// RenameColumnRefs renames the column old to name in every column
// reference of n (the stored text of a CHECK, before ALTER TABLE RENAME
// COLUMN deparses it again).
func RenameColumnRefs(n *pg.Node, old, name string) {
	WalkRawNodes(n, func(x *pg.Node) {
		if cr := x.GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
			if f := cr.Fields[len(cr.Fields)-1].GetString_(); f != nil && f.Sval == old {
				f.Sval = name
			}
		}
	})
}

// FromFunction analyses a function in FROM (transformRangeFunction): a
// function call, or an expression; it returns the name its column takes.
func (a *Analyzer) FromFunction(n *pg.Node) (name string, e expr.Expr, err error) {
	saved := a.AllowSRF
	a.AllowSRF = true
	defer func() { a.AllowSRF = saved }()
	if fc := n.GetFuncCall(); fc != nil {
		_, name = QualifiedName(fc.Funcname)
		e, err = a.FuncCall(fc)
		return strings.ToLower(name), e, err
	}
	e, err = a.Expr(n)
	return OutputName(n), e, err
}

// DefElemString is an option's value as words and strings give it (and
// a number's text); "" for none.
func DefElemString(arg *pg.Node) string {
	switch {
	case arg == nil:
		return ""
	case arg.GetString_() != nil:
		return arg.GetString_().Sval
	case arg.GetInteger() != nil:
		return strconv.Itoa(int(arg.GetInteger().Ival))
	case arg.GetFloat() != nil:
		return arg.GetFloat().Fval
	case arg.GetBoolean() != nil:
		if arg.GetBoolean().Boolval {
			return "true"
		}
		return "false"
	}
	return ""
}

// DefElemInt is an option's value when it is an integer.
func DefElemInt(arg *pg.Node) (int64, bool) {
	if arg != nil && arg.GetInteger() != nil {
		return int64(arg.GetInteger().Ival), true
	}
	return 0, false
}
