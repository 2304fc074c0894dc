package funcs

import (
	"sort"
	"strconv"
	"strings"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// The catalog functions psql and pgbench call (pg_get_userbyid,
// format_type, pg_get_indexdef, ...), the reg* lookups (to_regclass) and
// the privilege checks (every session runs as a superuser).

// CatalogFn is a catalog function: its argument count range, declared
// argument types (the last repeats), result and body.
type CatalogFn struct {
	MinArgs, MaxArgs int
	Args             []types.Type // declared argument types (the last repeats)
	Result           types.Type
	NonStrict        bool
	Fn               func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error)
}

// CatalogFns are the catalog functions by name.
var CatalogFns = merged(catalogFns, privilegeFns())

var oidArgs = []types.Type{types.TypeOid}

// procText is a pg_get_function_* function: a text of the built-in
// function with the given OID, NULL for an unknown OID.
func procText(text func(p *catalog.Proc) string) CatalogFn {
	return CatalogFn{1, 1, oidArgs, types.TypeText, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		p, ok := catalog.ProcByOID(uint32(v[0].I))
		if !ok {
			return types.NullDatum, nil
		}
		return types.TextDatum(text(p)), nil
	}}
}

var catalogFns = map[string]CatalogFn{
	"pg_get_function_result":             procText(func(p *catalog.Proc) string { return p.Result }),
	"pg_get_function_arguments":          procText(func(p *catalog.Proc) string { return p.Arguments }),
	"pg_get_function_identity_arguments": procText(func(p *catalog.Proc) string { return p.Identity }),
	"pg_get_functiondef": {1, 1, oidArgs, types.TypeText, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		p, ok := catalog.ProcByOID(uint32(v[0].I))
		if !ok {
			return types.NullDatum, nil
		}
		if p.Kind == 'a' {
			return types.Datum{}, pgerr.New(pgerr.WrongObjectType, "\"%s\" is an aggregate function", p.Name)
		}
		return types.TextDatum(p.Def), nil
	}},
	// no built-in function has a SQL-standard body (prosqlbody)
	"pg_get_function_sqlbody": {1, 1, oidArgs, types.TypeText, false, nullFn},
	// every built-in function is in pg_catalog, which is always on the path
	"pg_function_is_visible": {1, 1, oidArgs, types.TypeBool, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		if _, ok := catalog.ProcByOID(uint32(v[0].I)); !ok {
			return types.NullDatum, nil
		}
		return types.BoolDatum(true), nil
	}},
	"pg_get_userbyid": {1, 1, oidArgs, types.TypeName, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		return types.TextDatum(ec.B.Cat().RoleName(uint32(v[0].I))), nil
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
		if _, ok := ec.B.RelationByOID(uint32(v[0].I)); !ok {
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
		for _, c := range ConstraintRows(ec.B) {
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
		t := ec.B.Cat().Tables[uint32(v[0].I)]
		if t == nil || !t.Partitioned() {
			return types.NullDatum, nil
		}
		return types.TextDatum(t.PartitionKeyDef()), nil
	}},
	"pg_get_partition_constraintdef": {1, 1, oidArgs, types.TypeText, false, func(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		t := ec.B.Cat().Tables[uint32(v[0].I)]
		if t == nil {
			return types.NullDatum, nil
		}
		if c, ok := t.PartitionConstraintDef(ec.B.Cat()); ok {
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
		return types.TextDatum(EncodingName(v[0].I)), nil
	}},
	"pg_char_to_encoding": {1, 1, []types.Type{types.TypeName}, types.TypeInt4, false, func(_ *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
		return types.IntDatum(int64(EncodingNumber(v[0].S))), nil
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
		r, ok := ec.B.RelationByOID(uint32(v[0].I))
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
		cat := ec.B.Cat()
		t := cat.Tables[uint32(v[0].I)]
		if t == nil || (!t.Partitioned() && t.ParentOID() == 0) {
			return types.NullDatum, nil
		}
		for t.ParentOID() != 0 && cat.Tables[t.ParentOID()] != nil {
			t = cat.Tables[t.ParentOID()]
		}
		return types.OIDDatum(t.OID), nil
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
}

// privilegeFns are the privilege checks: every session is a superuser.
func privilegeFns() map[string]CatalogFn {
	out := map[string]CatalogFn{}
	for _, name := range []string{"has_table_privilege", "has_schema_privilege", "has_database_privilege",
		"has_column_privilege", "has_function_privilege", "has_sequence_privilege", "has_any_column_privilege",
		"has_tablespace_privilege", "has_type_privilege", "pg_has_role"} {
		out[name] = CatalogFn{2, 4, []types.Type{{}}, types.TypeBool, false, func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.BoolDatum(true), nil
		}}
	}
	return out
}

func nullFn(*expr.EvalCtx, []types.Datum) (types.Datum, error) { return types.NullDatum, nil }

func fnIndexDef(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
	cat := ec.B.Cat()
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
	return types.TextDatum(IndexDef(ec.B, ix, pretty)), nil
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

// --- pg_constraint

// tableConstraints lists the CHECK and FOREIGN KEY constraints for
// pg_constraint and pg_get_constraintdef (the primary keys and unique
// constraints come from their indexes).
func tableConstraints(s *expr.Backend) []catalog.ConInfo {
	cat := s.Cat()
	if len(cat.Constraints) == 0 {
		return nil
	}
	out := make([]catalog.ConInfo, 0, len(cat.Constraints))
	for _, con := range cat.Constraints {
		out = append(out, catalog.ConRow(cat, con, con.Table))
	}
	// a partition's copies of its ancestors' CHECKs and clones of their
	// foreign keys (conparentid), under the ancestor's OID
	for _, t := range cat.Tables {
		if t.Parent == 0 {
			continue
		}
		for _, con := range cat.InheritedConstraints(t) {
			c := catalog.ConRow(cat, con, t.OID)
			if con.Kind == catalog.ConForeign {
				c.Parent = con.OID
			}
			c.Inherited, c.NoInherit = true, false
			out = append(out, c)
		}
	}
	return out
}

// constraints lists the constraints of the catalog: primary keys and
// unique constraints from their indexes, then the table's own check and
// foreign-key constraints.
func ConstraintRows(s *expr.Backend) []catalog.ConInfo {
	cat := s.Cat()
	var out []catalog.ConInfo
	for _, ix := range cat.Indexes {
		if !ix.Primary && !ix.IsConstraint {
			continue
		}
		t := cat.Tables[ix.Table]
		if t == nil {
			continue
		}
		c := catalog.ConInfo{Oid: ix.OID, Name: ix.Name, Kind: 'u', Rel: t.OID, Index: ix.OID}
		// a partition's index of a partitioned key is that key's child
		// constraint, inheriting from it
		if pix := cat.Indexes[ix.Parent]; pix != nil && (pix.Primary || pix.IsConstraint) {
			c.Parent, c.Inherited = pix.OID, true
		}
		c.NoInherit = !c.Inherited
		word := "UNIQUE"
		if ix.Primary {
			c.Kind, word = 'p', "PRIMARY KEY"
		}
		var names []string
		for _, col := range ix.Cols {
			c.Cols = append(c.Cols, t.Attnum(col))
			names = append(names, types.QuoteIdent(t.Cols[col].Name))
		}
		c.Def = word + " (" + strings.Join(names, ", ") + ")"
		out = append(out, c)
	}
	out = append(out, tableConstraints(s)...)
	sort.Slice(out, func(i, j int) bool { return out[i].Oid < out[j].Oid })
	return out
}

// indexDef is pg_get_indexdef: the CREATE INDEX statement of an index
// (schema-qualified unless pretty).
func IndexDef(s *expr.Backend, ix *catalog.IndexDef, pretty bool) string {
	cat := s.Cat()
	t := cat.Tables[ix.Table]
	if t == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("CREATE ")
	if ix.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX ")
	b.WriteString(types.QuoteIdent(ix.Name))
	b.WriteString(" ON ")
	if t.Partitioned() {
		b.WriteString("ONLY ")
	}
	if !pretty {
		b.WriteString("public.")
	}
	b.WriteString(types.QuoteIdent(t.Name))
	b.WriteString(" USING btree (")
	for i, c := range ix.Cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.QuoteIdent(t.Cols[c].Name))
	}
	b.WriteString(")")
	return b.String()
}

// serialSequence is pg_get_serial_sequence(table, column): the sequence
// owned by a column (serial, identity or OWNED BY), schema-qualified.
func serialSequence(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
	s := ec.B
	parts, err := types.SplitQualifiedName(v[0].S)
	if err != nil {
		return types.Datum{}, err
	}
	name := parts[len(parts)-1]
	cat := s.Cat()
	oid, ok := cat.ByName[name]
	if !ok || (len(parts) > 1 && parts[len(parts)-2] != catalog.SequenceNamespaceName) {
		return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", strings.Join(parts, "."))
	}
	col := -1
	if t := cat.Tables[oid]; t != nil {
		col = t.ColIndex(v[1].S)
	}
	if col < 0 {
		return types.Datum{}, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", v[1].S, name)
	}
	for _, q := range cat.OwnedSequences(oid) {
		if q.OwnedCol == col+1 {
			return types.TextDatum(types.QuoteIdent(catalog.SequenceNamespaceName) + "." + types.QuoteIdent(q.Name)), nil
		}
	}
	return types.NullDatum, nil
}
