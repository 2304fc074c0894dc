package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"lockd/sql/types"
)

// The catalog: tables, their columns and indexes. It is copy-on-write: a
// published catalogState is immutable and read without locks; DDL builds
// a list of operations in its transaction, which sees them applied to a
// private copy, and at commit the operations are replayed onto the newest
// published state and written to disk. The relation locks that DDL takes
// (AccessExclusiveLock) keep two transactions from changing one table.

// firstUserOID is where PostgreSQL starts assigning OIDs to user objects.
const firstUserOID = 16384

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

type CatalogState struct {
	Version uint64               `json:"version"`
	NextOID uint32               `json:"next_oid"`
	Tables  map[uint32]*TableDef `json:"tables"`
	Indexes map[uint32]*IndexDef `json:"indexes"`
	ByName  map[string]uint32    // relation name → OID (tables and indexes)
	parts   map[uint32]*PartDesc // partitioned table → its partitions (derived, partbound.go)
	Gen     uint64               // changes with every change of content (derived)

	// Constraints are the CHECK and FOREIGN KEY constraints, cons finds
	// them by table (derived); see constraint.go. Primary keys and unique
	// constraints are their indexes.
	Constraints map[uint32]*ConstraintDef `json:"constraints,omitempty"`
	cons        consIndex

	// Sequences (sequence.go); a published SequenceDef is never changed
	Sequences map[uint32]*SequenceDef `json:"sequences,omitempty"`
}

func newCatalogState() *CatalogState {
	return &CatalogState{NextOID: firstUserOID, Tables: map[uint32]*TableDef{}, Indexes: map[uint32]*IndexDef{}, ByName: map[string]uint32{}}
}

func (c *CatalogState) Clone() *CatalogState {
	n := &CatalogState{Version: c.Version, NextOID: c.NextOID, Tables: make(map[uint32]*TableDef, len(c.Tables)),
		Indexes: make(map[uint32]*IndexDef, len(c.Indexes)), ByName: make(map[string]uint32, len(c.ByName)),
		parts: c.parts, Gen: c.Gen, Constraints: cloneConstraints(c.Constraints), cons: c.cons,
		Sequences: maps.Clone(c.Sequences)}
	for k, v := range c.Tables {
		t := *v
		t.Cols = append([]ColumnDef(nil), v.Cols...)
		t.Indexes = append([]uint32(nil), v.Indexes...)
		t.PartKey = append([]int(nil), v.PartKey...)
		t.Dropped = append([]DroppedColumn(nil), v.Dropped...)
		n.Tables[k] = &t
	}
	for k, v := range c.Indexes {
		i := *v
		i.Cols = append([]int(nil), v.Cols...)
		n.Indexes[k] = &i
	}
	for k, v := range c.ByName {
		n.ByName[k] = v
	}
	return n
}

func (c *CatalogState) reindexNames() {
	c.ByName = map[string]uint32{}
	for _, t := range c.Tables {
		c.ByName[t.Name] = t.OID
		t.Layout = BuildLayout(t) // rowlayout.go
	}
	for _, i := range c.Indexes {
		c.ByName[i.Name] = i.OID
	}
	for _, q := range c.Sequences {
		c.ByName[q.Name] = q.OID
	}
	c.buildPartitions()
	c.buildConstraintIndex() // constraint.go
}

func (c *CatalogState) Table(name string) *TableDef {
	if oid, ok := c.ByName[name]; ok {
		return c.Tables[oid]
	}
	return nil
}

func (c *CatalogState) TableIndexes(t *TableDef) []*IndexDef {
	out := make([]*IndexDef, 0, len(t.Indexes))
	for _, oid := range t.Indexes {
		if ix := c.Indexes[oid]; ix != nil {
			out = append(out, ix)
		}
	}
	return out
}

// catOp is one catalog change made by a transaction.
type CatOp struct {
	Kind    string // "create", "drop", "truncate", "rewrite", "addindex", "dropindex", "settable", "setindex", "addcon", "setcon", "dropcon"
	Table   *TableDef
	Index   *IndexDef
	Seq     *SequenceDef // createseq, setseq (sequence.go)
	Oid     uint32
	Relfile uint32 // truncate/rewrite: the new relfile
	OldFile uint32 // truncate/rewrite/drop: files to remove at commit
	OldIdx  map[uint32]uint32
	NewIdx  map[uint32]uint32
	Con     *ConstraintDef // "addcon", "setcon", "dropcon" (constraint.go)
}

