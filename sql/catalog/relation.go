package catalog

import (
	"lockd/sql/types"
)

// ColumnDef is a table column.
type ColumnDef struct {
	Name    string `json:"name"`
	TypeOID uint32 `json:"type"`
	TypeMod int32  `json:"typmod"`
	NotNull bool   `json:"not_null,omitempty"`
	Default string `json:"default,omitempty"` // SQL text of the DEFAULT expression
	// Identity is pg_attribute.attidentity: "a" (GENERATED ALWAYS) or "d"
	// (BY DEFAULT); Default then holds the nextval of its sequence, which
	// the catalogs do not show (sequence.go).
	Identity string `json:"identity,omitempty"`
	// Attnum is pg_attribute.attnum, the column's place in the rows on
	// disk; 0 means its position + 1 (always so until a column is
	// dropped). Missing is attmissingval: the value, encoded as a
	// one-column row, that rows written before ADD COLUMN read
	// (rowlayout.go).
	Attnum  int16  `json:"attnum,omitempty"`
	Missing []byte `json:"missing,omitempty"`
	// StatTarget is pg_attribute.attstattarget as ALTER COLUMN SET
	// STATISTICS set it (0: not analysed); nil is -1,
	// default_statistics_target. Never changed in place.
	StatTarget *int16 `json:"stattarget,omitempty"`
}

// Type returns the column's SQL type.
func (c *ColumnDef) Type() types.Type {
	t, _ := types.TypeByOID(c.TypeOID)
	t.Mod = c.TypeMod
	return t
}

// IndexDef is an index (primary key or unique constraint or plain index).
type IndexDef struct {
	OID     uint32 `json:"oid"`
	Name    string `json:"name"`
	Table   uint32 `json:"table"`
	Cols    []int  `json:"cols"` // 0-based column positions
	Unique  bool   `json:"unique,omitempty"`
	Primary bool   `json:"primary,omitempty"`
	RelFile uint32 `json:"relfile"`
	// IsConstraint: the index implements a UNIQUE constraint (as opposed
	// to CREATE UNIQUE INDEX); a primary key always does.
	IsConstraint bool `json:"constraint,omitempty"`
	// Partitioning (partbound.go): RelKind "I" is a partitioned index (no
	// storage, RelFile 0); Parent is the partitioned index this one is a
	// partition of.
	RelKind string `json:"relkind,omitempty"`
	Parent  uint32 `json:"parent,omitempty"`
	// ColNames are the names of the index's attributes where a column
	// was renamed since the index was made (PostgreSQL renames the
	// table's attribute only); nil: the columns' names.
	ColNames []string `json:"colnames,omitempty"`
	// CheckXmin (pg_index.indcheckxmin): the build met HOT chains whose
	// older versions a snapshot may still see, and may have keys other
	// than the entry the build made for the chain's root. An index-only
	// scan's heap fetch that returns a version a later one HOT-updated
	// checks its key against the entry's (sql/exec/hotrecheck.go).
	CheckXmin bool `json:"checkxmin,omitempty"`
}

// TableDef is a table.
type TableDef struct {
	OID        uint32      `json:"oid"`
	Name       string      `json:"name"`
	Cols       []ColumnDef `json:"cols"`
	RelFile    uint32      `json:"relfile"`
	Fillfactor int         `json:"fillfactor,omitempty"`
	Unlogged   bool        `json:"unlogged,omitempty"`
	Indexes    []uint32    `json:"indexes,omitempty"`
	// Partitioning (partbound.go): RelKind "p" is a partitioned table (no
	// storage, RelFile 0) partitioned by PartStrategy ("r", "l", "h") on
	// the columns PartKey; a partition has Parent and Bound.
	RelKind      string     `json:"relkind,omitempty"`
	PartStrategy string     `json:"partstrat,omitempty"`
	PartKey      []int      `json:"partkey,omitempty"`
	Parent       uint32     `json:"parent,omitempty"`
	Bound        *PartBound `json:"partbound,omitempty"`
	// Columns dropped by ALTER TABLE DROP COLUMN: their values stay in
	// the rows written before (rowlayout.go). RowFormat 1: every row
	// starts with its number of attributes (tables made before ALTER
	// TABLE ADD COLUMN existed have 0); layout is derived.
	Dropped   []DroppedColumn `json:"dropped,omitempty"`
	RowFormat int             `json:"rowformat,omitempty"`
	Layout    *rowLayout
}

func (t *TableDef) ColIndex(name string) int {
	for i := range t.Cols {
		if t.Cols[i].Name == name {
			return i
		}
	}
	return -1
}

// Relkind is pg_class.relkind: 'r' or 'p'.
func (t *TableDef) Relkind() byte {
	if t.RelKind == "" {
		return 'r'
	}
	return t.RelKind[0]
}

// Relkind is pg_class.relkind: 'i' or 'I'.
func (ix *IndexDef) Relkind() byte {
	if ix.RelKind == "" {
		return 'i'
	}
	return ix.RelKind[0]
}
