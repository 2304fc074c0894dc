package catalog

import (
	"strconv"
	"strings"

	"lockd/sql/types"
)

// --- deparsing: what pg_get_partkeydef, pg_get_expr(relpartbound) and
// pg_get_partition_constraintdef print (checked against PostgreSQL 15).

// partitionKeyDef is pg_get_partkeydef: "RANGE (aid)", "HASH (a, b)".
// It is "" for a table that is not partitioned.
func PartitionKeyDef(t *TableDef) string {
	if !t.Partitioned() {
		return ""
	}
	var b strings.Builder
	switch t.PartStrategy {
	case PartRange:
		b.WriteString("RANGE (")
	case PartList:
		b.WriteString("LIST (")
	default:
		b.WriteString("HASH (")
	}
	for i, k := range t.PartKey {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.QuoteIdent(t.Cols[k].Name))
	}
	b.WriteByte(')')
	return b.String()
}

// partitionBoundDef is pg_get_expr(relpartbound, oid): "FOR VALUES FROM
// (MINVALUE) TO (20001)", "FOR VALUES IN (1, 2)", "FOR VALUES WITH
// (modulus 10, remainder 0)", "DEFAULT". It is "" for a table that is not a
// partition. timestamptz values print in UTC.
func PartitionBoundDef(t *TableDef) string {
	b := t.Bound
	if t.Parent == 0 || b == nil {
		return ""
	}
	switch {
	case b.Default:
		return "DEFAULT"
	case len(b.In) > 0:
		parts := make([]string, len(b.In))
		for i, v := range b.In {
			if v.Null {
				parts[i] = "NULL"
			} else {
				parts[i] = boundLiteral(b.typeOf(0), v.Text)
			}
		}
		return "FOR VALUES IN (" + strings.Join(parts, ", ") + ")"
	case len(b.From) > 0:
		return "FOR VALUES FROM " + RangeBoundString(b, b.From) + " TO " + RangeBoundString(b, b.To)
	}
	return "FOR VALUES WITH (modulus " + strconv.Itoa(b.Modulus) + ", remainder " + strconv.Itoa(b.Remainder) + ")"
}

func (b *PartBound) typeOf(i int) uint32 {
	if i < len(b.Types) {
		return b.Types[i]
	}
	return types.OIDText
}

