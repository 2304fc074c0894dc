package catalog

import (
	"math/rand/v2"
	"slices"
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
