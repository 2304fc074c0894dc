package expr

import (
	"strings"

	"lockd/pgerr"

	"lockd/sql/catalog"
	"lockd/sql/types"
)

func (s *Backend) RegName(t types.Type, oid uint32) (string, bool) {
	switch t.OID {
	case types.OIDRegclass:
		r, ok := s.RelationByOID(oid)
		if !ok {
			return "", false
		}
		return types.QuoteIdent(r.Name), true
	case types.OIDRegtype:
		if _, ok := types.TypeByOID(oid); !ok {
			if _, ok := types.ArrayTypeByOID(oid); !ok {
				return "", false
			}
		}
		return types.FormatTypeExt(oid, types.NoTypmod, true), true
	case types.OIDRegnsp:
		for _, n := range catalog.Namespaces {
			if n.Oid == oid {
				return types.QuoteIdent(n.Name), true
			}
		}
	case types.OIDRegrole:
		if oid == catalog.BootstrapRoleOID {
			return types.QuoteIdent(catalog.BootstrapRole), true
		}
	}
	return "", false
}

// regInput looks up a reg* input that is a name.
func (s *Backend) RegInput(t types.Type, in string) (types.Datum, error) {
	v := strings.TrimSpace(in)
	parts, err := types.SplitQualifiedName(v)
	if err != nil {
		return types.Datum{}, pgerr.New(pgerr.InvalidName, "invalid name syntax")
	}
	name := parts[len(parts)-1]
	schema := ""
	if len(parts) > 1 {
		schema = parts[len(parts)-2]
	}
	switch t.OID {
	case types.OIDRegclass:
		if oid, ok := s.relationOID(schema, name); ok {
			return types.IntDatum(int64(oid)), nil
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v)
	case types.OIDRegtype:
		tn := &types.PgTypeNameInput{Name: strings.ToLower(strings.TrimSpace(in))}
		if oid, ok := tn.Resolve(); ok {
			return types.IntDatum(int64(oid)), nil
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", v)
	case types.OIDRegnsp:
		for _, n := range catalog.Namespaces {
			if n.Name == name {
				return types.IntDatum(int64(n.Oid)), nil
			}
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", v)
	case types.OIDRegrole:
		if name == catalog.BootstrapRole || name == s.User {
			return types.IntDatum(catalog.BootstrapRoleOID), nil
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", v)
	}
	return types.Datum{}, pgerr.NotSupported("input of type %s by name is not supported", t.Name)
}
