package funcs

import (
	"strconv"
	"strings"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// The catalog functions psql and pgbench call (pg_get_userbyid,
// format_type, pg_get_indexdef, ...), the reg* lookups (to_regclass) and
// the privilege checks (every session runs as a superuser).

type catalogFn struct {
	MinArgs, MaxArgs int
	Args             []types.Type // declared argument types (the last repeats)
	Result           types.Type
	NonStrict        bool
	Fn               func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error)
}

var CatalogFns map[string]catalogFn

func init() {
	oidArgs := []types.Type{types.TypeOid}
	CatalogFns = map[string]catalogFn{
		"pg_get_userbyid": {1, 1, oidArgs, types.TypeName, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			return types.TextDatum(roleName(uint32(v[0].I))), nil
		}},
		"format_type": {2, 2, []types.Type{types.TypeOid, types.TypeInt4}, types.TypeText, true, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if v[0].Null {
				return types.NullDatum, nil
			}
			if v[1].Null {
				return types.TextDatum(types.FormatTypeExt(uint32(v[0].I), types.NoTypmod, true)), nil
			}
			return types.TextDatum(types.FormatType(uint32(v[0].I), int32(v[1].I))), nil
		}},
		"pg_table_is_visible": {1, 1, oidArgs, types.TypeBool, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if _, ok := ec.S.RelationByOID(uint32(v[0].I)); !ok {
				return types.NullDatum, nil
			}
			return types.BoolDatum(true), nil
		}},
		"pg_type_is_visible": {1, 1, oidArgs, types.TypeBool, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			return types.BoolDatum(true), nil
		}},
		"pg_get_expr": {2, 3, []types.Type{types.TypeNodeTree, types.TypeOid, types.TypeBool}, types.TypeText, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			return types.TextDatum(v[0].S), nil
		}},
		"pg_get_indexdef": {1, 3, []types.Type{types.TypeOid, types.TypeInt4, types.TypeBool}, types.TypeText, false, fnIndexDef},
		"pg_get_constraintdef": {1, 2, []types.Type{types.TypeOid, types.TypeBool}, types.TypeText, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			for _, c := range ConstraintRows(ec.S) {
				if c.Oid == uint32(v[0].I) {
					if len(v) > 1 && !v[1].Null && v[1].I != 0 && c.PrettyDef != "" {
						return types.TextDatum(c.PrettyDef), nil
					}
					return types.TextDatum(c.Def), nil
				}
			}
			return types.NullDatum, nil
		}},
		"pg_get_partkeydef": {1, 1, oidArgs, types.TypeText, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			t := ec.S.Cat().Tables[uint32(v[0].I)]
			if t == nil || !t.Partitioned() {
				return types.NullDatum, nil
			}
			return types.TextDatum(t.PartitionKeyDef()), nil
		}},
		"pg_get_partition_constraintdef": {1, 1, oidArgs, types.TypeText, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			t := ec.S.Cat().Tables[uint32(v[0].I)]
			if t == nil {
				return types.NullDatum, nil
			}
			if c, ok := t.PartitionConstraintDef(ec.S.Cat()); ok {
				return types.TextDatum(c), nil
			}
			return types.NullDatum, nil
		}},
		"pg_get_triggerdef":               {1, 2, []types.Type{types.TypeOid, types.TypeBool}, types.TypeText, false, nullFn},
		"pg_get_viewdef":                  {1, 2, []types.Type{types.TypeOid, types.TypeBool}, types.TypeText, false, nullFn},
		"pg_get_statisticsobjdef_columns": {1, 1, oidArgs, types.TypeText, false, nullFn},
		"obj_description":                 {1, 2, []types.Type{types.TypeOid, types.TypeName}, types.TypeText, false, nullFn},
		"shobj_description":               {2, 2, []types.Type{types.TypeOid, types.TypeName}, types.TypeText, false, nullFn},
		"col_description":                 {2, 2, []types.Type{types.TypeOid, types.TypeInt4}, types.TypeText, false, nullFn},
		"pg_encoding_to_char": {1, 1, []types.Type{types.TypeInt4}, types.TypeName, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			switch v[0].I {
			case 0:
				return types.TextDatum("SQL_ASCII"), nil
			case 6:
				return types.TextDatum("UTF8"), nil
			}
			return types.TextDatum(""), nil
		}},
		"pg_char_to_encoding": {1, 1, []types.Type{types.TypeName}, types.TypeInt4, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			switch strings.ToUpper(v[0].S) {
			case "SQL_ASCII":
				return types.IntDatum(0), nil
			case "UTF8", "UTF-8":
				return types.IntDatum(6), nil
			}
			return types.IntDatum(-1), nil
		}},
		"current_schemas": {1, 1, []types.Type{types.TypeBool}, types.Type{OID: 1003, Len: -1, Mod: -1, Name: "name[]"}, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			if v[0].I != 0 {
				return types.Datum{A: []types.Datum{types.TextDatum("pg_catalog"), types.TextDatum("public")}}, nil
			}
			return types.Datum{A: []types.Datum{types.TextDatum("public")}}, nil
		}},
		"current_schema": {0, 0, nil, types.TypeName, false, func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.TextDatum("public"), nil
		}},
		"pg_relation_is_publishable": {1, 1, []types.Type{types.TypeRegclass}, types.TypeBool, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			r, ok := ec.S.RelationByOID(uint32(v[0].I))
			if !ok {
				return types.NullDatum, nil
			}
			return types.BoolDatum(r.Table != nil && r.Kind == 'r'), nil
		}},
		"to_regclass": {1, 1, []types.Type{types.TypeText}, types.TypeRegclass, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			d, err := types.ParseRegName(types.TypeRegclass, v[0].S, ec.FormatCtx())
			if err != nil {
				return types.NullDatum, nil
			}
			return d, nil
		}},
		"to_regtype": {1, 1, []types.Type{types.TypeText}, types.TypeRegtype, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			d, err := types.ParseRegName(types.TypeRegtype, v[0].S, ec.FormatCtx())
			if err != nil {
				return types.NullDatum, nil
			}
			return d, nil
		}},
		"to_regnamespace": {1, 1, []types.Type{types.TypeText}, types.TypeRegnsp, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			d, err := types.ParseRegName(types.TypeRegnsp, v[0].S, ec.FormatCtx())
			if err != nil {
				return types.NullDatum, nil
			}
			return d, nil
		}},
		"pg_partition_root": {1, 1, []types.Type{types.TypeRegclass}, types.TypeRegclass, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			cat := ec.S.Cat()
			t := cat.Tables[uint32(v[0].I)]
			if t == nil || (!t.Partitioned() && t.ParentOID() == 0) {
				return types.NullDatum, nil
			}
			for t.ParentOID() != 0 && cat.Tables[t.ParentOID()] != nil {
				t = cat.Tables[t.ParentOID()]
			}
			return types.OidDatum(t.OID), nil
		}},
		"pg_tablespace_location": {1, 1, oidArgs, types.TypeText, false, func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.TextDatum(""), nil
		}},
		"pg_size_pretty": {1, 1, []types.Type{types.TypeInt8}, types.TypeText, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
			return types.TextDatum(sizePretty(v[0].I)), nil
		}},
		"pg_get_serial_sequence": {2, 2, []types.Type{types.TypeText, types.TypeText}, types.TypeText, false, serialSequence},
		"pg_is_in_recovery": {0, 0, nil, types.TypeBool, false, func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.BoolDatum(false), nil
		}},
		"inet_server_port": {0, 0, nil, types.TypeInt4, false, func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.IntDatum(int64(ec.S.Gucs.Int("port"))), nil
		}},
	}
	for _, name := range []string{"has_table_privilege", "has_schema_privilege", "has_database_privilege",
		"has_column_privilege", "has_function_privilege", "has_sequence_privilege", "has_any_column_privilege",
		"has_tablespace_privilege", "has_type_privilege", "pg_has_role"} {
		CatalogFns[name] = catalogFn{2, 4, []types.Type{types.Type{}}, types.TypeBool, false, func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.BoolDatum(true), nil // every session is a superuser
		}}
	}
}

