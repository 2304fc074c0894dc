package catalog

import (
	"encoding/binary"
	"errors"
	"math"
	"unicode/utf8"

	"lockd/sql/types"
)

// Heap tuple data as the SQL layer stores it: the number of attributes
// the row has (a uvarint, PostgreSQL's HeapTupleHeaderGetNatts; tables
// made before ALTER TABLE ADD COLUMN existed, TableDef.RowFormat 0, leave
// it out), a null bitmap, then each non-NULL attribute in attribute
// number order. Fixed-width types take their width; variable-width ones a
// uvarint length and the bytes. The attributes are the table's physical
// ones (rowlayout.go): dropped columns keep their place (NULL in rows
// written since), and a row written before ADD COLUMN is shorter than the
// table, the missing attributes reading as their attmissingval.

var errCorruptRow = errors.New("sql: corrupt row data")

// appendRow encodes row, t's columns in column order, as a tuple of t.
func AppendRow(buf []byte, t *TableDef, row []types.Datum) []byte {
	l := t.Layout
	if l == nil {
		if t.RowFormat != 0 {
			buf = binary.AppendUvarint(buf, uint64(len(t.Cols)))
		}
		return appendAttrs(buf, t.Cols, nil, row)
	}
	if t.RowFormat != 0 {
		buf = binary.AppendUvarint(buf, uint64(len(l.attrs)))
	}
	return appendAttrs(buf, l.attrs, l.pos, row)
}

// decodeRow fills dst (len(t.Cols)) from a tuple of t. Strings are
// copied, so dst stays valid after the page is released.
func DecodeRow(data []byte, t *TableDef, dst []types.Datum) error {
	return DecodeRowPrefix(data, t, dst, len(t.Cols))
}

// DecodeRowPrefix is DecodeRow for a reader of the first upTo columns
// alone: the attributes after them are neither decoded nor copied and
// their places in dst are left as they are (PostgreSQL's
// slot_getsomeattrs). A table whose columns are not its attributes in
// order (dropped or added columns, rowlayout.go) is decoded whole.
// A scan that decodes many rows uses a RowDecoder instead.
func DecodeRowPrefix(data []byte, t *TableDef, dst []types.Datum, upTo int) error {
	var buf [64]attrKind // wider tables allocate
	var d RowDecoder
	kinds := d.setup(t, upTo, buf[:0])
	return decodeRow(data, dst, d.l, d.pos, kinds, d.natts, d.rowFormat)
}

// RowDecoder is DecodeRowPrefix with what depends only on the table —
// which attributes to read, where each goes, how each is stored — worked
// out once, for a scan that decodes many rows (slot_deform_tuple with a
// tuple descriptor in hand).
type RowDecoder struct {
	l         *rowLayout // nil: the columns are the attributes, in order
	pos       []int      // attribute -> column (-1: dropped), nil for the same
	kinds     []attrKind
	natts     int // the attributes the null bitmap covers
	rowFormat bool
	// When the attributes decoded are at most eight, all fixed-width and
	// in column order, a row with none of them NULL has each at a known
	// offset after the bitmap: offs, fixedLen bytes in all.
	offs     []int
	fixedLen int
}

// attrKind is how an attribute is stored (appendAttrs).
type attrKind uint8

const (
	kindVar    attrKind = iota // uvarint length, then the bytes
	kindBpchar                 // as kindVar, trailing blanks trimmed on reading
	kindBool                   // 1 byte
	kindInt2                   // 2 bytes, signed
	kindInt4                   // 4 bytes, signed
	kindUint4                  // 4 bytes, unsigned (oid, xid)
	kindInt8                   // 8 bytes, signed (also timestamps, intervals)
	kindFloat                  // 8 bytes, a float64 (float4 too)
)

func kindOf(oid uint32) attrKind {
	switch oid {
	case types.OIDBool:
		return kindBool
	case types.OIDInt2:
		return kindInt2
	case types.OIDInt4, types.OIDDate:
		return kindInt4
	case types.OIDOid, types.OIDXid:
		return kindUint4
	case types.OIDInt8, types.OIDTimestamp, types.OIDTimestamptz, types.OIDInterval:
		return kindInt8
	case types.OIDFloat4, types.OIDFloat8:
		return kindFloat
	case types.OIDBpchar:
		return kindBpchar
	}
	return kindVar
}

// NewRowDecoder returns a decoder of the first upTo columns of t's rows.
func NewRowDecoder(t *TableDef, upTo int) *RowDecoder {
	d := &RowDecoder{}
	d.kinds = d.setup(t, upTo, nil)
	if d.pos != nil || len(d.kinds) == 0 || len(d.kinds) > 8 {
		return d
	}
	offs := make([]int, 0, len(d.kinds))
	off := 0
	for _, k := range d.kinds {
		w := fixedWidth[k]
		if w == 0 {
			return d
		}
		offs = append(offs, off)
		off += w
	}
	d.offs, d.fixedLen = offs, off
	return d
}

