package types

import (
	"strconv"
	"strings"

	"lockd/pgerr"
)

// The object identifier alias types (regclass, regtype, regnamespace,
// regrole, regproc): an oid that reads and prints as the object's name,
// resolved against the session's catalog. An oid naming nothing prints
// as its number, as in PostgreSQL.

func appendRegName(buf []byte, t Type, d Datum, fc *FormatCtx) []byte {
	oid := uint32(d.I)
	if oid == 0 {
		return append(buf, '-')
	}
	if fc != nil && fc.Names != nil {
		if name, ok := fc.Names.RegName(t, oid); ok {
			return append(buf, name...)
		}
	}
	return strconv.AppendUint(buf, uint64(oid), 10)
}

// regNamer resolves the names of the reg* types against a session's
// catalog (the Backend implements it).
type RegNamer interface {
	RegName(t Type, oid uint32) (string, bool)
	RegInput(t Type, in string) (Datum, error)
}

// parseRegName reads a reg* input: a number, or a (possibly qualified,
// possibly quoted) name looked up in the catalog.
func ParseRegName(t Type, in string, fc *FormatCtx) (Datum, error) {
	v := strings.TrimSpace(in)
	if v == "-" {
		return IntDatum(0), nil
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return IntDatum(int64(n)), nil
	}
	if fc == nil || fc.Names == nil {
		return Datum{}, pgerr.NotSupported("input of type %s by name needs a session", t.Name)
	}
	return fc.Names.RegInput(t, in)
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
