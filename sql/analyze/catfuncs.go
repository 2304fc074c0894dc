package analyze

import (
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// catalogFunc resolves the catalog functions.
func (a *Analyzer) catalogFunc(name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	f, ok := funcs.CatalogFns[name]
	if !ok {
		return nil, false, nil
	}
	if len(args) < f.MinArgs || len(args) > f.MaxArgs {
		return nil, true, noFunction(name, args, loc)
	}
	for i := range args {
		t := f.Args[len(f.Args)-1]
		if i < len(f.Args) {
			t = f.Args[i]
		}
		if t.OID == 0 {
			if IsUnknown(args[i]) {
				var err error
				if args[i], err = a.coerceArg(args[i], types.TypeText, name, loc); err != nil {
					return nil, true, err
				}
			}
			continue
		}
		if types.IsOidLike(t) && types.IsOidLike(args[i].Type()) {
			continue // reg* and oid are binary compatible
		}
		if t.OID == types.OIDNodeTree && types.CategoryOf(args[i].Type()) == types.CatString {
			continue
		}
		var err error
		if args[i], err = a.coerceArg(args[i], t, name, loc); err != nil {
			return nil, true, err
		}
	}
	return &expr.FuncExpr{Name: name, T: f.Result, Args: args, NonStrict: f.NonStrict, Volatile: true, Fn: f.Fn}, true, nil
}
