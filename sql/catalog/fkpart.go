package catalog

import ()

// Foreign keys that reference a partitioned table, as PostgreSQL 15 has
// them (tablecmds.c addFkRecurseReferenced, CloneFkReferenced,
// ATDetachCheckNoForeignKeyRefs; ri_triggers.c; nodeModifyTable.c
// ExecCrossPartitionUpdateForeignKey).
//
// Catalog. The foreign key itself references the partitioned table and
// its partitioned unique index. For every partition of that table, depth
// first in bound order, a clone is made: a constraint of the same
// referencing table, named by ChooseConstraintName (t_cols_fkey1, ...),
// referencing the partition and its index of the key's index tree, with
// conparentid the clone for the partition's parent (or the key). A
// partition made or attached later gets clones of every foreign key
// referencing its new parent; a partition detached loses its clones. psql
// shows only the key (conparentid = 0): "Referenced by" of a partition
// lists it through pg_partition_ancestors.
//
// Checks. A referencing row is looked up as PostgreSQL's RI query
// `SELECT 1 FROM p x WHERE key = $1 FOR KEY SHARE OF x` finds it: the key
// is routed down the partition tree to the one partition that can hold it
// (the unique index contains every partition key column), looked up in
// that partition's index and the row locked FOR KEY SHARE. The relation
// locks are that query's plan's (riLockPK): a custom plan locks the
// partitioned table, the partitions on the key's path and every index of
// the leaf (plan-time pruning); the generic plan, planned at the sixth
// execution, every partition and all their indexes; and since its cost
// counts every partition's scan, PostgreSQL goes back to custom plans
// after it. With plan_cache_mode = force_generic_plan the generic plan is
// reused: every partition (AcquireExecutorLocks) and the one index the
// executor scans after run-time pruning.
//
// Actions. Deleting a row of a partition, or changing its key there, fires
// the clones for that partition: the errors name the partition and the
// clone (`update or delete on table "p1" violates foreign key constraint
// "c_pid_fkey1" on table "c"`). An UPDATE that moves a row to another
// partition fires, instead of the clones' ON DELETE actions in the old
// partition, the ON UPDATE actions of the foreign keys referencing the
// table the UPDATE named (PostgreSQL 15), and refuses (0A000) when a
// foreign key references a partitioned table in between.
//
// DDL. DETACH PARTITION of a partition that referencing rows still need
// fails with 23503 `removing partition "p1" violates foreign key
// constraint "c_pid_fkey1"`; DROP TABLE of a referenced partition depends
// on the foreign key (2BP01 naming it; CASCADE drops the whole foreign
// key); TRUNCATE of a referenced partition is refused unless the
// referencing table goes with it.

// --- catalog

// indexOfPartition returns the index of partition t that belongs to the
// tree of the partitioned index pix, or nil.
func (c *CatalogState) IndexOfPartition(pix *IndexDef, t *TableDef) *IndexDef {
	for _, ix := range c.TableIndexes(t) {
		for p := ix.Parent; p != 0; {
			if p == pix.OID {
				return ix
			}
			up := c.Indexes[p]
			if up == nil {
				break
			}
			p = up.Parent
		}
	}
	return nil
}

// rootConstraint follows a clone's parents up to its foreign key.
func (c *CatalogState) RootConstraint(con *ConstraintDef) *ConstraintDef {
	for con.IsClone() {
		p := c.Constraints[con.Parent]
		if p == nil {
			break
		}
		con = p
	}
	return con
}

// constraintClones lists con's clones and theirs, depth first in OID
// order.
func (c *CatalogState) ConstraintClones(con *ConstraintDef) []*ConstraintDef {
	var kids []*ConstraintDef
	for _, k := range c.TableConstraintDefs(con.Table) {
		if k.Parent == con.OID {
			kids = append(kids, k)
		}
	}
	var out []*ConstraintDef
	for _, k := range kids {
		out = append(out, k)
		out = append(out, c.ConstraintClones(k)...)
	}
	return out
}
