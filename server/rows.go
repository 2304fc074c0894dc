package server

import (
	"encoding/binary"
	"errors"
	"math"

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

// rowEmitter returns the function that sends a row of b.rowCols in
// b.rowFmts, made once for the session.
func (b *backend) rowEmitter() func([]sql.Datum) error {
	if b.emitRows == nil {
		b.emitRows = func(row []sql.Datum) error { return b.sendRow(b.rowCols, b.rowFmts, row) }
	}
	return b.emitRows
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

// rowDescMsg is a RowDescription encoded straight from the columns it
// describes, so that describing a result costs no allocation (a
// pgproto3.RowDescription would copy every column name first). Send
// encodes it at once: the backend sets cols and formats, sends it and
// lets go of them (sendRowDescription).
type rowDescMsg struct {
	cols    []sql.Column
	formats []int16
}

func (r *rowDescMsg) Decode([]byte) error { return errors.New("rowDescMsg is send-only") }
func (r *rowDescMsg) Backend()            {}

// Encode writes what pgproto3.RowDescription's Encode writes for the
// same fields.
func (r *rowDescMsg) Encode(dst []byte) ([]byte, error) {
	if len(r.cols) > math.MaxUint16 {
		return nil, errors.New("too many fields")
	}
	at := len(dst)
	dst = append(dst, 'T', 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(r.cols)))
	for i, c := range r.cols {
		dst = append(dst, c.Name...)
		dst = append(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, c.TableOID)
		dst = binary.BigEndian.AppendUint16(dst, uint16(c.Attnum))
		dst = binary.BigEndian.AppendUint32(dst, c.Type.OID)
		dst = binary.BigEndian.AppendUint16(dst, uint16(c.Type.Len))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.Type.Mod))
		dst = binary.BigEndian.AppendUint16(dst, uint16(formatFor(r.formats, i)))
	}
	binary.BigEndian.PutUint32(dst[at+1:], uint32(len(dst)-at-1))
	return dst, nil
}

// sendRowDescription sends the RowDescription of cols going out in
// formats.
func (b *backend) sendRowDescription(cols []sql.Column, formats []int16) {
	b.rowDesc = rowDescMsg{cols: cols, formats: formats}
	b.send(&b.rowDesc)
	b.rowDesc = rowDescMsg{}
}

// Result formats named once for every column (a Bind's single format
// code, a binary cursor's rows). Shared: nothing writes into a portal's
// formats.
var (
	textFormats   = []int16{0}
	binaryFormats = []int16{1}
)

// resultFormats is a copy of a Bind's result format codes, which point
// into pgproto3's read buffer: a single code, as libpq sends it, is one
// of the shared slices.
func resultFormats(codes []int16) []int16 {
	if len(codes) == 1 {
		switch codes[0] {
		case 0:
			return textFormats
		case 1:
			return binaryFormats
		}
	}
	return append([]int16(nil), codes...)
}
