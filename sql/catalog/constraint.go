package catalog

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"lockd/sql/types"
)

// --- partitions

// A partition obeys its own constraints and those of its partitioned
// ancestors; lockd keeps them on the ancestor (PostgreSQL copies CHECKs
// to each partition and clones foreign keys with conparentid, which
// pg_constraint shows: see inheritedConstraints).

// inheritedConstraints lists the constraints t has from its ancestors,
// nearest first, leaving out those t has one of the same name of itself.
func (c *CatalogState) InheritedConstraints(t *TableDef) []*ConstraintDef {
	var out []*ConstraintDef
	own := c.TableConstraintDefs(t.OID)
	for _, a := range c.Ancestors(t) {
		for _, con := range c.TableConstraintDefs(a.OID) {
			// clones belong to the referenced side's partitions, not to
			// the referencing table's (sql/commands/foreignkeypart.go)
			if con.NoInherit || con.IsClone() || slices.ContainsFunc(own, func(o *ConstraintDef) bool { return o.Name == con.Name }) ||
				slices.ContainsFunc(out, func(o *ConstraintDef) bool { return o.Name == con.Name }) {
				continue
			}
			out = append(out, con)
		}
	}
	return out
}

// CHECK and FOREIGN KEY constraints in the catalog: pg_constraint's rows
// of contype 'c' and 'f'. Primary keys and unique constraints are their
// indexes (IndexDef.Primary, IndexDef.IsConstraint) and show in
// pg_constraint from there (sql/sysviews/catalog.go).
//
// A ConstraintDef is immutable once published: DDL replaces it with a new
// one through a catOp ("addcon", "setcon", "dropcon"), so catalog states
// may share them.

// ConstraintDef is a CHECK or FOREIGN KEY constraint of a table.
type ConstraintDef struct {
	OID      uint32 `json:"oid"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`  // pg_constraint.contype: "c" check, "f" foreign key
	Table    uint32 `json:"table"` // conrelid
	Cols     []int  `json:"cols"`  // conkey, 0-based: the FK columns, or the columns a CHECK reads
	NotValid bool   `json:"not_valid,omitempty"`

	// CHECK: Expr is the expression as SQL, compiled against each table
	// the constraint applies to (sql/plan/check.go); Def and PrettyDef are what
	// pg_get_constraintdef(oid) and pg_get_constraintdef(oid, true) print,
	// computed when the constraint is made (sql/analyze/nodetree.go).
	Expr      string `json:"expr,omitempty"`
	Def       string `json:"def,omitempty"`
	PrettyDef string `json:"pretty_def,omitempty"`
	NoInherit bool   `json:"no_inherit,omitempty"`

	// FOREIGN KEY (sql/commands/foreignkey.go): the referenced table (confrelid), its
	// columns (confkey, in the order of Cols) and the unique index that
	// makes them a key (conindid); the actions as confupdtype and
	// confdeltype spell them (a no action, r restrict, c cascade, n set
	// null, d set default) and the match type (confmatchtype: s simple,
	// f full).
	RefTable uint32 `json:"reftable,omitempty"`
	RefCols  []int  `json:"refcols,omitempty"`
	RefIndex uint32 `json:"refindex,omitempty"`
	OnUpdate byte   `json:"onupdate,omitempty"`
	OnDelete byte   `json:"ondelete,omitempty"`
	Match    byte   `json:"match,omitempty"`

	// Parent (conparentid) marks a clone: PostgreSQL gives a foreign key
	// that references a partitioned table one more constraint per
	// partition of it, all on the same referencing table, each
	// referencing its partition and that partition's index of RefIndex's
	// tree, with the clone for the partition's parent as Parent
	// (sql/commands/foreignkeypart.go). Clones carry the referenced side's actions; the
	// referencing side's checks are the root constraint's.
	Parent uint32 `json:"parent,omitempty"`
}

// isClone reports whether con is one of the per-partition clones of a
// foreign key referencing a partitioned table.
func (con *ConstraintDef) IsClone() bool { return con.Parent != 0 }

// Constraint kinds (pg_constraint.contype).
const (
	ConCheck   = "c"
	ConForeign = "f"
)