// fixedWidth is the stored width of each fixed-width kind (0: variable).
var fixedWidth = [...]int{kindBool: 1, kindInt2: 2, kindInt4: 4, kindUint4: 4, kindInt8: 8, kindFloat: 8, kindVar: 0, kindBpchar: 0}

// setup sets d up for t's first upTo columns but for the attributes'
// kinds, which it appends to kinds (whose room a caller may give on its
// stack) and returns.
func (d *RowDecoder) setup(t *TableDef, upTo int, kinds []attrKind) []attrKind {
	attrs := t.Cols
	d.l, d.pos = t.Layout, nil
	if d.l != nil {
		attrs, d.pos = d.l.attrs, d.l.pos
	}
	d.natts = len(attrs) // the null bitmap covers every attribute
	if d.l == nil && upTo < len(attrs) {
		attrs = attrs[:upTo]
	}
	for i := range attrs {
		kinds = append(kinds, kindOf(attrs[i].TypeOID))
	}
	d.rowFormat = t.RowFormat != 0
	return kinds
}

// Decode fills dst from a tuple of the decoder's table, as
// DecodeRowPrefix does.
func (d *RowDecoder) Decode(data []byte, dst []types.Datum) error {
	if d.offs != nil && d.decodeFixed(data, dst) {
		return nil
	}
	return decodeRow(data, dst, d.l, d.pos, d.kinds, d.natts, d.rowFormat)
}

// decodeFixed decodes a row whose attributes d reads are fixed-width and
// not NULL from their known offsets. It reports false, having written
// nothing, for any other row (a NULL among them, or a row written before
// they all existed), which the general path decodes.
func (d *RowDecoder) decodeFixed(data []byte, dst []types.Datum) bool {
	natts := d.natts
	if d.rowFormat {
		if len(data) == 0 || data[0] >= 0x80 {
			return false // over 127 attributes: a longer uvarint
		}
		natts, data = int(data[0]), data[1:]
		if natts < len(d.kinds) {
			return false
		}
	}
	nb := (natts + 7) / 8
	if nb == 0 || len(data) < nb+d.fixedLen || data[0]&byte(1<<len(d.kinds)-1) != 0 {
		return false
	}
	p := data[nb : nb+d.fixedLen]
	dst = dst[:len(d.kinds)]
	for i, k := range d.kinds {
		v := p[d.offs[i]:]
		switch k {
		case kindBool:
			dst[i].SetInt(int64(v[0]))
		case kindInt2:
			dst[i].SetInt(int64(int16(binary.LittleEndian.Uint16(v))))
		case kindInt4:
			dst[i].SetInt(int64(int32(binary.LittleEndian.Uint32(v))))
		case kindUint4:
			dst[i].SetInt(int64(binary.LittleEndian.Uint32(v)))
		case kindInt8:
			dst[i].SetInt(int64(binary.LittleEndian.Uint64(v)))
		case kindFloat:
			dst[i].SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(v)))
		}
	}
	return true
}

func decodeRow(data []byte, dst []types.Datum, l *rowLayout, pos []int, kinds []attrKind, natts int, rowFormat bool) error {
	n := len(kinds)
	if rowFormat {
		v, k := binary.Uvarint(data)
		if k <= 0 || v > 1600 {
			return errCorruptRow
		}
		// a row longer than its table was written by a transaction that
		// added a column and aborted: only the attributes the table has
		// count (heap_deform_tuple's Min(natts, tupdesc->natts))
		natts, n, data = int(v), min(n, int(v)), data[k:]
	}
	if err := decodeAttrs(data, natts, kinds[:n], pos, dst); err != nil {
		return err
	}
	for k := n; k < len(kinds); k++ { // added after the row was written
		switch {
		case pos == nil:
			dst[k] = types.NullDatum
		case pos[k] >= 0:
			dst[pos[k]] = l.missing[pos[k]]
		}
	}
	return nil
}