func (c *CatalogState) Apply(op *CatOp) {
	switch op.Kind {
	case "create":
		t := *op.Table
		c.Tables[t.OID] = &t
	case "drop":
		if t := c.Tables[op.Oid]; t != nil {
			for _, ix := range t.Indexes {
				delete(c.Indexes, ix)
			}
			delete(c.Tables, op.Oid)
		}
		c.dropTableConstraints(op.Oid) // constraint.go
	case "truncate", "rewrite": // a rewrite also gives the table new storage (rewrite.go)
		if t := c.Tables[op.Oid]; t != nil {
			t.RelFile = op.Relfile
			for ixOID, f := range op.NewIdx {
				if ix := c.Indexes[ixOID]; ix != nil {
					ix.RelFile = f
				}
			}
		}
	case "addindex":
		ix := *op.Index
		c.Indexes[ix.OID] = &ix
		if t := c.Tables[ix.Table]; t != nil {
			t.Indexes = append(t.Indexes, ix.OID)
		}
	case "settable", "setindex": // replace a definition (ATTACH/DETACH PARTITION)
		c.applySet(op)
	case "addcon", "setcon", "dropcon": // CHECK and FOREIGN KEY constraints (constraint.go)
		c.applyConstraint(op)
	case "createseq", "setseq", "dropseq":
		c.applySequence(op)
	case "dropindex":
		if ix := c.Indexes[op.Oid]; ix != nil {
			if t := c.Tables[ix.Table]; t != nil {
				kept := t.Indexes[:0]
				for _, o := range t.Indexes {
					if o != op.Oid {
						kept = append(kept, o)
					}
				}
				t.Indexes = kept
			}
			delete(c.Indexes, op.Oid)
		}
	}
	c.reindexNames()
}

// catalog is the engine's published catalog plus its file.
type Catalog struct {
	mu      sync.Mutex // serialises commits and OID allocation
	cur     atomic.Pointer[CatalogState]
	path    string
	private atomic.Uint64 // versions of transactions' private catalog states
}

// privateVersionBase separates the versions of private (uncommitted)
// catalog states from published ones, which count up from 0.
const privateVersionBase = 1 << 62

func (c *Catalog) PrivateVersion() uint64 { return privateVersionBase + c.private.Add(1) }

func OpenCatalog(dataDir string) (*Catalog, error) {
	c := &Catalog{path: filepath.Join(dataDir, "global", "lockd_catalog.json")}
	st := newCatalogState()
	data, err := os.ReadFile(c.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, st); err != nil {
			return nil, fmt.Errorf("catalog file %s is corrupt: %w", c.path, err)
		}
		if st.Tables == nil {
			st.Tables = map[uint32]*TableDef{}
		}
		if st.Indexes == nil {
			st.Indexes = map[uint32]*IndexDef{}
		}
		st.reindexNames()
	}
	c.cur.Store(st)
	return c, nil
}

func (c *Catalog) State() *CatalogState { return c.cur.Load() }

// allocOID hands out a new OID (also used as a relfile number).
func (c *Catalog) AllocOID() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.cur.Load().Clone()
	oid := st.NextOID
	st.NextOID++
	c.cur.Store(st)
	return oid
}

// commit replays ops onto the published state and persists it.
func (c *Catalog) Commit(ops []*CatOp) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.cur.Load().Clone()
	for _, op := range ops {
		st.Apply(op)
	}
	st.Version++
	if err := c.Write(st); err != nil {
		return err
	}
	c.cur.Store(st)
	return nil
}

func (c *Catalog) Write(st *CatalogState) error {
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	return replaceFile(c.path, data)
}

// replaceFile makes path hold data: written and fsynced under a temporary
// name beside it (its directory created if missing), then renamed over
// it, so a reader finds the old contents or the new, never a mix.
func replaceFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// flush persists the current state (after OID allocation, at checkpoint).
func (c *Catalog) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Write(c.cur.Load())
}

// tableNames lists the user tables in name order.
func (c *CatalogState) TableNames() []string {
	var out []string
	for _, t := range c.Tables {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}
