package catalog

// What the catalog views need to know about partitioning, from the
// partitioned-table catalog (partbound.go, partition.go, partdeparse.go).

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
