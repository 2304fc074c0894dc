package analyze

import (
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// lockFunc resolves the lock-related SQL functions: the advisory-lock
// family (bigint and (int, int) keys) and pg_blocking_pids.
func lockFunc(a *Analyzer, name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	switch name {
	case "pg_advisory_unlock_all":
		if len(args) != 0 {
			return nil, true, noFunction(name, args, loc)
		}
		return &expr.FuncExpr{Name: name, T: types.TypeVoid, Volatile: true, Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			ec.S.Locks.ReleaseSessionLocks(ec.S.Proc, true)
			return types.Datum{}, nil
		}}, true, nil
	case "pg_blocking_pids":
		if len(args) != 1 {
			return nil, true, noFunction(name, args, loc)
		}
		arg, err := a.coerceArg(args[0], types.TypeInt4, name, loc)
		if err != nil {
			return nil, true, err
		}
		return &expr.FuncExpr{Name: name, T: types.TypeInt4Array, Args: []expr.Expr{arg}, Volatile: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			pids := ec.S.Locks.BlockingPIDs(int32(v[0].I))
			out := types.Datum{A: make([]types.Datum, len(pids))}
			for i, p := range pids {
				out.A[i] = types.IntDatum(int64(p))
			}
			return out, nil
		}}, true, nil
	}
	fn, ok := funcs.AdvisoryFns[name]
	if !ok {
		return nil, false, nil
	}
	var keyTypes []types.Type
	switch len(args) {
	case 1:
		keyTypes = []types.Type{types.TypeInt8}
	case 2:
		keyTypes = []types.Type{types.TypeInt4, types.TypeInt4}
	default:
		return nil, true, noFunction(name, args, loc)
	}
	for i := range args {
		if !funcs.Implicitly(args[i].Type(), keyTypes[i]) {
			return nil, true, noFunction(name, args, loc)
		}
		var err error
		if args[i], err = a.coerceArg(args[i], keyTypes[i], name, loc); err != nil {
			return nil, true, err
		}
	}
	mode := locks.ExclusiveLock
	if fn.Shared {
		mode = locks.ShareLock
	}
	result := types.TypeVoid
	if fn.Try || fn.Unlock {
		result = types.TypeBool
	}
	tagOf := func(v []types.Datum) locks.LockTag {
		if len(v) == 1 {
			return locks.AdvisoryTag64(catalog.DatabaseOID, v[0].I)
		}
		return locks.AdvisoryTag32(catalog.DatabaseOID, int32(v[0].I), int32(v[1].I))
	}
	return &expr.FuncExpr{Name: name, T: result, Args: args, Volatile: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		s := ec.S
		tag := tagOf(v)
		if fn.Unlock {
			if !s.Locks.Unlock(s.Proc, tag, mode, true) {
				s.Notice(pgerr.SeverityWarning, pgerr.Warning, "you don't own a lock of type "+mode.String())
				return types.BoolDatum(false), nil
			}
			return types.BoolDatum(true), nil
		}
		got, err := s.Acquire(ec, tag, mode, fn.Session, fn.Try)
		if err != nil {
			return types.Datum{}, err
		}
		if fn.Try {
			return types.BoolDatum(got), nil
		}
		return types.Datum{}, nil
	}}, true, nil
}

// coerceArg converts a function argument to its declared type.
func (a *Analyzer) coerceArg(e expr.Expr, t types.Type, fname string, loc int32) (expr.Expr, error) {
	var err error
	if IsUnknown(e) {
		e, err = a.CoerceUnknown(e, t)
	} else {
		e, err = a.CastTo(e, t, false)
	}
	if err != nil {
		return nil, expr.PosErr(pgerr.From(err), loc)
	}
	return e, nil
}
