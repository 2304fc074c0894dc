package funcs

// relation size functions: pg_relation_size, pg_table_size,
// pg_indexes_size, pg_total_relation_size. The argument is a regclass: a
// relation name (text) or an OID.
var RelSizeFuncs = map[string]bool{
	"pg_relation_size": true, "pg_table_size": true, "pg_indexes_size": true, "pg_total_relation_size": true,
}

const BlockSize = 8192
