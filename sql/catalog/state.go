package catalog

import (
	"maps"
	"sort"

	"lockd/sql/stats"
)

type CatalogState struct {
	Version uint64               `json:"version"`
	LSN     uint64               `json:"lsn,omitempty"` // end of the last commit record applied (catalog.go)
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

	// Roles are pg_authid's rows (role.go); a published RoleDef is
	// never changed
	Roles map[uint32]*RoleDef `json:"roles,omitempty"`

	// stats is the instance's planner statistics (statistics.go), shared
	// by every state: they are not versioned with the catalog.
	stats *stats.Store
}

func newCatalogState() *CatalogState {
	return &CatalogState{NextOID: firstUserOID, Tables: map[uint32]*TableDef{}, Indexes: map[uint32]*IndexDef{}, ByName: map[string]uint32{}}
}

func (c *CatalogState) Clone() *CatalogState {
	n := &CatalogState{Version: c.Version, LSN: c.LSN, NextOID: c.NextOID, Tables: make(map[uint32]*TableDef, len(c.Tables)),
		Indexes: make(map[uint32]*IndexDef, len(c.Indexes)), ByName: make(map[string]uint32, len(c.ByName)),
		parts: c.parts, Gen: c.Gen, Constraints: cloneConstraints(c.Constraints), cons: c.cons,
		Sequences: maps.Clone(c.Sequences), Roles: maps.Clone(c.Roles), stats: c.stats}
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
	Role    *RoleDef       // "createrole", "setrole" (role.go); "droprole" uses Oid
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
	case "truncate", "rewrite": // a rewrite also gives the table new storage (sql/exec/rewrite.go)
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
	case "createrole", "setrole", "droprole":
		c.applyRole(op)
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

// tableNames lists the user tables in name order.
func (c *CatalogState) TableNames() []string {
	var out []string
	for _, t := range c.Tables {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}
