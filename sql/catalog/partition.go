package catalog

import (
	"sort"

	"lockd/sql/types"
)

// Partitioned tables as PostgreSQL 15 has them: the DDL that makes and
// changes them, with PostgreSQL's checks, messages and relation locks.
// Routing and scans are in partroute.go and partscan.go; bounds,
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

func PartitionKey(d *PartDesc, row []types.Datum, buf []types.Datum) []types.Datum {
	buf = buf[:0]
	for _, k := range d.Key {
		buf = append(buf, row[k])
	}
	return buf
}
