package funcs

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// builtin describes a callable function: argument types to coerce to
// (nil = keep the argument's own type), the result type, and the body.
type Builtin struct {
	args      []types.Type
	variadic  bool // last arg type repeats
	minArgs   int  // -1: len(args)
	Result    func(args []expr.Expr) types.Type
	NonStrict bool
	Volatile  bool
	Fn        func(ec *expr.EvalCtx, args []types.Datum) (types.Datum, error)
}

func fixed(t types.Type) func([]expr.Expr) types.Type {
	return func([]expr.Expr) types.Type { return t }
}

// Builtins are the built-in functions by name, each with its overloads.
var Builtins = merged(systemFuncs, stringFuncs, mathFuncs, walFuncs, datetimeFuncs, networkFuncs, byteaFuncs)

// merged joins function tables that name no function twice.
func merged[F any](tables ...map[string]F) map[string]F {
	out := map[string]F{}
	for _, t := range tables {
		for name, b := range t {
			if _, dup := out[name]; dup {
				panic("funcs: " + name + " defined twice")
			}
			out[name] = b
		}
	}
	return out
}

func (b *Builtin) ArgType(i int) types.Type {
	if i < len(b.args) {
		return b.args[i]
	}
	if b.variadic && len(b.args) > 0 {
		return b.args[len(b.args)-1]
	}
	return types.Type{}
}

func (b *Builtin) Accepts(n int) bool {
	min := len(b.args)
	if b.minArgs >= 0 && b.variadic {
		min = b.minArgs
	}
	if b.variadic {
		return n >= min
	}
	return n == len(b.args)
}

// implicitly reports whether a value of type from can be passed where to
// is declared, without an explicit cast.
func Implicitly(from, to types.Type) bool {
	if from.OID == to.OID || from.OID == types.OIDUnknown || from.OID == 0 {
		return true
	}
	fc, tc := types.CategoryOf(from), types.CategoryOf(to)
	switch {
	case fc == types.CatString && tc == types.CatString:
		return true
	case fc == types.CatInt && (tc == types.CatInt || tc == types.CatNumeric || tc == types.CatFloat):
		if tc == types.CatInt {
			return expr.WiderInt(from, to).OID == to.OID
		}
		return true
	case fc == types.CatNumeric && tc == types.CatFloat:
		return true
	case from.OID == types.OIDFloat4 && to.OID == types.OIDFloat8:
		return true
	}
	return false
}

var ErrNoFunction = pgerr.New(pgerr.UndefinedFunction, "function does not exist")

func SQLValueFunctionName(op pg.SQLValueFunctionOp) string {
	switch op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return "current_date"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return "current_timestamp"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return "localtimestamp"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return "current_user"
	case pg.SQLValueFunctionOp_SVFOP_USER:
		return "user"
	case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return "session_user"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return "current_catalog"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return "current_schema"
	}
	return "?column?"
}
