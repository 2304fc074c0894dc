package sql

import (
	"strconv"
	"strings"
)

// The catalog functions psql and pgbench call (pg_get_userbyid,
// format_type, pg_get_indexdef, ...), the reg* lookups (to_regclass) and
// the privilege checks (every session runs as a superuser).

type catalogFn struct {
	minArgs, maxArgs int
	args             []Type // declared argument types (the last repeats)
	result           Type
	nonStrict        bool
	fn               func(ec *evalCtx, v []Datum) (Datum, error)
}

var catalogFns map[string]catalogFn

func init() {
	oidArgs := []Type{TypeOid}
	catalogFns = map[string]catalogFn{
		"pg_get_userbyid": {1, 1, oidArgs, TypeName, false, func(_ *evalCtx, v []Datum) (Datum, error) {
			return textDatum(roleName(uint32(v[0].I))), nil
		}},
		"format_type": {2, 2, []Type{TypeOid, TypeInt4}, TypeText, true, func(_ *evalCtx, v []Datum) (Datum, error) {
			if v[0].Null {
				return NullDatum, nil
			}
			if v[1].Null {
				return textDatum(formatTypeExt(uint32(v[0].I), noTypmod, true)), nil
			}
			return textDatum(formatType(uint32(v[0].I), int32(v[1].I))), nil
		}},
		"pg_table_is_visible": {1, 1, oidArgs, TypeBool, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			if _, ok := ec.s.relationByOID(uint32(v[0].I)); !ok {
				return NullDatum, nil
			}
			return boolDatum(true), nil
		}},
		"pg_type_is_visible": {1, 1, oidArgs, TypeBool, false, func(_ *evalCtx, v []Datum) (Datum, error) {
			return boolDatum(true), nil
		}},
		"pg_get_expr": {2, 3, []Type{TypeNodeTree, TypeOid, TypeBool}, TypeText, false, func(_ *evalCtx, v []Datum) (Datum, error) {
			return textDatum(v[0].S), nil
		}},
		"pg_get_indexdef": {1, 3, []Type{TypeOid, TypeInt4, TypeBool}, TypeText, false, fnIndexDef},
		"pg_get_constraintdef": {1, 2, []Type{TypeOid, TypeBool}, TypeText, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			for _, c := range constraintRows(ec.s) {
				if c.oid == uint32(v[0].I) {
					if len(v) > 1 && !v[1].Null && v[1].I != 0 && c.prettyDef != "" {
						return textDatum(c.prettyDef), nil
					}
					return textDatum(c.def), nil
				}
			}
			return NullDatum, nil
		}},
		"pg_get_partkeydef": {1, 1, oidArgs, TypeText, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			t := ec.s.cat().Tables[uint32(v[0].I)]
			if t == nil || !t.Partitioned() {
				return NullDatum, nil
			}
			return textDatum(t.partitionKeyDef()), nil
		}},
		"pg_get_partition_constraintdef": {1, 1, oidArgs, TypeText, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			t := ec.s.cat().Tables[uint32(v[0].I)]
			if t == nil {
				return NullDatum, nil
			}
			if c, ok := t.partitionConstraintDef(ec.s.cat()); ok {
				return textDatum(c), nil
			}
			return NullDatum, nil
		}},
		"pg_get_triggerdef":               {1, 2, []Type{TypeOid, TypeBool}, TypeText, false, nullFn},
		"pg_get_viewdef":                  {1, 2, []Type{TypeOid, TypeBool}, TypeText, false, nullFn},
		"pg_get_statisticsobjdef_columns": {1, 1, oidArgs, TypeText, false, nullFn},
		"obj_description":                 {1, 2, []Type{TypeOid, TypeName}, TypeText, false, nullFn},
		"shobj_description":               {2, 2, []Type{TypeOid, TypeName}, TypeText, false, nullFn},
		"col_description":                 {2, 2, []Type{TypeOid, TypeInt4}, TypeText, false, nullFn},
		"pg_encoding_to_char": {1, 1, []Type{TypeInt4}, TypeName, false, func(_ *evalCtx, v []Datum) (Datum, error) {
			switch v[0].I {
			case 0:
				return textDatum("SQL_ASCII"), nil
			case 6:
				return textDatum("UTF8"), nil
			}
			return textDatum(""), nil
		}},
		"pg_char_to_encoding": {1, 1, []Type{TypeName}, TypeInt4, false, func(_ *evalCtx, v []Datum) (Datum, error) {
			switch strings.ToUpper(v[0].S) {
			case "SQL_ASCII":
				return intDatum(0), nil
			case "UTF8", "UTF-8":
				return intDatum(6), nil
			}
			return intDatum(-1), nil
		}},
		"current_schemas": {1, 1, []Type{TypeBool}, Type{1003, -1, -1, "name[]"}, false, func(_ *evalCtx, v []Datum) (Datum, error) {
			if v[0].I != 0 {
				return Datum{A: []Datum{textDatum("pg_catalog"), textDatum("public")}}, nil
			}
			return Datum{A: []Datum{textDatum("public")}}, nil
		}},
		"current_schema": {0, 0, nil, TypeName, false, func(*evalCtx, []Datum) (Datum, error) {
			return textDatum("public"), nil
		}},
		"pg_relation_is_publishable": {1, 1, []Type{TypeRegclass}, TypeBool, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			r, ok := ec.s.relationByOID(uint32(v[0].I))
			if !ok {
				return NullDatum, nil
			}
			return boolDatum(r.table != nil && r.kind == 'r'), nil
		}},
		"to_regclass": {1, 1, []Type{TypeText}, TypeRegclass, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			d, err := parseRegName(TypeRegclass, v[0].S, ec.formatCtx())
			if err != nil {
				return NullDatum, nil
			}
			return d, nil
		}},
		"to_regtype": {1, 1, []Type{TypeText}, TypeRegtype, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			d, err := parseRegName(TypeRegtype, v[0].S, ec.formatCtx())
			if err != nil {
				return NullDatum, nil
			}
			return d, nil
		}},
		"to_regnamespace": {1, 1, []Type{TypeText}, TypeRegnsp, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			d, err := parseRegName(TypeRegnsp, v[0].S, ec.formatCtx())
			if err != nil {
				return NullDatum, nil
			}
			return d, nil
		}},
		"pg_partition_root": {1, 1, []Type{TypeRegclass}, TypeRegclass, false, func(ec *evalCtx, v []Datum) (Datum, error) {
			cat := ec.s.cat()
			t := cat.Tables[uint32(v[0].I)]
			if t == nil || (!t.Partitioned() && t.parentOID() == 0) {
				return NullDatum, nil
			}
			for t.parentOID() != 0 && cat.Tables[t.parentOID()] != nil {
				t = cat.Tables[t.parentOID()]
			}
			return oidDatum(t.OID), nil
		}},
		"pg_tablespace_location": {1, 1, oidArgs, TypeText, false, func(*evalCtx, []Datum) (Datum, error) {
			return textDatum(""), nil
		}},
		"pg_size_pretty": {1, 1, []Type{TypeInt8}, TypeText, false, func(_ *evalCtx, v []Datum) (Datum, error) {
			return textDatum(sizePretty(v[0].I)), nil
		}},
		"pg_get_serial_sequence": {2, 2, []Type{TypeText, TypeText}, TypeText, false, serialSequence},
		"pg_is_in_recovery": {0, 0, nil, TypeBool, false, func(*evalCtx, []Datum) (Datum, error) {
			return boolDatum(false), nil
		}},
		"inet_server_port": {0, 0, nil, TypeInt4, false, func(ec *evalCtx, _ []Datum) (Datum, error) {
			return intDatum(int64(ec.s.gucs.Int("port"))), nil
		}},
	}
	for _, name := range []string{"has_table_privilege", "has_schema_privilege", "has_database_privilege",
		"has_column_privilege", "has_function_privilege", "has_sequence_privilege", "has_any_column_privilege",
		"has_tablespace_privilege", "has_type_privilege", "pg_has_role"} {
		catalogFns[name] = catalogFn{2, 4, []Type{Type{}}, TypeBool, false, func(*evalCtx, []Datum) (Datum, error) {
			return boolDatum(true), nil // every session is a superuser
		}}
	}
}

