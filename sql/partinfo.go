package sql

// What the catalog views need to know about partitioning, from the
// partitioned-table catalog (partbound.go, partition.go, partdeparse.go).

func (t *TableDef) hasPartitions(cat *catalogState) bool {
	return t.Partitioned() && len(cat.partitionChildren(t)) > 0
}

// partitionBound is pg_get_expr(relpartbound): the bound of a partition.
func (t *TableDef) partitionBound() (string, bool) {
	if t.Parent == 0 {
		return "", false
	}
	return partitionBoundDef(t), true
}

// parentOID is the partitioned table t is a partition of, or 0.
func (t *TableDef) parentOID() uint32 { return t.Parent }

// partitionKey returns a partitioned table's strategy ('r', 'l', 'h'),
// its key columns (1-based) and its default partition's OID.
func (t *TableDef) partitionKey(cat *catalogState) (byte, []int16, uint32) {
	if !t.Partitioned() || t.PartStrategy == "" {
		return 0, nil, 0
	}
	keys := make([]int16, len(t.PartKey))
	for i, k := range t.PartKey {
		keys[i] = t.attnum(k)
	}
	return t.PartStrategy[0], keys, cat.defaultPartition(t)
}

// parentIndex is the partitioned index an index of a partition belongs to.
func (ix *IndexDef) parentIndex() uint32 { return ix.Parent }

// partitionKeyDef is pg_get_partkeydef.
func (t *TableDef) partitionKeyDef() string { return partitionKeyDef(t) }

// partitionConstraintDef is pg_get_partition_constraintdef.
func (t *TableDef) partitionConstraintDef(cat *catalogState) (string, bool) {
	return partitionConstraintDef(cat, t)
}