// appendAttrs encodes attributes cols; pos maps each to its column in
// row (-1: a dropped column, stored NULL), nil meaning the same position.
func appendAttrs(buf []byte, cols []ColumnDef, pos []int, row []types.Datum) []byte {
	nb := (len(cols) + 7) / 8
	start := len(buf)
	for i := 0; i < nb; i++ {
		buf = append(buf, 0)
	}
	for i := range cols {
		d := &types.NullDatum
		switch {
		case pos == nil:
			d = &row[i]
		case pos[i] >= 0:
			d = &row[pos[i]]
		}
		if d.Null {
			buf[start+i/8] |= 1 << (i % 8)
			continue
		}
		switch cols[i].TypeOID {
		case types.OIDBool:
			buf = append(buf, byte(d.I))
		case types.OIDInt2:
			buf = binary.LittleEndian.AppendUint16(buf, uint16(d.I))
		case types.OIDInt4, types.OIDOid, types.OIDXid, types.OIDDate:
			buf = binary.LittleEndian.AppendUint32(buf, uint32(d.I))
		case types.OIDInt8, types.OIDTimestamp, types.OIDTimestamptz, types.OIDInterval:
			buf = binary.LittleEndian.AppendUint64(buf, uint64(d.I))
		case types.OIDFloat4, types.OIDFloat8:
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(d.F))
		case types.OIDBpchar:
			// Stored blank-padded to the declared length, as PostgreSQL
			// stores char(n), so that rows take PostgreSQL's room on the
			// page (pgbench's filler is char(84)); in memory the value is
			// kept without the padding, and decodeRow strips it again.
			pad := 0
			if cols[i].TypeMod > 4 {
				pad = max(0, int(cols[i].TypeMod-4)-utf8.RuneCountInString(d.S))
			}
			buf = binary.AppendUvarint(buf, uint64(len(d.S)+pad))
			buf = append(buf, d.S...)
			buf = appendBlanks(buf, pad)
		default:
			buf = binary.AppendUvarint(buf, uint64(len(d.S)))
			buf = append(buf, d.S...)
		}
	}
	return buf
}

// blanks is char(n)'s padding, appended a run at a time.
const blanks = "                                                                "

// appendBlanks appends n blanks to buf.
func appendBlanks(buf []byte, n int) []byte {
	for n > 0 {
		k := min(n, len(blanks))
		buf = append(buf, blanks[:k]...)
		n -= k
	}
	return buf
}

// decodeAttrs decodes the first attributes of a row of natts, stored as
// kinds says, into dst as pos maps them (see appendAttrs; a dropped
// column's value is skipped).
func decodeAttrs(data []byte, natts int, kinds []attrKind, pos []int, dst []types.Datum) error {
	nb := (natts + 7) / 8
	if len(data) < nb {
		return errCorruptRow
	}
	bitmap, p := data[:nb], data[nb:]
	var skip types.Datum
	for i, kind := range kinds {
		out := &skip
		switch {
		case pos == nil:
			out = &dst[i]
		case pos[i] >= 0:
			out = &dst[pos[i]]
		}
		if bitmap[uint(i)>>3]&(1<<(uint(i)&7)) != 0 {
			*out = types.NullDatum
			continue
		}
		var need int
		switch kind {
		case kindBool:
			need = 1
		case kindInt2:
			need = 2
		case kindInt4, kindUint4:
			need = 4
		case kindInt8, kindFloat:
			need = 8
		default:
			n, k := binary.Uvarint(p)
			if k <= 0 || uint64(len(p)-k) < n {
				return errCorruptRow
			}
			v := p[k : k+int(n)]
			if kind == kindBpchar {
				v = types.TrimBlanks(v)
			}
			if out != &skip {
				*out = types.Datum{S: string(v)}
			}
			p = p[k+int(n):]
			continue
		}
		if len(p) < need {
			return errCorruptRow
		}
		switch kind {
		case kindBool:
			out.SetInt(int64(p[0]))
		case kindInt2:
			out.SetInt(int64(int16(binary.LittleEndian.Uint16(p))))
		case kindInt4:
			out.SetInt(int64(int32(binary.LittleEndian.Uint32(p))))
		case kindUint4:
			out.SetInt(int64(binary.LittleEndian.Uint32(p)))
		case kindInt8:
			out.SetInt(int64(binary.LittleEndian.Uint64(p)))
		case kindFloat:
			out.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(p)))
		}
		p = p[need:]
	}
	return nil
}

// appendKey appends a memcmp-ordered encoding of the index columns, so
// that byte order equals PostgreSQL's btree order for these types.
func AppendKey(buf []byte, keyTypes []types.Type, vals []types.Datum) []byte {
	for i, t := range keyTypes {
		d := vals[i]
		if d.Null {
			buf = append(buf, 0x02) // NULLs sort last
			continue
		}
		buf = append(buf, 0x01)
		switch types.CategoryOf(t) {
		case types.CatInt, types.CatBool, types.CatDatetime:
			buf = binary.BigEndian.AppendUint64(buf, uint64(d.I)^(1<<63))
		case types.CatFloat:
			bits := math.Float64bits(d.F)
			if d.F == 0 {
				bits = 0 // -0 == 0
			}
			if bits&(1<<63) != 0 {
				bits = ^bits
			} else {
				bits |= 1 << 63
			}
			buf = binary.BigEndian.AppendUint64(buf, bits)
		default:
			s := d.S
			if t.OID == types.OIDBpchar {
				s = types.TrimBlanks(s)
			}
			for j := 0; j < len(s); j++ {
				if s[j] == 0 {
					buf = append(buf, 0, 0xff)
				} else {
					buf = append(buf, s[j])
				}
			}
			buf = append(buf, 0, 0)
		}
	}
	return buf
}
