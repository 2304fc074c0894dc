package catalog

import (
	"sort"
	"sync/atomic"
)

// Partitioned reports whether t is a partitioned table (relkind 'p').
func (t *TableDef) Partitioned() bool { return t.RelKind == "p" }

// Partitioned reports whether ix is a partitioned index (relkind 'I').
func (ix *IndexDef) Partitioned() bool { return ix.RelKind == "I" }

// catalogGen numbers catalog contents: every catalogState whose tables or
// indexes changed gets a new gen, so cached per-partition plans know when
// to rebuild.
var catalogGen atomic.Uint64

// buildPartitions derives the partition descriptors (reindexNames calls it
// after every change).
func (c *CatalogState) buildPartitions() {
	c.Gen = catalogGen.Add(1)
	children := map[uint32][]*TableDef{}
	for _, t := range c.Tables {
		if t.Parent != 0 {
			children[t.Parent] = append(children[t.Parent], t)
		}
	}
	c.parts = nil
	for _, t := range c.Tables {
		if !t.Partitioned() {
			continue
		}
		if c.parts == nil {
			c.parts = map[uint32]*PartDesc{}
		}
		c.parts[t.OID] = newPartDesc(t, children[t.OID])
	}
}

// partDesc returns t's descriptor; nil if t is not partitioned.
func (c *CatalogState) PartDesc(oid uint32) *PartDesc { return c.parts[oid] }

// lockTableDescendants lists what LOCK TABLE t locks besides t: every
// descendant, unless ONLY (inh false).
func (c *CatalogState) LockTableDescendants(t *TableDef, inh bool) []*TableDef {
	if !inh {
		return nil
	}
	return c.Inheritors(t)
}

// What the catalog views need to know about partitioning, from the
// partitioned-table catalog (partbound.go, sql/commands/partition.go, partdeparse.go).

func (t *TableDef) HasPartitions(cat *CatalogState) bool {
	return t.Partitioned() && len(cat.PartitionChildren(t)) > 0
}

// partitionBound is pg_get_expr(relpartbound): the bound of a partition.
func (t *TableDef) PartitionBound() (string, bool) {
	if t.Parent == 0 {
		return "", false
	}
	return PartitionBoundDef(t), true
}

// parentOID is the partitioned table t is a partition of, or 0.
func (t *TableDef) ParentOID() uint32 { return t.Parent }

// partitionKey returns a partitioned table's strategy ('r', 'l', 'h'),
// its key columns (1-based) and its default partition's OID.
func (t *TableDef) PartitionKey(cat *CatalogState) (byte, []int16, uint32) {
	if !t.Partitioned() || t.PartStrategy == "" {
		return 0, nil, 0
	}
	keys := make([]int16, len(t.PartKey))
	for i, k := range t.PartKey {
		keys[i] = t.Attnum(k)
	}
	return t.PartStrategy[0], keys, cat.DefaultPartition(t)
}

// parentIndex is the partitioned index an index of a partition belongs to.
func (ix *IndexDef) ParentIndex() uint32 { return ix.Parent }

// partitionKeyDef is pg_get_partkeydef.
func (t *TableDef) PartitionKeyDef() string { return PartitionKeyDef(t) }

// partitionConstraintDef is pg_get_partition_constraintdef.
func (t *TableDef) PartitionConstraintDef(cat *CatalogState) (string, bool) {
	return PartitionConstraintDef(cat, t)
}

// Partitioned tables as PostgreSQL 15 has them: the DDL that makes and
// changes them, with PostgreSQL's checks, messages and relation locks.
// Routing and scans are in sql/exec/routing.go and sql/plan/partitions.go; bounds,
// descriptors and their deparsing in partbound.go.
//
// lockd keeps a partition's columns at the same positions as its
// parent's (a partition inherits the parent's columns and may not declare
// its own), so a row of the parent is a row of every partition.

// applySet replaces a table's or an index's definition ("settable",
// "setindex" catalog operations).
func (c *CatalogState) applySet(op *CatOp) {
	if op.Table != nil {
		t := *op.Table
		c.Tables[t.OID] = &t
	}
	if op.Index != nil {
		ix := *op.Index
		c.Indexes[ix.OID] = &ix
	}
}

// partitionChildren lists t's partitions in bound order.
func (c *CatalogState) PartitionChildren(t *TableDef) []*TableDef {
	d := c.PartDesc(t.OID)
	if d == nil {
		return nil
	}
	out := make([]*TableDef, 0, len(d.Parts))
	for _, oid := range d.Parts {
		if k := c.Tables[oid]; k != nil {
			out = append(out, k)
		}
	}
	return out
}

// defaultPartition is t's DEFAULT partition (pg_partitioned_table.partdefid),
// or 0.
func (c *CatalogState) DefaultPartition(t *TableDef) uint32 {
	if d := c.PartDesc(t.OID); d != nil && d.Def >= 0 {
		return d.Parts[d.Def]
	}
	return 0
}

// leafPartitions lists the tables with storage under t (t itself if it
// is not partitioned), depth first in bound order.
func (c *CatalogState) LeafPartitions(t *TableDef) []*TableDef {
	if !t.Partitioned() {
		return []*TableDef{t}
	}
	var out []*TableDef
	for _, k := range c.PartitionChildren(t) {
		out = append(out, c.LeafPartitions(k)...)
	}
	return out
}

// inheritors is find_all_inheritors without t: every descendant, level by
// level, each level in OID order (the order LOCK TABLE and TRUNCATE lock
// them in).
func (c *CatalogState) Inheritors(t *TableDef) []*TableDef {
	var out []*TableDef
	queue := []uint32{t.OID}
	for len(queue) > 0 {
		oid := queue[0]
		queue = queue[1:]
		var kids []*TableDef
		for _, k := range c.Tables {
			if k.Parent == oid {
				kids = append(kids, k)
			}
		}
		sort.Slice(kids, func(i, j int) bool { return kids[i].OID < kids[j].OID })
		for _, k := range kids {
			out = append(out, k)
			queue = append(queue, k.OID)
		}
	}
	return out
}

// ancestorOf reports whether a is t or one of t's ancestors.
func (c *CatalogState) AncestorOf(a, t *TableDef) bool {
	for t != nil {
		if t.OID == a.OID {
			return true
		}
		t = c.Tables[t.Parent]
	}
	return false
}
