package analyze

import (
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
	"lockd/storage"
)

func relSizeFunc(a *Analyzer, name string, args []expr.Expr, loc int32) (expr.Expr, bool, error) {
	if !funcs.RelSizeFuncs[name] {
		return nil, false, nil
	}
	if len(args) != 1 && !(name == "pg_relation_size" && len(args) == 2) {
		return nil, true, noFunction(name, args, loc)
	}
	arg := args[0]
	var err error
	if IsUnknown(arg) {
		if arg, err = a.CoerceUnknown(arg, types.TypeText); err != nil {
			return nil, true, err
		}
	}
	byOID := types.CategoryOf(arg.Type()) == types.CatInt
	if !byOID && types.CategoryOf(arg.Type()) != types.CatString {
		return nil, true, noFunction(name, args, loc)
	}
	return &expr.FuncExpr{Name: name, T: types.TypeInt8, Args: []expr.Expr{arg}, Volatile: true, Fn: func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		s := ec.S
		cat := s.Cat()
		var oid uint32
		if byOID {
			oid = uint32(v[0].I)
		} else {
			o, ok := cat.ByName[v[0].S]
			if !ok {
				return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v[0].S)
			}
			oid = o
		}
		size := func(t *catalog.TableDef) int64 {
			n, _ := s.Store.RelationPages(storage.RelID(t.RelFile))
			return int64(n) * funcs.BlockSize
		}
		idxSize := func(t *catalog.TableDef) int64 {
			var total int64
			for _, ix := range cat.TableIndexes(t) {
				total += int64(s.Store.IndexPages(storage.RelID(ix.RelFile))) * funcs.BlockSize
			}
			return total
		}
		if t := cat.Tables[oid]; t != nil {
			switch name {
			case "pg_indexes_size":
				return types.IntDatum(idxSize(t)), nil
			case "pg_total_relation_size":
				return types.IntDatum(size(t) + idxSize(t)), nil
			}
			return types.IntDatum(size(t)), nil
		}
		if cat.Sequences[oid] != nil { // one page, as PostgreSQL's sequence relation
			if name == "pg_indexes_size" {
				return types.IntDatum(0), nil
			}
			return types.IntDatum(funcs.BlockSize), nil
		}
		if ix := cat.Indexes[oid]; ix != nil {
			if name == "pg_indexes_size" {
				return types.IntDatum(0), nil
			}
			return types.IntDatum(int64(s.Store.IndexPages(storage.RelID(ix.RelFile))) * funcs.BlockSize), nil
		}
		if byOID {
			return types.NullDatum, nil // PostgreSQL returns NULL for an unknown OID
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v[0].S)
	}}, true, nil
}
