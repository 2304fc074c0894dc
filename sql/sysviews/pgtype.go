package sysviews

import (
	"sort"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Access method OIDs.
const (
	amHeap  = 2
	amBtree = 403
)

// typeRow is a pg_type entry.
type typeRow struct {
	t        types.Type
	name     string // typname
	category byte
	elem     uint32
	array    uint32
	collate  uint32
}

// pgTypes lists the types lockd has, with their pg_type names.
func pgTypes() []typeRow {
	base := []struct {
		t    types.Type
		name string
		cat  byte
	}{
		{types.TypeBool, "bool", 'B'}, {types.TypeChar, "char", 'Z'}, {types.TypeName, "name", 'S'}, {types.TypeInt8, "int8", 'N'},
		{types.TypeInt2, "int2", 'N'}, {types.TypeInt4, "int4", 'N'}, {types.TypeText, "text", 'S'}, {types.TypeOid, "oid", 'N'},
		{types.TypeTid, "tid", 'U'}, {types.TypeXid, "xid", 'U'}, {types.TypeFloat4, "float4", 'N'}, {types.TypeFloat8, "float8", 'N'},
		{types.TypeUnknown, "unknown", 'X'}, {types.TypeBpchar, "bpchar", 'S'}, {types.TypeVarchar, "varchar", 'S'},
		{types.TypeDate, "date", 'D'}, {types.TypeTimestamp, "timestamp", 'D'}, {types.TypeTimestamptz, "timestamptz", 'D'},
		{types.TypeInterval, "interval", 'T'}, {types.TypeNumeric, "numeric", 'N'}, {types.TypeVoid, "void", 'P'},
		{types.TypeRegproc, "regproc", 'N'}, {types.TypeRegclass, "regclass", 'N'}, {types.TypeRegtype, "regtype", 'N'},
		{types.TypeRegnsp, "regnamespace", 'N'}, {types.TypeRegrole, "regrole", 'N'}, {types.TypeNodeTree, "pg_node_tree", 'Z'},
		{types.TypePgLsn, "pg_lsn", 'U'}, {types.TypeBytea, "bytea", 'U'}, {types.TypeInet, "inet", 'I'},
	}
	var out []typeRow
	for _, b := range base {
		r := typeRow{t: b.t, name: b.name, category: b.cat}
		if types.CategoryOf(b.t) == types.CatString && b.t.OID != types.OIDChar && b.t.OID != types.OIDNodeTree {
			r.collate = 100
			if b.t.OID == types.OIDName {
				r.collate = 950
			}
		}
		if a, ok := types.ArrayByElem[b.t.OID]; ok {
			r.array = a.Array
			out = append(out, r)
			at, _ := types.ArrayTypeByOID(a.Array)
			out = append(out, typeRow{t: at, name: "_" + b.name, category: 'A', elem: b.t.OID, collate: r.collate})
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].t.OID < out[j].t.OID })
	return out
}

func pgTypeView() *expr.View {
	return &expr.View{
		Name: "pg_type", Oid: oidPgType,
		Cols: Cols(oidPgType,
			"oid", types.TypeOid, "typname", types.TypeName, "typnamespace", types.TypeOid, "typowner", types.TypeOid, "typlen", types.TypeInt2,
			"typbyval", types.TypeBool, "typtype", types.TypeChar, "typcategory", types.TypeChar, "typispreferred", types.TypeBool,
			"typisdefined", types.TypeBool, "typdelim", types.TypeChar, "typrelid", types.TypeOid, "typelem", types.TypeOid, "typarray", types.TypeOid,
			"typnotnull", types.TypeBool, "typbasetype", types.TypeOid, "typtypmod", types.TypeInt4, "typndims", types.TypeInt4,
			"typcollation", types.TypeOid, "typdefaultbin", types.TypeNodeTree, "typdefault", types.TypeText, "typacl", typeAclArray),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, tr := range pgTypes() {
				typtype := byte('b')
				if tr.t.OID == types.OIDVoid || tr.t.OID == types.OIDUnknown {
					typtype = 'p'
				}
				row := []types.Datum{
					types.OIDDatum(tr.t.OID), types.TextDatum(tr.name), types.OIDDatum(catalog.NspPgCatalog), types.OIDDatum(catalog.BootstrapRoleOID), types.IntDatum(int64(tr.t.Len)),
					types.BoolDatum(tr.t.Len > 0 && tr.t.Len <= 8), charDatum(typtype), charDatum(tr.category), types.BoolDatum(false),
					types.BoolDatum(true), charDatum(','), types.OIDDatum(0), types.OIDDatum(tr.elem), types.OIDDatum(tr.array),
					types.BoolDatum(false), types.OIDDatum(0), types.IntDatum(-1), types.IntDatum(0),
					types.OIDDatum(tr.collate), types.NullDatum, types.NullDatum, types.NullDatum,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgTypeCollation(oid uint32) uint32 {
	switch oid {
	case types.OIDText, types.OIDVarchar, types.OIDBpchar:
		return 100
	case types.OIDName:
		return 950
	}
	return 0
}

// typeAlignStorage is pg_type's typalign and typstorage for t.
func typeAlignStorage(t types.Type) (align, storage byte) {
	switch {
	case t.OID == types.OIDNumeric:
		return 'i', 'm'
	case t.OID == types.OIDName:
		return 'c', 'p'
	case t.Len == -1:
		return 'i', 'x'
	case t.Len == 1:
		return 'c', 'p'
	case t.Len == 2:
		return 's', 'p'
	case t.Len == 8:
		return 'd', 'p'
	case t.OID == types.OIDTid:
		return 's', 'p'
	case t.OID == types.OIDInterval:
		return 'd', 'p'
	}
	return 'i', 'p'
}
