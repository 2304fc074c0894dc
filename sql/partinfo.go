package sql

// What the catalog views need to know about partitioning. Until
// partitioned tables exist every table is a plain one.

func (t *TableDef) hasPartitions(*catalogState) bool { return false }

// partitionBound is pg_get_expr(relpartbound): the bound of a partition.
func (t *TableDef) partitionBound() (string, bool) { return "", false }

// parentOID is the partitioned table t is a partition of, or 0.
func (t *TableDef) parentOID() uint32 { return 0 }

// partitionKey returns a partitioned table's strategy ('r', 'l', 'h'),
// its key columns (1-based) and its default partition's OID.
func (t *TableDef) partitionKey(*catalogState) (byte, []int16, uint32) { return 0, nil, 0 }

// parentIndex is the partitioned index an index of a partition belongs to.
func (ix *IndexDef) parentIndex() uint32 { return 0 }

// partitionKeyDef is pg_get_partkeydef.
func (t *TableDef) partitionKeyDef() string { return "" }

// partitionConstraintDef is pg_get_partition_constraintdef.
func (t *TableDef) partitionConstraintDef(*catalogState) (string, bool) { return "", false }
