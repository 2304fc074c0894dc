package types

import (
	"strconv"
	"strings"

	"lockd/pgerr"
)

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
	case "pg_lsn":
		return TypePgLsn, true
	case "bytea":
		return TypeBytea, true
	case "inet":
		return TypeInet, true
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

// splitQualifiedName splits a.b.c into identifiers, folding unquoted
// ones to lower case (stringToQualifiedNameList).
func SplitQualifiedName(s string) ([]string, error) {
	var out []string
	i := 0
	for {
		if i >= len(s) {
			return nil, errBadName
		}
		var b strings.Builder
		if s[i] == '"' {
			i++
			for {
				if i >= len(s) {
					return nil, errBadName
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
		} else {
			j := i
			for j < len(s) && s[j] != '.' {
				j++
			}
			if j == i {
				return nil, errBadName
			}
			b.WriteString(strings.ToLower(strings.TrimSpace(s[i:j])))
			i = j
		}
		out = append(out, b.String())
		if i >= len(s) {
			return out, nil
		}
		if s[i] != '.' {
			return nil, errBadName
		}
		i++
	}
}

var errBadName = pgerr.New(pgerr.InvalidName, "invalid name syntax")

// quoteIdent quotes an identifier when PostgreSQL's quote_ident would:
// anything but lower-case letters, digits and underscores (not leading
// with a digit), or a reserved keyword.
func QuoteIdent(s string) string {
	safe := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 0; safe && i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			safe = false
		}
	}
	if safe && !reservedWords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// reservedWords are the keywords quote_ident quotes (PostgreSQL's
// reserved and type/function-name keywords that commonly appear as
// identifiers).
var reservedWords = map[string]bool{
	"all": true, "analyse": true, "analyze": true, "and": true, "any": true, "array": true, "as": true, "asc": true,
	"asymmetric": true, "both": true, "case": true, "cast": true, "check": true, "collate": true, "column": true,
	"constraint": true, "create": true, "current_catalog": true, "current_date": true, "current_role": true,
	"current_time": true, "current_timestamp": true, "current_user": true, "default": true, "deferrable": true,
	"desc": true, "distinct": true, "do": true, "else": true, "end": true, "except": true, "false": true,
	"fetch": true, "for": true, "foreign": true, "from": true, "grant": true, "group": true, "having": true,
	"in": true, "initially": true, "intersect": true, "into": true, "lateral": true, "leading": true, "limit": true,
	"localtime": true, "localtimestamp": true, "not": true, "null": true, "offset": true, "on": true, "only": true,
	"or": true, "order": true, "placing": true, "primary": true, "references": true, "returning": true,
	"select": true, "session_user": true, "some": true, "symmetric": true, "table": true, "then": true, "to": true,
	"trailing": true, "true": true, "union": true, "unique": true, "user": true, "using": true, "variadic": true,
	"when": true, "where": true, "window": true, "with": true,
	"authorization": true, "binary": true, "collation": true, "concurrently": true, "cross": true,
	"current_schema": true, "freeze": true, "full": true, "ilike": true, "inner": true, "is": true, "isnull": true,
	"join": true, "left": true, "like": true, "natural": true, "notnull": true, "outer": true, "overlaps": true,
	"right": true, "similar": true, "tablesample": true, "verbose": true,
}
