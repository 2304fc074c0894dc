package catalog

import ()

// The system catalogs as psql and pgbench read them: lockd's catalog
// (tables, indexes, constraints) and its system views, presented with
// PostgreSQL 15's OIDs, names and column layouts. Everything here is
// computed from the session's view of the catalog at scan time.

// Namespace OIDs as in PostgreSQL 15.
const (
	NspPgCatalog  = 11
	nspToast      = 99
	NspPublic     = 2200
	nspInfoSchema = 13000
)

type namespace struct {
	Oid   uint32
	Name  string
	Owner uint32
}

var Namespaces = []namespace{
	{NspPgCatalog, "pg_catalog", BootstrapRoleOID},
	{nspToast, "pg_toast", BootstrapRoleOID},
	{NspPublic, "public", DbOwnerRoleOID},
	{nspInfoSchema, "information_schema", BootstrapRoleOID},
}

// Roles: lockd accepts any user name at connect and runs every session
// as the bootstrap superuser, which owns every object.
const (
	BootstrapRoleOID = 10
	BootstrapRole    = "postgres"
	DbOwnerRoleOID   = 6171
	DbOwnerRole      = "pg_database_owner"
)

// conInfo is one row of pg_constraint.
type ConInfo struct {
	Oid      uint32
	Name     string
	Kind     byte // 'p' primary key, 'u' unique, 'c' check, 'f' foreign key
	Rel      uint32
	Index    uint32
	RefRel   uint32
	Cols     []int16 // conkey (1-based)
	RefCols  []int16 // confkey
	Def      string  // pg_get_constraintdef text
	OnUpdate byte
	OnDelete byte
	Match    byte
	Parent   uint32

	// prettyDef is pg_get_constraintdef(oid, true) where it differs (a
	// CHECK); notValid is NOT convalidated (constraint.go).
	PrettyDef string
	NotValid  bool
	// inherited: the constraint comes from a parent constraint (NOT
	// conislocal, coninhcount 1); noInherit is connoinherit.
	Inherited bool
	NoInherit bool
}
