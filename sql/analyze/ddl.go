package analyze

import (
	"strconv"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
)

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
