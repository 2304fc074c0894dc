package types

import (
	"encoding/binary"
	"math"
	"strings"
)

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
	if t.OID == OIDInterval {
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
