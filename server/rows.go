package server

import (
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/sql"
)

// Result rows: RowDescription and DataRow encoding, shared by the simple and
// extended protocols. A row is encoded in place into one reused buffer.

// rowMsg is a DataRow encoded in place, so that sending a row costs no
// allocation.
type rowMsg struct{ buf []byte }

func (r *rowMsg) Decode([]byte) error               { return errors.New("rowMsg is send-only") }
func (r *rowMsg) Encode(dst []byte) ([]byte, error) { return append(dst, r.buf...), nil }
func (r *rowMsg) Backend()                          {}

// sendRow encodes row as a DataRow in b.row and sends it.
func (b *backend) sendRow(cols []sql.Column, formats []int16, row []sql.Datum) error {
	buf := append(b.row.buf[:0], 'D', 0, 0, 0, 0, byte(len(row)>>8), byte(len(row)))
	for i, d := range row {
		if d.Null {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		buf, err = b.sess.AppendValue(buf, cols[i].Type, d, formatFor(formats, i))
		if err != nil {
			return err
		}
		n := len(buf) - at - 4
		buf[at], buf[at+1], buf[at+2], buf[at+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	}
	n := len(buf) - 1
	buf[1], buf[2], buf[3], buf[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	b.row.buf = buf
	b.send(&b.row)
	// Large results go out in pieces; small ones wait for ReadyForQuery
	// so that a whole round trip costs one write.
	if b.unflushed += len(buf); b.unflushed > 256<<10 {
		b.unflushed = 0
		return b.be.Flush()
	}
	return nil
}

func formatFor(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	return formats[i]
}

func rowDescription(cols []sql.Column, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, c := range cols {
		rd.Fields[i] = pgproto3.FieldDescription{
			Name: []byte(c.Name), TableOID: c.TableOID, TableAttributeNumber: uint16(c.Attnum),
			DataTypeOID: c.Type.OID, DataTypeSize: c.Type.Len, TypeModifier: c.Type.Mod, Format: formatFor(formats, i),
		}
	}
	return rd
}
