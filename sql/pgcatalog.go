package sql

import (
	"sort"
	"strconv"
	"strings"
)

// The system catalogs as psql and pgbench read them: lockd's catalog
// (tables, indexes, constraints) and its system views, presented with
// PostgreSQL 15's OIDs, names and column layouts. Everything here is
// computed from the session's view of the catalog at scan time.

// Namespace OIDs as in PostgreSQL 15.
const (
	nspPgCatalog  = 11
	nspToast      = 99
	nspPublic     = 2200
	nspInfoSchema = 13000
)

type namespace struct {
	oid   uint32
	name  string
	owner uint32
}

var namespaces = []namespace{
	{nspPgCatalog, "pg_catalog", bootstrapRoleOID},
	{nspToast, "pg_toast", bootstrapRoleOID},
	{nspPublic, "public", dbOwnerRoleOID},
	{nspInfoSchema, "information_schema", bootstrapRoleOID},
}

// Roles: lockd accepts any user name at connect and runs every session
// as the bootstrap superuser, which owns every object.
const (
	bootstrapRoleOID = 10
	bootstrapRole    = "postgres"
	dbOwnerRoleOID   = 6171
	dbOwnerRole      = "pg_database_owner"
)

// Access method OIDs.
const (
	amHeap  = 2
	amBtree = 403
)

// relInfo is one row of pg_class.
type relInfo struct {
	oid   uint32
	name  string
	nsp   uint32
	kind  byte // 'r' table, 'i' index, 'v' view, 'p' partitioned table, 'I' partitioned index, 'S' sequence
	table *TableDef
	index *IndexDef
	view  *view
	seq   *SequenceDef
}

// relations lists every relation the session can see: user tables and
// indexes, then the system views, in OID order.
func (s *Backend) relations() []relInfo {
	cat := s.cat()
	out := make([]relInfo, 0, len(cat.Tables)+len(cat.Indexes)+len(s.views))
	for _, t := range cat.Tables {
		out = append(out, relInfo{oid: t.OID, name: t.Name, nsp: nspPublic, kind: t.Relkind(), table: t})
	}
	for _, ix := range cat.Indexes {
		out = append(out, relInfo{oid: ix.OID, name: ix.Name, nsp: nspPublic, kind: ix.Relkind(), index: ix})
	}
	for _, v := range s.views {
		out = append(out, relInfo{oid: v.oid, name: v.name, nsp: nspPgCatalog, kind: 'v', view: v})
	}
	for _, q := range cat.Sequences {
		out = append(out, relInfo{oid: q.OID, name: q.Name, nsp: nspPublic, kind: 'S', seq: q})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].oid < out[j].oid })
	return out
}

func (s *Backend) relationByOID(oid uint32) (relInfo, bool) {
	cat := s.cat()
	if t := cat.Tables[oid]; t != nil {
		return relInfo{oid: t.OID, name: t.Name, nsp: nspPublic, kind: t.Relkind(), table: t}, true
	}
	if ix := cat.Indexes[oid]; ix != nil {
		return relInfo{oid: ix.OID, name: ix.Name, nsp: nspPublic, kind: ix.Relkind(), index: ix}, true
	}
	if q := cat.Sequences[oid]; q != nil {
		return relInfo{oid: q.OID, name: q.Name, nsp: nspPublic, kind: 'S', seq: q}, true
	}
	for _, v := range s.views {
		if v.oid == oid {
			return relInfo{oid: v.oid, name: v.name, nsp: nspPgCatalog, kind: 'v', view: v}, true
		}
	}
	return relInfo{}, false
}

// relationOID resolves a relation name as the search path does
// (pg_catalog, then public).
func (s *Backend) relationOID(schema, name string) (uint32, bool) {
	if schema == "" || schema == "pg_catalog" {
		if v, ok := s.views[name]; ok {
			return v.oid, true
		}
	}
	if schema == "" || schema == "public" {
		if oid, ok := s.cat().byName[name]; ok {
			return oid, true
		}
	}
	return 0, false
}

// typeRow is a pg_type entry.
type typeRow struct {
	t        Type
	name     string // typname
	category byte
	elem     uint32
	array    uint32
	collate  uint32
}

// pgTypes lists the types lockd has, with their pg_type names.
func pgTypes() []typeRow {
	base := []struct {
		t    Type
		name string
		cat  byte
	}{
		{TypeBool, "bool", 'B'}, {TypeChar, "char", 'Z'}, {TypeName, "name", 'S'}, {TypeInt8, "int8", 'N'},
		{TypeInt2, "int2", 'N'}, {TypeInt4, "int4", 'N'}, {TypeText, "text", 'S'}, {TypeOid, "oid", 'N'},
		{TypeTid, "tid", 'U'}, {TypeXid, "xid", 'U'}, {TypeFloat4, "float4", 'N'}, {TypeFloat8, "float8", 'N'},
		{TypeUnknown, "unknown", 'X'}, {TypeBpchar, "bpchar", 'S'}, {TypeVarchar, "varchar", 'S'},
		{TypeDate, "date", 'D'}, {TypeTimestamp, "timestamp", 'D'}, {TypeTimestamptz, "timestamptz", 'D'},
		{TypeInterval, "interval", 'T'}, {TypeNumeric, "numeric", 'N'}, {TypeVoid, "void", 'P'},
		{TypeRegproc, "regproc", 'N'}, {TypeRegclass, "regclass", 'N'}, {TypeRegtype, "regtype", 'N'},
		{TypeRegnsp, "regnamespace", 'N'}, {TypeRegrole, "regrole", 'N'}, {TypeNodeTree, "pg_node_tree", 'Z'},
	}
	var out []typeRow
	for _, b := range base {
		r := typeRow{t: b.t, name: b.name, category: b.cat}
		if categoryOf(b.t) == catString && b.t.OID != OIDChar && b.t.OID != OIDNodeTree {
			r.collate = 100
			if b.t.OID == OIDName {
				r.collate = 950
			}
		}
		if a, ok := arrayByElem[b.t.OID]; ok {
			r.array = a.array
			out = append(out, r)
			at, _ := arrayTypeByOID(a.array)
			out = append(out, typeRow{t: at, name: "_" + b.name, category: 'A', elem: b.t.OID, collate: r.collate})
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].t.OID < out[j].t.OID })
	return out
}

