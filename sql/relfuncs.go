package sql

import (
	"lockd/pgerr"
	"lockd/storage"
)

// relation size functions: pg_relation_size, pg_table_size,
// pg_indexes_size, pg_total_relation_size. The argument is a regclass: a
// relation name (text) or an OID.
var relSizeFuncs = map[string]bool{
	"pg_relation_size": true, "pg_table_size": true, "pg_indexes_size": true, "pg_total_relation_size": true,
}

const blockSize = 8192

func relSizeFunc(a *analyzer, name string, args []expr, loc int32) (expr, bool, error) {
	if !relSizeFuncs[name] {
		return nil, false, nil
	}
	if len(args) != 1 && !(name == "pg_relation_size" && len(args) == 2) {
		return nil, true, noFunction(name, args, loc)
	}
	arg := args[0]
	var err error
	if isUnknown(arg) {
		if arg, err = a.coerceUnknown(arg, TypeText); err != nil {
			return nil, true, err
		}
	}
	byOID := categoryOf(arg.typ()) == catInt
	if !byOID && categoryOf(arg.typ()) != catString {
		return nil, true, noFunction(name, args, loc)
	}
	return &funcExpr{name: name, t: TypeInt8, args: []expr{arg}, volatile: true, fn: func(ec *evalCtx, v []Datum) (Datum, error) {
		s := ec.s
		cat := s.cat()
		var oid uint32
		if byOID {
			oid = uint32(v[0].I)
		} else {
			o, ok := cat.byName[v[0].S]
			if !ok {
				return Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v[0].S)
			}
			oid = o
		}
		size := func(t *TableDef) int64 {
			n, _ := s.store.RelationPages(storage.RelID(t.RelFile))
			return int64(n) * blockSize
		}
		idxSize := func(t *TableDef) int64 {
			var total int64
			for _, ix := range cat.tableIndexes(t) {
				total += int64(s.store.IndexPages(storage.RelID(ix.RelFile))) * blockSize
			}
			return total
		}
		if t := cat.Tables[oid]; t != nil {
			switch name {
			case "pg_indexes_size":
				return intDatum(idxSize(t)), nil
			case "pg_total_relation_size":
				return intDatum(size(t) + idxSize(t)), nil
			}
			return intDatum(size(t)), nil
		}
		if cat.Sequences[oid] != nil { // one page, as PostgreSQL's sequence relation
			if name == "pg_indexes_size" {
				return intDatum(0), nil
			}
			return intDatum(blockSize), nil
		}
		if ix := cat.Indexes[oid]; ix != nil {
			if name == "pg_indexes_size" {
				return intDatum(0), nil
			}
			return intDatum(int64(s.store.IndexPages(storage.RelID(ix.RelFile))) * blockSize), nil
		}
		if byOID {
			return NullDatum, nil // PostgreSQL returns NULL for an unknown OID
		}
		return Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v[0].S)
	}}, true, nil
}
