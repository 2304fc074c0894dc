package server

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/sql"
	"lockd/sql/types"
)

// TestRowDescMsg checks that a RowDescription encoded from the columns
// is byte for byte what pgproto3 encodes for the same fields.
func TestRowDescMsg(t *testing.T) {
	cols := []sql.Column{
		{Name: "abalance", Type: types.TypeInt4, TableOID: 16384, Attnum: 3},
		{Name: "", Type: types.Type{OID: types.OIDBpchar, Len: -1, Mod: 88}},
		{Name: "ünïcode", Type: types.TypeText, Attnum: -1},
	}
	for _, tc := range []struct {
		cols    []sql.Column
		formats []int16
	}{
		{nil, nil},
		{cols[:1], nil},
		{cols, nil},
		{cols, textFormats},
		{cols, binaryFormats},
		{cols, []int16{1, 0, 1}},
	} {
		want := &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{}}
		for i, c := range tc.cols {
			want.Fields = append(want.Fields, pgproto3.FieldDescription{
				Name: []byte(c.Name), TableOID: c.TableOID, TableAttributeNumber: uint16(c.Attnum),
				DataTypeOID: c.Type.OID, DataTypeSize: c.Type.Len, TypeModifier: c.Type.Mod, Format: formatFor(tc.formats, i),
			})
		}
		wb, err := want.Encode([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		gb, err := (&rowDescMsg{cols: tc.cols, formats: tc.formats}).Encode([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gb, wb) {
			t.Errorf("%d columns, formats %v:\n got %x\nwant %x", len(tc.cols), tc.formats, gb, wb)
		}
	}
}
