package types

import (
	"encoding/binary"
	"math"
	"strings"
)

// compare orders two non-NULL values of a common type.
func Comparator(t Type) func(a, b Datum) (int, error) {
	switch CategoryOf(t) {
	case CatInt, CatBool, CatDatetime:
		return func(a, b Datum) (int, error) { return cmpInt(a.I, b.I), nil }
	case CatFloat:
		return func(a, b Datum) (int, error) { return cmpFloat(a.F, b.F), nil }
	case CatNumeric:
		return func(a, b Datum) (int, error) {
			return MustNumeric(a.S).Cmp(MustNumeric(b.S)), nil
		}
	}
	if t.OID == OIDInterval || t.OID == OIDTid { // a tid is block<<16 | offset
		return func(a, b Datum) (int, error) { return cmpInt(a.I, b.I), nil }
	}
	if t.OID == OIDPgLsn { // unsigned
		return func(a, b Datum) (int, error) {
			x, y := uint64(a.I), uint64(b.I)
			switch {
			case x < y:
				return -1, nil
			case x > y:
				return 1, nil
			}
			return 0, nil
		}
	}
	if t.OID == OIDInet {
		return func(a, b Datum) (int, error) { return cmpInet(a, b), nil }
	}
	if t.OID == OIDBpchar {
		return func(a, b Datum) (int, error) {
			return strings.Compare(strings.TrimRight(a.S, " "), strings.TrimRight(b.S, " ")), nil
		}
	}
	if elem, ok := ElemOf(t); ok {
		ec := Comparator(elem)
		// element by element; NULL elements sort after others, a shorter
		// array before a longer one with the same prefix (array_cmp)
		return func(a, b Datum) (int, error) {
			for i := 0; i < len(a.A) && i < len(b.A); i++ {
				x, y := a.A[i], b.A[i]
				switch {
				case x.Null && y.Null:
					continue
				case x.Null:
					return 1, nil
				case y.Null:
					return -1, nil
				}
				c, err := ec(x, y)
				if err != nil || c != 0 {
					return c, err
				}
			}
			return cmpInt(int64(len(a.A)), int64(len(b.A))), nil
		}
	}
	return func(a, b Datum) (int, error) { return strings.Compare(a.S, b.S), nil }
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders NaN above everything, as PostgreSQL does.
func cmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// appendHashKey encodes a value so that values equal under the type's
// comparison encode equally (numeric 1.0 = 1, bpchar ignores trailing
// blanks, -0 = 0).
func AppendHashKey(dst []byte, t Type, v Datum) []byte {
	switch CategoryOf(t) {
	case CatInt, CatBool, CatDatetime:
		return binary.BigEndian.AppendUint64(dst, uint64(v.I))
	case CatFloat:
		f := v.F
		if f == 0 {
			f = 0
		}
		if math.IsNaN(f) {
			f = math.NaN()
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
	case CatNumeric:
		n := MustNumeric(v.S)
		s := n.String()
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		if s == "-0" {
			s = "0"
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	}
	if t.OID == OIDInterval || t.OID == OIDTid || t.OID == OIDPgLsn {
		return binary.BigEndian.AppendUint64(dst, uint64(v.I))
	}
	s := v.S
	if t.OID == OIDBpchar {
		s = TrimBlanks(s)
	}
	if IsArray(t) {
		s = string(AppendText(nil, t, v, nil))
	}
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}
