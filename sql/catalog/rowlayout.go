package catalog

import (
	"slices"
	"strconv"

	"lockd/sql/types"
)

// attrRow describes one pg_attribute row.
type AttrRow struct {
	Rel     uint32
	Name    string
	T       types.Type
	Num     int16
	NotNull bool
	HasDef  bool
	Dropped bool         // attisdropped: t is the type the attribute had
	Missing *types.Datum // attmissingval, atthasmissing

	Identity byte // attidentity
	// StatTarget is attstattarget as ALTER COLUMN SET STATISTICS set
	// it; nil is -1 (default_statistics_target)
	StatTarget *int16
}

// A table's columns as the SQL layer sees them (TableDef.Cols, in column
// order) and the attributes its rows hold on disk can differ, as in
// PostgreSQL, once ALTER TABLE has added or dropped columns:
//
//   - DROP COLUMN does not rewrite the table. PostgreSQL marks the
//     attribute dropped (pg_attribute shows it as
//     "........pg.dropped.N........" with attisdropped) and leaves its
//     values in the rows; lockd records it in TableDef.Dropped, takes the
//     column out of Cols, and decoding skips the attribute. Attribute
//     numbers are never reused: the remaining columns keep theirs
//     (ColumnDef.Attnum) and a column added later gets the next one.
//   - ADD COLUMN does not rewrite the table either, unless its default is
//     volatile (PostgreSQL 11's fast default). Rows written before it
//     have fewer attributes; each row records how many it has (the
//     TableDef.RowFormat 1 prefix), and the attributes it lacks read as
//     the column's attmissingval (ColumnDef.Missing), or NULL.
//
// The rowLayout of a table maps attributes to columns. A table whose
// attributes are exactly its columns, with no missing values, has none
// (layout nil), and its rows decode with no mapping at all.

// DroppedColumn is an attribute whose column was dropped: enough to step
// over its values in old rows, and what pg_attribute shows.
type DroppedColumn struct {
	Attnum  int16  `json:"attnum"`
	TypeOID uint32 `json:"type"`
	TypeMod int32  `json:"typmod"`
}

// rowLayout is a table's physical attributes (derived by buildLayout).
type rowLayout struct {
	attrs   []ColumnDef   // by attnum - 1: the type of each attribute
	pos     []int         // by attnum - 1: the column it holds, -1 if dropped
	missing []types.Datum // by column: the value of an attribute a row lacks
}

// attnum is column i's pg_attribute.attnum.
func (t *TableDef) Attnum(i int) int16 {
	if a := t.Cols[i].Attnum; a != 0 {
		return a
	}
	return int16(i + 1)
}

// natts is pg_class.relnatts: the highest attribute number, dropped
// columns included.
func (t *TableDef) Natts() int {
	n := 0
	for i := range t.Cols {
		n = max(n, int(t.Attnum(i)))
	}
	for _, d := range t.Dropped {
		n = max(n, int(d.Attnum))
	}
	return n
}

// buildLayout derives t's rowLayout; nil when its attributes are its
// columns.
func BuildLayout(t *TableDef) *rowLayout {
	plain := len(t.Dropped) == 0
	for i := 0; plain && i < len(t.Cols); i++ {
		plain = t.Attnum(i) == int16(i+1) && t.Cols[i].Missing == nil
	}
	if plain {
		return nil
	}
	n := t.Natts()
	l := &rowLayout{attrs: make([]ColumnDef, n), pos: make([]int, n), missing: make([]types.Datum, len(t.Cols))}
	for k := range l.pos {
		l.pos[k] = -1
	}
	for _, d := range t.Dropped {
		l.attrs[d.Attnum-1] = ColumnDef{Name: droppedName(d.Attnum), TypeOID: d.TypeOID, TypeMod: d.TypeMod}
	}
	for i := range t.Cols {
		a := t.Attnum(i) - 1
		l.attrs[a], l.pos[a] = t.Cols[i], i
		l.missing[i] = types.NullDatum
		if m := t.Cols[i].Missing; m != nil {
			if v, err := decodeMissing(&t.Cols[i]); err == nil {
				l.missing[i] = v
			}
		}
	}
	return l
}

// droppedName is the name PostgreSQL gives a dropped attribute.
func droppedName(attnum int16) string {
	return "........pg.dropped." + strconv.Itoa(int(attnum)) + "........"
}

// encodeMissing is the ColumnDef.Missing of value v for column c.
func EncodeMissing(c *ColumnDef, v types.Datum) []byte {
	return appendAttrs(nil, []ColumnDef{*c}, nil, []types.Datum{v})
}

func decodeMissing(c *ColumnDef) (types.Datum, error) {
	dst := []types.Datum{types.NullDatum}
	err := decodeAttrs(c.Missing, 1, []attrKind{kindOf(c.TypeOID)}, nil, dst)
	return dst[0], err
}

// numberColumns gives every column its attribute number explicitly,
// for a change (dropping a column) after which positions and attribute
// numbers part.
func (t *TableDef) NumberColumns() {
	for i := range t.Cols {
		t.Cols[i].Attnum = t.Attnum(i)
	}
}

// tableAttributes is t's pg_attribute rows for its columns, dropped ones
// included, in attribute number order, and its system columns.
func TableAttributes(t *TableDef) []AttrRow {
	out := make([]AttrRow, 0, len(t.Cols)+len(t.Dropped)+2)
	for i := range t.Cols {
		c := &t.Cols[i]
		a := AttrRow{Rel: t.OID, Name: c.Name, T: c.Type(), Num: t.Attnum(i), NotNull: c.NotNull, HasDef: c.Default != "", StatTarget: c.StatTarget}
		if c.Identity != "" { // an identity column's default is not a default (sequence.go)
			a.HasDef, a.Identity = false, c.Identity[0]
		}
		if l := t.Layout; l != nil && c.Missing != nil {
			a.Missing = &l.missing[i]
		}
		out = append(out, a)
	}
	for _, d := range t.Dropped {
		typ, _ := types.TypeByOID(d.TypeOID)
		typ.Mod = d.TypeMod
		out = append(out, AttrRow{Rel: t.OID, Name: droppedName(d.Attnum), T: typ, Num: d.Attnum, Dropped: true})
	}
	slices.SortFunc(out, func(a, b AttrRow) int { return int(a.Num) - int(b.Num) })
	if !t.Partitioned() {
		out = append(out,
			AttrRow{Rel: t.OID, Name: "tableoid", T: types.TypeOid, Num: -6, NotNull: true},
			AttrRow{Rel: t.OID, Name: "ctid", T: types.TypeTid, Num: -1, NotNull: true})
	}
	return out
}

// colName is the name of the index's attribute i.
func (ix *IndexDef) ColName(t *TableDef, i int) string {
	if i < len(ix.ColNames) {
		return ix.ColNames[i]
	}
	return t.Cols[ix.Cols[i]].Name
}