func nullFn(*evalCtx, []Datum) (Datum, error) { return NullDatum, nil }

func roleName(oid uint32) string {
	switch oid {
	case bootstrapRoleOID:
		return bootstrapRole
	case dbOwnerRoleOID:
		return dbOwnerRole
	}
	return "unknown (OID=" + strconv.FormatUint(uint64(oid), 10) + ")"
}

func fnIndexDef(ec *evalCtx, v []Datum) (Datum, error) {
	cat := ec.s.cat()
	ix := cat.Indexes[uint32(v[0].I)]
	if ix == nil {
		return NullDatum, nil
	}
	pretty := len(v) > 2 && v[2].I != 0
	if len(v) > 1 && v[1].I > 0 {
		k := int(v[1].I)
		t := cat.Tables[ix.Table]
		if t == nil || k > len(ix.Cols) {
			return textDatum(""), nil
		}
		return textDatum(quoteIdent(t.Cols[ix.Cols[k-1]].Name)), nil
	}
	return textDatum(indexDef(ec.s, ix, pretty)), nil
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

// catalogFunc resolves the catalog functions.
func (a *analyzer) catalogFunc(name string, args []expr, loc int32) (expr, bool, error) {
	f, ok := catalogFns[name]
	if !ok {
		return nil, false, nil
	}
	if len(args) < f.minArgs || len(args) > f.maxArgs {
		return nil, true, noFunction(name, args, loc)
	}
	for i := range args {
		t := f.args[len(f.args)-1]
		if i < len(f.args) {
			t = f.args[i]
		}
		if t.OID == 0 {
			if isUnknown(args[i]) {
				var err error
				if args[i], err = a.coerceArg(args[i], TypeText, name, loc); err != nil {
					return nil, true, err
				}
			}
			continue
		}
		if isOidLike(t) && isOidLike(args[i].typ()) {
			continue // reg* and oid are binary compatible
		}
		if t.OID == OIDNodeTree && categoryOf(args[i].typ()) == catString {
			continue
		}
		var err error
		if args[i], err = a.coerceArg(args[i], t, name, loc); err != nil {
			return nil, true, err
		}
	}
	return &funcExpr{name: name, t: f.result, args: args, nonStrict: f.nonStrict, volatile: true, fn: f.fn}, true, nil
}
