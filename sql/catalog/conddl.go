package catalog

import (
	"slices"
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
			// the referencing table's (fkpart.go)
			if con.NoInherit || con.IsClone() || slices.ContainsFunc(own, func(o *ConstraintDef) bool { return o.Name == con.Name }) ||
				slices.ContainsFunc(out, func(o *ConstraintDef) bool { return o.Name == con.Name }) {
				continue
			}
			out = append(out, con)
		}
	}
	return out
}
