package sysviews

import (
	"sort"

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