// pgTypeNameInput resolves a regtype input text.
type pgTypeNameInput struct{ name string }

func (p *pgTypeNameInput) resolve() (uint32, bool) {
	n := strings.TrimSpace(p.name)
	n = strings.TrimPrefix(n, "pg_catalog.")
	if i := strings.IndexByte(n, '('); i > 0 && strings.HasSuffix(n, ")") {
		n = strings.TrimSpace(n[:i])
	}
	n = strings.Trim(n, `"`)
	t, ok := lookupType(n)
	if !ok {
		return 0, false
	}
	return t.OID, true
}

// formatType is format_type(oid, typmod): the SQL name of a type with its
// modifier (typmod -1: none; PostgreSQL prints bpchar when a typmod of -1
// is passed explicitly, character when typmod is NULL — noTypmod).
func formatType(oid uint32, typmod int32) string {
	return formatTypeExt(oid, typmod, typmod < 0)
}

const noTypmod = -2

func formatTypeExt(oid uint32, typmod int32, noMod bool) string {
	if oid == 0 {
		return "-"
	}
	if a, ok := arrayByOID[oid]; ok {
		return formatTypeExt(a.elem, typmod, noMod) + "[]"
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
	if t, ok := typeByOID(oid); ok {
		return t.Name
	}
	if t, ok := arrayTypeByOID(oid); ok {
		return t.Name
	}
	return "???"
}

// conInfo is one row of pg_constraint.
type conInfo struct {
	oid      uint32
	name     string
	kind     byte // 'p' primary key, 'u' unique, 'c' check, 'f' foreign key
	rel      uint32
	index    uint32
	refRel   uint32
	cols     []int16 // conkey (1-based)
	refCols  []int16 // confkey
	def      string  // pg_get_constraintdef text
	onUpdate byte
	onDelete byte
	match    byte
	parent   uint32

	// prettyDef is pg_get_constraintdef(oid, true) where it differs (a
	// CHECK); notValid is NOT convalidated (constraint.go).
	prettyDef string
	notValid  bool
	// inherited: the constraint comes from a parent constraint (NOT
	// conislocal, coninhcount 1); noInherit is connoinherit.
	inherited bool
	noInherit bool
}

// constraints lists the constraints of the catalog: primary keys and
// unique constraints from their indexes, then the table's own check and
// foreign-key constraints.
func constraintRows(s *Backend) []conInfo {
	cat := s.cat()
	var out []conInfo
	for _, ix := range cat.Indexes {
		if !ix.Primary && !ix.IsConstraint {
			continue
		}
		t := cat.Tables[ix.Table]
		if t == nil {
			continue
		}
		c := conInfo{oid: ix.OID, name: ix.Name, kind: 'u', rel: t.OID, index: ix.OID}
		// a partition's index of a partitioned key is that key's child
		// constraint, inheriting from it
		if pix := cat.Indexes[ix.Parent]; pix != nil && (pix.Primary || pix.IsConstraint) {
			c.parent, c.inherited = pix.OID, true
		}
		c.noInherit = !c.inherited
		word := "UNIQUE"
		if ix.Primary {
			c.kind, word = 'p', "PRIMARY KEY"
		}
		var names []string
		for _, col := range ix.Cols {
			c.cols = append(c.cols, t.attnum(col))
			names = append(names, quoteIdent(t.Cols[col].Name))
		}
		c.def = word + " (" + strings.Join(names, ", ") + ")"
		out = append(out, c)
	}
	out = append(out, tableConstraints(s)...)
	sort.Slice(out, func(i, j int) bool { return out[i].oid < out[j].oid })
	return out
}

// indexDef is pg_get_indexdef: the CREATE INDEX statement of an index
// (schema-qualified unless pretty).
func indexDef(s *Backend, ix *IndexDef, pretty bool) string {
	cat := s.cat()
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
	b.WriteString(quoteIdent(ix.Name))
	b.WriteString(" ON ")
	if t.Partitioned() {
		b.WriteString("ONLY ")
	}
	if !pretty {
		b.WriteString("public.")
	}
	b.WriteString(quoteIdent(t.Name))
	b.WriteString(" USING btree (")
	for i, c := range ix.Cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(t.Cols[c].Name))
	}
	b.WriteString(")")
	return b.String()
}
