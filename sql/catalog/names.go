package catalog

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

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
