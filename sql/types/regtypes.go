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
