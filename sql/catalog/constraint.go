package catalog

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"lockd/sql/types"
)

// CHECK and FOREIGN KEY constraints in the catalog: pg_constraint's rows
// of contype 'c' and 'f'. Primary keys and unique constraints are their
// indexes (IndexDef.Primary, IndexDef.IsConstraint) and show in
// pg_constraint from there (pgcatalog.go).
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
	// the constraint applies to (check.go); Def and PrettyDef are what
	// pg_get_constraintdef(oid) and pg_get_constraintdef(oid, true) print,
	// computed when the constraint is made (checkdeparse.go).
	Expr      string `json:"expr,omitempty"`
	Def       string `json:"def,omitempty"`
	PrettyDef string `json:"pretty_def,omitempty"`
	NoInherit bool   `json:"no_inherit,omitempty"`

	// FOREIGN KEY (fkey.go): the referenced table (confrelid), its
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
	// (fkpart.go). Clones carry the referenced side's actions; the
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

// --- names

// nameDataLen is PostgreSQL's NAMEDATALEN: names hold at most 63 bytes.
const NameDataLen = 64

// makeObjectName is PostgreSQL's makeObjectName: name1_name2_label, with
// name1 and name2 shortened (the longer one first) so that the whole fits
// in NAMEDATALEN-1 bytes; name2 may be empty.
func MakeObjectName(name1, name2, label string) string {
	overhead := 0
	if label != "" {
		overhead += len(label) + 1
	}
	if name2 != "" {
		overhead++
	}
	avail := NameDataLen - 1 - overhead
	n1, n2 := len(name1), len(name2)
	for n1+n2 > avail {
		if n1 > n2 {
			n1--
		} else {
			n2--
		}
	}
	name := clipUTF8(name1, n1)
	if name2 != "" {
		name += "_" + clipUTF8(name2, n2)
	}
	if label != "" {
		name += "_" + label
	}
	return name
}

// clipUTF8 cuts s to at most n bytes at a character boundary (pg_mbcliplen).
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// nameAddition joins column names with "_" for a generated name
// (ChooseForeignKeyConstraintNameAddition, ChooseIndexNameAddition): it
// stops once NAMEDATALEN bytes are reached, makeObjectName cuts the rest.
func NameAddition(cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(c)
		if b.Len() >= NameDataLen {
			break
		}
	}
	return b.String()
}

// constraintNameTaken reports whether a constraint of the namespace is
// already called name (pg_constraint_conname_nsp_index): CHECK and FOREIGN
// KEY constraints, primary keys and unique constraints.
func (c *CatalogState) constraintNameTaken(name string) bool {
	for _, con := range c.Constraints {
		if con.Name == name {
			return true
		}
	}
	for _, ix := range c.Indexes {
		if (ix.Primary || ix.IsConstraint) && ix.Name == name {
			return true
		}
	}
	return false
}

// chooseConstraintName is ChooseConstraintName: name1_name2_label, then
// name1_name2_label1, label2, ... until no constraint of the namespace
// and none of others (names chosen for the same command) has it.
func (c *CatalogState) ChooseConstraintName(name1, name2, label string, others []string) string {
	modlabel := label
	for pass := 1; ; pass++ {
		name := MakeObjectName(name1, name2, modlabel)
		if !slices.Contains(others, name) && !c.constraintNameTaken(name) {
			return name
		}
		modlabel = label + strconv.Itoa(pass)
	}
}

// chooseRelationName is ChooseRelationName, for the index of a unique
// constraint (table_cols_key): unique among relation names and others.
func (c *CatalogState) ChooseRelationName(name1, name2, label string, others []string) string {
	modlabel := label
	for pass := 1; ; pass++ {
		name := MakeObjectName(name1, name2, modlabel)
		if _, taken := c.ByName[name]; !taken && !slices.Contains(others, name) {
			return name
		}
		modlabel = label + strconv.Itoa(pass)
	}
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