// rangeBoundString is get_range_partbound_string: "(1, MAXVALUE)".
func RangeBoundString(b *PartBound, vals []BoundValue) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch v.Kind {
		case RangeMin:
			parts[i] = "MINVALUE"
		case RangeMax:
			parts[i] = "MAXVALUE"
		default:
			parts[i] = boundLiteral(b.typeOf(i), v.Text)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// boundLiteral prints a constant as ruleutils' get_const_expr does without
// a type label: int4 and float-looking numerics bare unless negative,
// booleans as true/false, everything else quoted.
func boundLiteral(typ uint32, text string) string {
	switch typ {
	case types.OIDInt4:
		if !strings.HasPrefix(text, "-") {
			return text
		}
	case types.OIDNumeric:
		if text != "" && text[0] >= '0' && text[0] <= '9' && strings.ContainsAny(text, "eE.") {
			return text
		}
	case types.OIDBool:
		if text == "t" || text == "true" {
			return "true"
		}
		return "false"
	}
	return deparseLiteral(text)
}

// constLiteral prints a constant as get_const_expr does with a type label
// where one is needed to read the constant back as its type.
func constLiteral(t types.Type, text string) string {
	lit := boundLiteral(t.OID, text)
	switch t.OID {
	case types.OIDBool:
		return lit
	case types.OIDInt4:
		if !strings.HasPrefix(lit, "'") {
			return lit
		}
	case types.OIDNumeric:
		if !strings.HasPrefix(lit, "'") && t.Mod < 0 {
			return lit
		}
	}
	return lit + "::" + types.FormatType(t.OID, t.Mod)
}

// deparseLiteral quotes a constant as ruleutils' simple_quote_literal
// does (standard_conforming_strings on): quotes doubled.
func deparseLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// partitionConstraintDef is pg_get_partition_constraintdef: the implicit
// constraint a partition's rows satisfy, its ancestors' first, e.g.
// "((aid IS NOT NULL) AND (aid >= 20001) AND (aid < 40001))". ok is false
// when there is none (not a partition, or a DEFAULT partition with no
// siblings), where PostgreSQL returns NULL.
func PartitionConstraintDef(cat *CatalogState, t *TableDef) (string, bool) {
	items := partitionQual(cat, t)
	switch len(items) {
	case 0:
		return "", false
	case 1:
		return items[0], true
	}
	return "(" + strings.Join(items, " AND ") + ")", true
}

// partitionQual is generate_partition_qual: the list of ANDed conditions.
func partitionQual(cat *CatalogState, t *TableDef) []string {
	if t.Parent == 0 || t.Bound == nil {
		return nil
	}
	parent := cat.Tables[t.Parent]
	if parent == nil {
		return nil
	}
	return append(partitionQual(cat, parent), qualFromBound(cat, parent, t.Bound)...)
}

// keyColumn is how the constraint names a key column: varchar keys are
// compared with text's operators, so PostgreSQL shows them cast.
func keyColumn(parent *TableDef, i int) string {
	c := &parent.Cols[parent.PartKey[i]]
	if c.TypeOID == types.OIDVarchar {
		return "(" + types.QuoteIdent(c.Name) + ")::text"
	}
	return types.QuoteIdent(c.Name)
}

func KeyType(parent *TableDef, i int) types.Type { return parent.Cols[parent.PartKey[i]].Type() }

// qualFromBound is get_qual_from_partbound.
func qualFromBound(cat *CatalogState, parent *TableDef, b *PartBound) []string {
	switch parent.PartStrategy {
	case PartHash:
		var args []string
		for i := range parent.PartKey {
			args = append(args, types.QuoteIdent(parent.Cols[parent.PartKey[i]].Name))
		}
		return []string{"satisfies_hash_partition('" + strconv.FormatUint(uint64(parent.OID), 10) + "'::oid, " +
			strconv.Itoa(b.Modulus) + ", " + strconv.Itoa(b.Remainder) + ", " + strings.Join(args, ", ") + ")"}
	case PartList:
		return qualForList(cat, parent, b)
	}
	return qualForRange(cat, parent, b, false)
}

// qualForList is get_qual_for_list.
func qualForList(cat *CatalogState, parent *TableDef, b *PartBound) []string {
	typ := KeyType(parent, 0)
	var elems []string
	hasNull := false
	if b.Default {
		d := cat.PartDesc(parent.OID)
		if d == nil {
			return nil
		}
		for _, v := range d.vals {
			elems = append(elems, constLiteral(typ, string(types.AppendText(nil, typ, v.d, nil))))
		}
		hasNull = d.NullPart >= 0
		if len(elems) == 0 && !hasNull {
			return nil
		}
	} else {
		for _, v := range b.In {
			if v.Null {
				hasNull = true
			} else {
				elems = append(elems, constLiteral(typ, v.Text))
			}
		}
	}
	col := keyColumn(parent, 0)
	op := ""
	switch len(elems) {
	case 0:
	case 1:
		op = "(" + col + " = " + elems[0] + ")"
	default:
		op = "(" + col + " = ANY (ARRAY[" + strings.Join(elems, ", ") + "]))"
	}
	var result []string
	if !hasNull {
		result = []string{"(" + types.QuoteIdent(parent.Cols[parent.PartKey[0]].Name) + " IS NOT NULL)"}
		if op != "" {
			result = append(result, op)
		}
	} else {
		isNull := "(" + types.QuoteIdent(parent.Cols[parent.PartKey[0]].Name) + " IS NULL)"
		if op != "" {
			result = []string{"(" + isNull + " OR " + op + ")"}
		} else {
			result = []string{isNull}
		}
	}
	if b.Default {
		inner := result[0]
		if len(result) > 1 {
			inner = "(" + strings.Join(result, " AND ") + ")"
		}
		result = []string{"(NOT " + inner + ")"}
	}
	return result
}

func andExpr(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return "(" + strings.Join(items, " AND ") + ")"
}

func orExpr(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return "(" + strings.Join(items, " OR ") + ")"
}

// qualForRange is get_qual_for_range.
func qualForRange(cat *CatalogState, parent *TableDef, b *PartBound, forDefault bool) []string {
	nkeys := len(parent.PartKey)
	nullTests := func() []string {
		out := make([]string, nkeys)
		for i := range out {
			out[i] = "(" + types.QuoteIdent(parent.Cols[parent.PartKey[i]].Name) + " IS NOT NULL)"
		}
		return out
	}
	if b.Default {
		var arms []string
		if d := cat.PartDesc(parent.OID); d != nil {
			for _, oid := range d.Parts {
				sib := cat.Tables[oid]
				if sib == nil || sib.Bound == nil || sib.Bound.Default {
					continue
				}
				arms = append(arms, andExpr(qualForRange(cat, parent, sib.Bound, true)))
			}
		}
		if len(arms) == 0 {
			return nil
		}
		other := "(" + strings.Join(append(nullTests(), orExpr(arms)), " AND ") + ")"
		return []string{"(NOT " + other + ")"}
	}
	var result []string
	if !forDefault {
		result = nullTests()
	}
	op := func(i int, o string, v BoundValue) string {
		return "(" + keyColumn(parent, i) + " " + o + " " + constLiteral(KeyType(parent, i), v.Text) + ")"
	}
	lower, upper := b.From, b.To
	// equal leading columns become col = value
	i := 0
	for ; i < nkeys; i++ {
		l, u := lower[i], upper[i]
		if l.Kind != 0 || u.Kind != 0 {
			break
		}
		typ := KeyType(parent, i)
		lv, _ := types.ParseText(typ, l.Text, nil)
		uv, _ := types.ParseText(typ, u.Text, nil)
		if c, _ := types.Comparator(typ)(lv, uv); c != 0 || i == nkeys-1 {
			break
		}
		result = append(result, op(i, "=", l))
	}
	var lowerArms, upperArms []string
	needLower, needUpper := true, true
	for arm := 0; arm < nkeys-i; arm++ {
		var la, ua []string
		for j := i; j < nkeys; j++ {
			l, u := lower[j], upper[j]
			var lnext, unext *BoundValue
			if j+1 < nkeys {
				lnext, unext = &lower[j+1], &upper[j+1]
			}
			if needLower && l.Kind == 0 {
				o := ">"
				switch {
				case j-i < arm:
					o = "="
				case j == nkeys-1 || lnext != nil && lnext.Kind == RangeMin:
					o = ">="
				}
				la = append(la, op(j, o, l))
			}
			if needUpper && u.Kind == 0 {
				o := "<"
				switch {
				case j-i < arm:
					o = "="
				case unext != nil && unext.Kind == RangeMax:
					o = "<="
				}
				ua = append(ua, op(j, o, u))
			}
			if j+1-i > arm {
				if l.Kind != 0 || lnext == nil || lnext.Kind != 0 {
					needLower = false
				}
				if u.Kind != 0 || unext == nil || unext.Kind != 0 {
					needUpper = false
				}
				break
			}
		}
		if len(la) > 0 {
			lowerArms = append(lowerArms, andExpr(la))
		}
		if len(ua) > 0 {
			upperArms = append(upperArms, andExpr(ua))
		}
		if !needLower && !needUpper {
			break
		}
	}
	if len(lowerArms) > 0 {
		result = append(result, orExpr(lowerArms))
	}
	if len(upperArms) > 0 {
		result = append(result, orExpr(upperArms))
	}
	if len(result) == 0 {
		if forDefault {
			return nullTests()
		}
		return []string{"true"}
	}
	return result
}