// Foreign-key actions and match types as pg_constraint spells them.
const (
	FkNoAction   = 'a'
	FkRestrict   = 'r'
	FkCascade    = 'c'
	FkSetNull    = 'n'
	FkSetDefault = 'd'
	FkMatchFull  = 'f'
	FkMatchSimpl = 's'
)

// consIndex finds a table's constraints (derived from
// catalogState.Constraints by buildConstraintIndex).
type consIndex struct {
	byRel map[uint32][]*ConstraintDef // conrelid → its constraints, by OID
	byRef map[uint32][]*ConstraintDef // confrelid → the foreign keys referencing it, by OID
}

func cloneConstraints(m map[uint32]*ConstraintDef) map[uint32]*ConstraintDef {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}

// applyConstraint replays an "addcon", "setcon" or "dropcon" operation.
func (c *CatalogState) applyConstraint(op *CatOp) {
	if c.Constraints == nil {
		c.Constraints = map[uint32]*ConstraintDef{}
	}
	if op.Kind == "dropcon" {
		delete(c.Constraints, op.Con.OID)
		c.dropOrphanClones() // a foreign key's clones go with it
		return
	}
	con := *op.Con
	c.Constraints[con.OID] = &con
}

// dropTableConstraints removes the constraints of a dropped table and
// the foreign keys that referenced it (DROP ... CASCADE records those
// explicitly first; this keeps the catalog consistent whatever the order
// of a multi-table DROP).
func (c *CatalogState) dropTableConstraints(oid uint32) {
	for k, con := range c.Constraints {
		if con.Table == oid || con.RefTable == oid {
			delete(c.Constraints, k)
		}
	}
	c.dropOrphanClones()
}

// dropOrphanClones removes the clones whose parent constraint is gone,
// and theirs in turn.
func (c *CatalogState) dropOrphanClones() {
	for changed := true; changed; {
		changed = false
		for k, con := range c.Constraints {
			if con.IsClone() && c.Constraints[con.Parent] == nil {
				delete(c.Constraints, k)
				changed = true
			}
		}
	}
}

func (c *CatalogState) buildConstraintIndex() {
	c.cons = consIndex{}
	if len(c.Constraints) == 0 {
		return
	}
	c.cons.byRel = map[uint32][]*ConstraintDef{}
	c.cons.byRef = map[uint32][]*ConstraintDef{}
	for _, con := range c.Constraints {
		c.cons.byRel[con.Table] = append(c.cons.byRel[con.Table], con)
		if con.Kind == ConForeign {
			c.cons.byRef[con.RefTable] = append(c.cons.byRef[con.RefTable], con)
		}
	}
	byOID := func(l []*ConstraintDef) {
		sort.Slice(l, func(i, j int) bool { return l[i].OID < l[j].OID })
	}
	for _, l := range c.cons.byRel {
		byOID(l)
	}
	for _, l := range c.cons.byRef {
		byOID(l)
	}
}

// tableConstraintDefs lists the CHECK and FOREIGN KEY constraints of a
// table itself (not those it inherits), in OID order, clones included.
func (c *CatalogState) TableConstraintDefs(oid uint32) []*ConstraintDef { return c.cons.byRel[oid] }

// referencingKeys lists the foreign keys that reference table oid: of a
// partition of a referenced partitioned table, the clones for it.
func (c *CatalogState) ReferencingKeys(oid uint32) []*ConstraintDef { return c.cons.byRef[oid] }

// constraintNamed finds table oid's constraint called name: a CHECK or
// FOREIGN KEY (con), or the index of a primary key or unique constraint.
func (c *CatalogState) ConstraintNamed(oid uint32, name string) (*ConstraintDef, *IndexDef) {
	for _, con := range c.cons.byRel[oid] {
		if con.Name == name {
			return con, nil
		}
	}
	if t := c.Tables[oid]; t != nil {
		for _, ix := range c.TableIndexes(t) {
			if (ix.Primary || ix.IsConstraint) && ix.Name == name {
				return nil, ix
			}
		}
	}
	return nil, nil
}

// ancestors lists t's partitioned ancestors, nearest first.
func (c *CatalogState) Ancestors(t *TableDef) []*TableDef {
	var out []*TableDef
	for t.Parent != 0 {
		if t = c.Tables[t.Parent]; t == nil {
			break
		}
		out = append(out, t)
	}
	return out
}

