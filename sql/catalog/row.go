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
func DecodeRowPrefix(data []byte, t *TableDef, dst []types.Datum, upTo int) error {
	l := t.Layout
	attrs := t.Cols
	var pos []int
	if l != nil {
		attrs, pos = l.attrs, l.pos
	}
	natts := len(attrs) // the null bitmap covers every attribute
	if l == nil && upTo < len(attrs) {
		attrs = attrs[:upTo]
	}
	n := len(attrs)
	if t.RowFormat != 0 {
		v, k := binary.Uvarint(data)
		if k <= 0 || v > 1600 {
			return errCorruptRow
		}
		// a row longer than its table was written by a transaction that
		// added a column and aborted: only the attributes the table has
		// count (heap_deform_tuple's Min(natts, tupdesc->natts))
		natts, n, data = int(v), min(n, int(v)), data[k:]
	}
	if err := decodeAttrs(data, natts, attrs[:n], pos, dst); err != nil {
		return err
	}
	for k := n; k < len(attrs); k++ { // added after the row was written
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
		d := types.NullDatum
		switch {
		case pos == nil:
			d = row[i]
		case pos[i] >= 0:
			d = row[pos[i]]
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
			for ; pad > 0; pad-- {
				buf = append(buf, ' ')
			}
		default:
			buf = binary.AppendUvarint(buf, uint64(len(d.S)))
			buf = append(buf, d.S...)
		}
	}
	return buf
}

// decodeAttrs decodes the first attributes of a row of natts, cols, into
// dst as pos maps them (see appendAttrs; a dropped column's value is
// skipped).
func decodeAttrs(data []byte, natts int, cols []ColumnDef, pos []int, dst []types.Datum) error {
	nb := (natts + 7) / 8
	if len(data) < nb {
		return errCorruptRow
	}
	bitmap, p := data[:nb], data[nb:]
	var skip types.Datum
	for i := range cols {
		out := &skip
		switch {
		case pos == nil:
			out = &dst[i]
		case pos[i] >= 0:
			out = &dst[pos[i]]
		}
		if bitmap[i/8]&(1<<(i%8)) != 0 {
			*out = types.NullDatum
			continue
		}
		var need int
		switch cols[i].TypeOID {
		case types.OIDBool:
			need = 1
		case types.OIDInt2:
			need = 2
		case types.OIDInt4, types.OIDOid, types.OIDXid, types.OIDDate:
			need = 4
		case types.OIDInt8, types.OIDTimestamp, types.OIDTimestamptz, types.OIDInterval, types.OIDFloat4, types.OIDFloat8:
			need = 8
		default:
			n, k := binary.Uvarint(p)
			if k <= 0 || uint64(len(p)-k) < n {
				return errCorruptRow
			}
			v := p[k : k+int(n)]
			if cols[i].TypeOID == types.OIDBpchar {
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
		switch need {
		case 1:
			*out = types.Datum{I: int64(p[0])}
		case 2:
			*out = types.Datum{I: int64(int16(binary.LittleEndian.Uint16(p)))}
		case 4:
			v := binary.LittleEndian.Uint32(p)
			if cols[i].TypeOID == types.OIDOid || cols[i].TypeOID == types.OIDXid {
				*out = types.Datum{I: int64(v)}
			} else {
				*out = types.Datum{I: int64(int32(v))}
			}
		case 8:
			v := binary.LittleEndian.Uint64(p)
			if t := cols[i].TypeOID; t == types.OIDFloat4 || t == types.OIDFloat8 {
				*out = types.Datum{F: math.Float64frombits(v)}
			} else {
				*out = types.Datum{I: int64(v)}
			}
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
