package catalog

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"lockd/sql/types"
)

// Decoding the first k columns of a row gives what a full decode gives
// for them, leaves the places of the others alone, and reads the null
// bitmap of the whole row, in both row formats.
func TestDecodeRowPrefix(t *testing.T) {
	oids := []uint32{types.OIDInt4, types.OIDText, types.OIDBool, types.OIDInt8, types.OIDFloat8, types.OIDBpchar,
		types.OIDInt2, types.OIDDate, types.OIDVarchar, types.OIDInt4, types.OIDText}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, format := range []int{0, 1} {
		td := &TableDef{Name: "t", RowFormat: format}
		for i, o := range oids {
			td.Cols = append(td.Cols, ColumnDef{Name: string(rune('a' + i)), TypeOID: o, TypeMod: -1})
		}
		for range 200 {
			row := make([]types.Datum, len(oids))
			for i, o := range oids {
				switch {
				case rng.IntN(4) == 0:
					row[i] = types.NullDatum
				case o == types.OIDText || o == types.OIDVarchar || o == types.OIDBpchar:
					row[i] = types.Datum{S: string(rune('a' + rng.IntN(26)))}
				case o == types.OIDFloat8:
					row[i] = types.Datum{F: rng.Float64()}
				case o == types.OIDBool:
					row[i] = types.Datum{I: int64(rng.IntN(2))}
				default:
					row[i] = types.Datum{I: int64(rng.IntN(1000)) - 500}
				}
			}
			data := AppendRow(nil, td, row)
			full := make([]types.Datum, len(oids))
			if err := DecodeRow(data, td, full); err != nil {
				t.Fatal(err)
			}
			for k := 0; k <= len(oids); k++ {
				sentinel := types.Datum{S: "untouched"}
				got := make([]types.Datum, len(oids))
				for i := range got {
					got[i] = sentinel
				}
				if err := DecodeRowPrefix(data, td, got, k); err != nil {
					t.Fatalf("format %d, first %d columns: %v", format, k, err)
				}
				for i := range got {
					want := sentinel
					if i < k {
						want = full[i]
					}
					if got[i].Null != want.Null || got[i].I != want.I || got[i].F != want.F || got[i].S != want.S {
						t.Fatalf("format %d, first %d columns: column %d = %+v, want %+v (row %v)", format, k, i, got[i], want, slices.Clone(row))
					}
				}
			}
		}
	}
}

// A RowDecoder decodes what DecodeRowPrefix decodes, into slots reused
// from row to row (a slot that held a NULL, a string or a float gets the
// new value whole): fixed-width prefixes with and without NULLs, wider
// prefixes, both row formats, and rows written before columns were added.
func TestRowDecoder(t *testing.T) {
	oids := []uint32{types.OIDInt4, types.OIDInt8, types.OIDFloat8, types.OIDBool, types.OIDInt2, types.OIDDate,
		types.OIDOid, types.OIDInt4, types.OIDInt8, types.OIDText, types.OIDInt4}
	rng := rand.New(rand.NewPCG(3, 4))
	value := func(o uint32) types.Datum {
		switch {
		case rng.IntN(10) == 0:
			return types.NullDatum
		case o == types.OIDText:
			return types.Datum{S: string(rune('a' + rng.IntN(26)))}
		case o == types.OIDFloat8:
			return types.Datum{F: rng.Float64() - 0.5}
		case o == types.OIDBool:
			return types.Datum{I: int64(rng.IntN(2))}
		case o == types.OIDOid:
			return types.Datum{I: int64(rng.Uint32())}
		}
		return types.Datum{I: int64(rng.IntN(100000)) - 50000}
	}
	for _, format := range []int{0, 1} {
		td := &TableDef{Name: "t", RowFormat: format}
		for i, o := range oids {
			td.Cols = append(td.Cols, ColumnDef{Name: string(rune('a' + i)), TypeOID: o, TypeMod: -1})
		}
		// rows written when the table had its first five columns
		older := &TableDef{Name: "t", RowFormat: format, Cols: td.Cols[:5]}
		for _, upTo := range []int{1, 3, 7, 8, 9, 10, len(oids)} {
			dec := NewRowDecoder(td, upTo)
			got := make([]types.Datum, len(oids))
			for i := range got {
				got[i] = types.Datum{S: "untouched"}
			}
			for n := range 300 {
				src := td
				if format == 1 && n%7 == 0 {
					src = older
				}
				row := make([]types.Datum, len(src.Cols))
				for i := range row {
					row[i] = value(src.Cols[i].TypeOID)
				}
				data := AppendRow(nil, src, row)
				want := make([]types.Datum, len(oids))
				if err := DecodeRowPrefix(data, td, want, upTo); err != nil {
					t.Fatal(err)
				}
				if err := dec.Decode(data, got); err != nil {
					t.Fatalf("format %d, first %d columns: %v", format, upTo, err)
				}
				for i := range upTo {
					g, w := got[i], want[i]
					if g.Null != w.Null || g.I != w.I || g.F != w.F || g.S != w.S || g.A != nil {
						t.Fatalf("format %d, first %d columns, row %d: column %d = %+v, want %+v", format, upTo, n, i, g, w)
					}
				}
				if upTo < len(oids) && got[upTo].S != "untouched" {
					t.Fatalf("format %d, first %d columns: column %d written", format, upTo, upTo)
				}
			}
		}
	}
}

// A char(n) value is stored blank-padded to n characters (not bytes),
// whatever n, and reads back without the padding.
func TestAppendRowBpcharPadding(t *testing.T) {
	for _, n := range []int{1, 3, 63, 64, 65, 84, 200} {
		td := &TableDef{Name: "t", RowFormat: 1, Cols: []ColumnDef{{Name: "c", TypeOID: types.OIDBpchar, TypeMod: int32(n + 4)}}}
		for _, v := range []string{"", "a", "äb", "x y"} {
			if len([]rune(v)) > n {
				continue
			}
			data := AppendRow(nil, td, []types.Datum{{S: v}})
			// natts, the null bitmap, the length, then the value
			l, k := binary.Uvarint(data[2:])
			stored := string(data[2+k:])
			if data[0] != 1 || data[1] != 0 || k <= 0 || int(l) != len(stored) {
				t.Fatalf("char(%d) %q: row % x", n, v, data)
			}
			if want := v + strings.Repeat(" ", n-len([]rune(v))); stored != want {
				t.Errorf("char(%d) %q: stored %q, want %q", n, v, stored, want)
			}
			got := make([]types.Datum, 1)
			if err := DecodeRow(data, td, got); err != nil || got[0].S != v {
				t.Errorf("char(%d) %q: decoded %q, %v", n, v, got[0].S, err)
			}
		}
	}
}
