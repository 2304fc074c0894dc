package catalog

import (
	"testing"

	"lockd/sql/types"
)

// TestDecodeKey: keys of every decodable type read back as the values
// they were made of, NULLs and strings with zero bytes included.
func TestDecodeKey(t *testing.T) {
	ts := []types.Type{types.TypeInt4, types.TypeText, types.TypeInt8, types.TypeBool, types.TypeVarchar, types.TypeDate}
	for _, vals := range [][]types.Datum{
		{types.IntDatum(-5), types.TextDatum("abc"), types.IntDatum(1 << 40), types.BoolDatum(true), types.TextDatum(""), types.IntDatum(-3)},
		{types.IntDatum(0), types.TextDatum("a\x00b\x00"), types.IntDatum(-1 << 62), types.BoolDatum(false), types.TextDatum("\x00"), types.IntDatum(9000)},
		{types.NullDatum, types.NullDatum, types.IntDatum(7), types.NullDatum, types.TextDatum("zé"), types.NullDatum},
	} {
		for _, tt := range ts {
			if !KeyDecodable(tt) {
				t.Fatalf("%s is not decodable", tt.Name)
			}
		}
		key := AppendKey(nil, ts, vals)
		got := make([]types.Datum, len(ts))
		if err := DecodeKey(key, ts, got); err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			if got[i].Null != vals[i].Null || got[i].I != vals[i].I || got[i].S != vals[i].S {
				t.Fatalf("column %d: %+v read back as %+v", i, vals[i], got[i])
			}
		}
		if err := DecodeKey(key[:len(key)-1], ts, got); err == nil {
			t.Fatal("a truncated key decoded")
		}
	}
	for _, tt := range []types.Type{types.TypeFloat8, types.TypeNumeric, types.TypeBpchar} {
		if KeyDecodable(tt) {
			t.Errorf("%s is decodable", tt.Name)
		}
	}
}