func nullFn(*expr.EvalCtx, []types.Datum) (types.Datum, error) { return types.NullDatum, nil }

func roleName(oid uint32) string {
	switch oid {
	case catalog.BootstrapRoleOID:
		return catalog.BootstrapRole
	case catalog.DbOwnerRoleOID:
		return catalog.DbOwnerRole
	}
	return "unknown (OID=" + strconv.FormatUint(uint64(oid), 10) + ")"
}

func fnIndexDef(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
	cat := ec.S.Cat()
	ix := cat.Indexes[uint32(v[0].I)]
	if ix == nil {
		return types.NullDatum, nil
	}
	pretty := len(v) > 2 && v[2].I != 0
	if len(v) > 1 && v[1].I > 0 {
		k := int(v[1].I)
		t := cat.Tables[ix.Table]
		if t == nil || k > len(ix.Cols) {
			return types.TextDatum(""), nil
		}
		return types.TextDatum(types.QuoteIdent(t.Cols[ix.Cols[k-1]].Name)), nil
	}
	return types.TextDatum(IndexDef(ec.S, ix, pretty)), nil
}

// sizePretty is pg_size_pretty(bigint), with PostgreSQL's units and
// rounding: bytes below 10240, then kB, MB, GB, TB, each kept below
// 20480 of its unit and rounded half up.
func sizePretty(n int64) string {
	const limit, limit2 = 10 * 1024, 20*1024 - 1
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	half := func(x int64) int64 {
		if x < 0 {
			return (x - 1) / 2
		}
		return (x + 1) / 2
	}
	if abs(n) < limit {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	n >>= 9 // one extra bit for rounding
	for _, unit := range []string{"kB", "MB", "GB", "TB"} {
		if abs(n) < limit2 || unit == "TB" {
			return strconv.FormatInt(half(n), 10) + " " + unit
		}
		n >>= 10
	}
	return ""
}
