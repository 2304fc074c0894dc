package funcs

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
)

// --- pg_constraint

// tableConstraints lists the CHECK and FOREIGN KEY constraints for
// pg_constraint and pg_get_constraintdef (the primary keys and unique
// constraints come from their indexes).
func tableConstraints(s *expr.Backend) []catalog.ConInfo {
	cat := s.Cat()
	if len(cat.Constraints) == 0 {
		return nil
	}
	out := make([]catalog.ConInfo, 0, len(cat.Constraints))
	for _, con := range cat.Constraints {
		out = append(out, catalog.ConRow(cat, con, con.Table))
	}
	// a partition's copies of its ancestors' CHECKs and clones of their
	// foreign keys (conparentid), under the ancestor's OID
	for _, t := range cat.Tables {
		if t.Parent == 0 {
			continue
		}
		for _, con := range cat.InheritedConstraints(t) {
			c := catalog.ConRow(cat, con, t.OID)
			if con.Kind == catalog.ConForeign {
				c.Parent = con.OID
			}
			c.Inherited, c.NoInherit = true, false
			out = append(out, c)
		}
	}
	return out
}
