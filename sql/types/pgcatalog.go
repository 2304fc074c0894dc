package types

import (
	"strconv"
	"strings"
)

// pgTypeNameInput resolves a regtype input text.
type PgTypeNameInput struct{ Name string }

func (p *PgTypeNameInput) Resolve() (uint32, bool) {
	n := strings.TrimSpace(p.Name)
	n = strings.TrimPrefix(n, "pg_catalog.")
	if i := strings.IndexByte(n, '('); i > 0 && strings.HasSuffix(n, ")") {
		n = strings.TrimSpace(n[:i])
	}
	n = strings.Trim(n, `"`)
	t, ok := LookupType(n)
	if !ok {
		return 0, false
	}
	return t.OID, true
}

// formatType is format_type(oid, typmod): the SQL name of a type with its
// modifier (typmod -1: none; PostgreSQL prints bpchar when a typmod of -1
// is passed explicitly, character when typmod is NULL — noTypmod).
func FormatType(oid uint32, typmod int32) string {
	return FormatTypeExt(oid, typmod, typmod < 0)
}

const NoTypmod = -2

func FormatTypeExt(oid uint32, typmod int32, noMod bool) string {
	if oid == 0 {
		return "-"
	}
	if a, ok := arrayByOID[oid]; ok {
		return FormatTypeExt(a.elem, typmod, noMod) + "[]"
	}
	mod := typmod >= 0
	switch oid {
	case OIDBool:
		return "boolean"
	case OIDChar:
		return `"char"`
	case OIDInt2:
		return "smallint"
	case OIDInt4:
		return "integer"
	case OIDInt8:
		return "bigint"
	case OIDFloat4:
		return "real"
	case OIDFloat8:
		return "double precision"
	case OIDBpchar:
		if mod {
			return "character(" + strconv.Itoa(int(typmod-4)) + ")"
		}
		if typmod == -1 {
			return "bpchar"
		}
		return "character"
	case OIDVarchar:
		if mod {
			return "character varying(" + strconv.Itoa(int(typmod-4)) + ")"
		}
		return "character varying"
	case OIDNumeric:
		if mod && typmod >= 4 {
			m := typmod - 4
			return "numeric(" + strconv.Itoa(int((m>>16)&0xffff)) + "," + strconv.Itoa(int(int16(m&0xffff))) + ")"
		}
		return "numeric"
	case OIDTimestamp:
		if mod {
			return "timestamp(" + strconv.Itoa(int(typmod)) + ") without time zone"
		}
		return "timestamp without time zone"
	case OIDTimestamptz:
		if mod {
			return "timestamp(" + strconv.Itoa(int(typmod)) + ") with time zone"
		}
		return "timestamp with time zone"
	case OIDInterval:
		if mod {
			return "interval(" + strconv.Itoa(int(typmod)) + ")"
		}
		return "interval"
	}
	if oid == OIDUnknown {
		return "unknown"
	}
	if t, ok := TypeByOID(oid); ok {
		return t.Name
	}
	if t, ok := ArrayTypeByOID(oid); ok {
		return t.Name
	}
	return "???"
}
