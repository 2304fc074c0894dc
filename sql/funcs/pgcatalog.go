package funcs

import (
	"sort"
	"strings"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// constraints lists the constraints of the catalog: primary keys and
// unique constraints from their indexes, then the table's own check and
// foreign-key constraints.
func ConstraintRows(s *expr.Backend) []catalog.ConInfo {
	cat := s.Cat()
	var out []catalog.ConInfo
	for _, ix := range cat.Indexes {
		if !ix.Primary && !ix.IsConstraint {
			continue
		}
		t := cat.Tables[ix.Table]
		if t == nil {
			continue
		}
		c := catalog.ConInfo{Oid: ix.OID, Name: ix.Name, Kind: 'u', Rel: t.OID, Index: ix.OID}
		// a partition's index of a partitioned key is that key's child
		// constraint, inheriting from it
		if pix := cat.Indexes[ix.Parent]; pix != nil && (pix.Primary || pix.IsConstraint) {
			c.Parent, c.Inherited = pix.OID, true
		}
		c.NoInherit = !c.Inherited
		word := "UNIQUE"
		if ix.Primary {
			c.Kind, word = 'p', "PRIMARY KEY"
		}
		var names []string
		for _, col := range ix.Cols {
			c.Cols = append(c.Cols, t.Attnum(col))
			names = append(names, types.QuoteIdent(t.Cols[col].Name))
		}
		c.Def = word + " (" + strings.Join(names, ", ") + ")"
		out = append(out, c)
	}
	out = append(out, tableConstraints(s)...)
	sort.Slice(out, func(i, j int) bool { return out[i].Oid < out[j].Oid })
	return out
}

// indexDef is pg_get_indexdef: the CREATE INDEX statement of an index
// (schema-qualified unless pretty).
func IndexDef(s *expr.Backend, ix *catalog.IndexDef, pretty bool) string {
	cat := s.Cat()
	t := cat.Tables[ix.Table]
	if t == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("CREATE ")
	if ix.Unique {
		b.WriteString("UNIQUE ")
	}
	b.WriteString("INDEX ")
	b.WriteString(types.QuoteIdent(ix.Name))
	b.WriteString(" ON ")
	if t.Partitioned() {
		b.WriteString("ONLY ")
	}
	if !pretty {
		b.WriteString("public.")
	}
	b.WriteString(types.QuoteIdent(t.Name))
	b.WriteString(" USING btree (")
	for i, c := range ix.Cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.QuoteIdent(t.Cols[c].Name))
	}
	b.WriteString(")")
	return b.String()
}
