package catalog

import (
	"encoding/binary"
	"errors"

	"lockd/sql/types"
)

var errCorruptKey = errors.New("catalog: corrupt index key")

// KeyDecodable reports whether a value of type t can be read back from
// its index key (AppendKey) exactly as the row holds it, so an index-only
// scan can return it (PostgreSQL's amcanreturn): integers, booleans,
// dates and timestamps, text, varchar and name. Not floats (the key
// folds -0 into 0), numerics (the key is their text, whose scale the key
// does not keep apart from the value's) or blank-padded char (the key
// drops the padding).
func KeyDecodable(t types.Type) bool {
	switch types.CategoryOf(t) {
	case types.CatInt, types.CatBool, types.CatDatetime:
		return true
	}
	switch t.OID {
	case types.OIDText, types.OIDVarchar, types.OIDName:
		return true
	}
	return false
}

// DecodeKey reads the values of an index key made by AppendKey for the
// key types keyTypes (each KeyDecodable) into out, one per key column.
func DecodeKey(key []byte, keyTypes []types.Type, out []types.Datum) error {
	for i, t := range keyTypes {
		if len(key) == 0 {
			return errCorruptKey
		}
		tag := key[0]
		key = key[1:]
		if tag == 0x02 {
			out[i] = types.NullDatum
			continue
		}
		switch types.CategoryOf(t) {
		case types.CatInt, types.CatBool, types.CatDatetime:
			if len(key) < 8 {
				return errCorruptKey
			}
			out[i] = types.Datum{I: int64(binary.BigEndian.Uint64(key) ^ 1<<63)}
			key = key[8:]
			continue
		}
		// a string: 0x00 is escaped as 0x00 0xff, the end is 0x00 0x00
		n := 0
		for ; ; n++ {
			if n+1 >= len(key) {
				return errCorruptKey
			}
			if key[n] == 0 && key[n+1] == 0 {
				break
			}
			if key[n] == 0 {
				n++
			}
		}
		s := key[:n]
		key = key[n+2:]
		if esc := countEscapes(s); esc > 0 {
			b := make([]byte, 0, len(s)-esc)
			for j := 0; j < len(s); j++ {
				b = append(b, s[j])
				if s[j] == 0 {
					j++
				}
			}
			out[i] = types.Datum{S: string(b)}
			continue
		}
		out[i] = types.Datum{S: string(s)}
	}
	return nil
}

func countEscapes(s []byte) int {
	n := 0
	for j := 0; j < len(s); j++ {
		if s[j] == 0 {
			n++
			j++
		}
	}
	return n
}
