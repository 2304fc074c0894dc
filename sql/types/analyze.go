package types

import (
	"strings"
)

// Column describes one result column.
type Column struct {
	Name     string
	Type     Type
	TableOID uint32
	Attnum   int16
}

// lookupType maps a type name as the grammar delivers it (int4, bpchar,
// varchar, ... or a name a user wrote) to its type.
func LookupType(name string) (Type, bool) {
	if strings.HasSuffix(name, "[]") {
		e, ok := LookupType(strings.TrimSuffix(name, "[]"))
		if !ok {
			return Type{}, false
		}
		return ArrayOf(e)
	}
	if strings.HasPrefix(name, "_") {
		if e, ok := LookupType(name[1:]); ok {
			return ArrayOf(e)
		}
	}
	switch name {
	case "bool", "boolean":
		return TypeBool, true
	case "int2", "smallint":
		return TypeInt2, true
	case "int4", "int", "integer", "serial":
		return TypeInt4, true
	case "int8", "bigint", "bigserial":
		return TypeInt8, true
	case "float8", "double precision", "float":
		return TypeFloat8, true
	case "float4", "real":
		return TypeFloat4, true
	case "numeric", "decimal":
		return TypeNumeric, true
	case "text":
		return TypeText, true
	case "varchar", "character varying":
		return TypeVarchar, true
	case "bpchar", "character":
		return TypeBpchar, true
	case "char", "\"char\"":
		return TypeChar, true
	case "name":
		return TypeName, true
	case "oid":
		return TypeOid, true
	case "tid":
		return TypeTid, true
	case "regclass":
		return TypeRegclass, true
	case "regtype":
		return TypeRegtype, true
	case "regproc":
		return TypeRegproc, true
	case "regnamespace":
		return TypeRegnsp, true
	case "regrole":
		return TypeRegrole, true
	case "xid":
		return TypeXid, true
	case "timestamptz", "timestamp with time zone":
		return TypeTimestamptz, true
	case "timestamp", "timestamp without time zone":
		return TypeTimestamp, true
	case "date":
		return TypeDate, true
	case "interval":
		return TypeInterval, true
	case "unknown":
		return TypeUnknown, true
	case "pg_node_tree":
		return TypeNodeTree, true
	}
	return Type{}, false
}