// conRow is con's pg_constraint row, as a constraint of table rel.
func ConRow(cat *CatalogState, con *ConstraintDef, rel uint32) ConInfo {
	c := ConInfo{Oid: con.OID, Name: con.Name, Kind: con.Kind[0], Rel: rel, NotValid: con.NotValid,
		Parent: con.Parent, Inherited: con.IsClone()}
	switch {
	case con.Kind == ConCheck:
		c.NoInherit = con.NoInherit
	case !con.IsClone():
		// a foreign key is inherited by partitions only (CreateConstraintEntry
		// in addFkRecurseReferenced)
		if t := cat.Tables[con.Table]; t != nil {
			c.NoInherit = !t.Partitioned()
		}
	}
	t := cat.Tables[rel] // a partition shows its ancestor's constraint with its own attnums
	if t == nil {
		t = cat.Tables[con.Table]
	}
	for _, k := range con.Cols {
		c.Cols = append(c.Cols, t.Attnum(k))
	}
	switch con.Kind {
	case ConCheck:
		c.Def, c.PrettyDef = con.Def, con.PrettyDef
	case ConForeign:
		c.RefRel, c.Index = con.RefTable, con.RefIndex
		c.OnUpdate, c.OnDelete, c.Match = con.OnUpdate, con.OnDelete, con.Match
		for _, k := range con.RefCols {
			c.RefCols = append(c.RefCols, cat.Tables[con.RefTable].Attnum(k))
		}
		c.Def = fkeyDef(cat, con)
	}
	return c
}

// fkeyDef is pg_get_constraintdef of a foreign key:
// FOREIGN KEY (cols) REFERENCES table(cols) [MATCH FULL] [ON UPDATE ...]
// [ON DELETE ...] [NOT VALID].
func fkeyDef(cat *CatalogState, con *ConstraintDef) string {
	t, rt := cat.Tables[con.Table], cat.Tables[con.RefTable]
	if t == nil || rt == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("FOREIGN KEY (")
	b.WriteString(colList(t, con.Cols))
	b.WriteString(") REFERENCES ")
	b.WriteString(types.QuoteIdent(rt.Name))
	b.WriteByte('(')
	b.WriteString(colList(rt, con.RefCols))
	b.WriteByte(')')
	if con.Match == FkMatchFull {
		b.WriteString(" MATCH FULL")
	}
	if w := fkActionWords(con.OnUpdate); w != "" {
		b.WriteString(" ON UPDATE " + w)
	}
	if w := fkActionWords(con.OnDelete); w != "" {
		b.WriteString(" ON DELETE " + w)
	}
	if con.NotValid {
		b.WriteString(" NOT VALID")
	}
	return b.String()
}

func fkActionWords(a byte) string {
	switch a {
	case FkRestrict:
		return "RESTRICT"
	case FkCascade:
		return "CASCADE"
	case FkSetNull:
		return "SET NULL"
	case FkSetDefault:
		return "SET DEFAULT"
	}
	return "" // NO ACTION is not printed
}

// colList is "a, b" for column positions of t, quoted as needed.
func colList(t *TableDef, cols []int) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = types.QuoteIdent(t.Cols[c].Name)
	}
	return strings.Join(names, ", ")
}

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

// conInfo is one row of pg_constraint.
type ConInfo struct {
	Oid      uint32
	Name     string
	Kind     byte // 'p' primary key, 'u' unique, 'c' check, 'f' foreign key
	Rel      uint32
	Index    uint32
	RefRel   uint32
	Cols     []int16 // conkey (1-based)
	RefCols  []int16 // confkey
	Def      string  // pg_get_constraintdef text
	OnUpdate byte
	OnDelete byte
	Match    byte
	Parent   uint32

	// prettyDef is pg_get_constraintdef(oid, true) where it differs (a
	// CHECK); notValid is NOT convalidated (constraint.go).
	PrettyDef string
	NotValid  bool
	// inherited: the constraint comes from a parent constraint (NOT
	// conislocal, coninhcount 1); noInherit is connoinherit.
	Inherited bool
	NoInherit bool
}
