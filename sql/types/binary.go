package types

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"

	"lockd/pgerr"
)

func AppendBinary(buf []byte, t Type, d Datum) ([]byte, error) {
	switch t.OID {
	case OIDBool:
		return append(buf, byte(d.I)), nil
	case OIDInt2:
		return binary.BigEndian.AppendUint16(buf, uint16(d.I)), nil
	case OIDInt4, OIDOid, OIDXid, OIDRegclass, OIDRegtype, OIDRegnsp, OIDRegrole, OIDRegproc:
		return binary.BigEndian.AppendUint32(buf, uint32(d.I)), nil
	case OIDTid:
		buf = binary.BigEndian.AppendUint32(buf, uint32(d.I>>16))
		return binary.BigEndian.AppendUint16(buf, uint16(d.I)), nil
	case OIDInt8, OIDPgLsn:
		return binary.BigEndian.AppendUint64(buf, uint64(d.I)), nil
	case OIDFloat4:
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(d.F))), nil
	case OIDFloat8:
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(d.F)), nil
	case OIDTimestamp, OIDTimestamptz:
		return binary.BigEndian.AppendUint64(buf, uint64(d.I-PgEpochMicros)), nil
	case OIDDate:
		return binary.BigEndian.AppendUint32(buf, uint32(int32(d.I))), nil
	case OIDInterval:
		buf = binary.BigEndian.AppendUint64(buf, uint64(d.I))
		return append(buf, 0, 0, 0, 0, 0, 0, 0, 0), nil
	case OIDNumeric:
		return appendNumericBinary(buf, MustNumeric(d.S)), nil
	case OIDVoid:
		return buf, nil
	case OIDBytea:
		return append(buf, d.S...), nil
	case OIDInet:
		return appendInetBinary(buf, d), nil
	}
	if IsArray(t) {
		return appendArrayBinary(buf, t, d)
	}
	return AppendText(buf, t, d, nil), nil
}

// appendNumericBinary writes PostgreSQL's base-10000 numeric format.
func appendNumericBinary(buf []byte, n *Numeric) []byte {
	s := new(big.Int).Abs(&n.Coef).String()
	scale := int(n.scale)
	intPart, frac := "0", ""
	if len(s) > scale {
		intPart, frac = s[:len(s)-scale], s[len(s)-scale:]
	} else {
		frac = strings.Repeat("0", scale-len(s)) + s
	}
	// pad integer part on the left and fraction on the right to groups of 4
	if r := len(intPart) % 4; r != 0 {
		intPart = strings.Repeat("0", 4-r) + intPart
	}
	if r := len(frac) % 4; r != 0 {
		frac += strings.Repeat("0", 4-r)
	}
	var digits []int16
	for i := 0; i < len(intPart); i += 4 {
		digits = append(digits, int16(atoi4(intPart[i:i+4])))
	}
	weight := len(digits) - 1
	for i := 0; i < len(frac); i += 4 {
		digits = append(digits, int16(atoi4(frac[i:i+4])))
	}
	// strip leading zero groups
	for len(digits) > 0 && digits[0] == 0 {
		digits = digits[1:]
		weight--
	}
	for len(digits) > 0 && digits[len(digits)-1] == 0 {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		weight = 0
	}
	sign := uint16(0)
	if n.Coef.Sign() < 0 {
		sign = 0x4000
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(digits)))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(scale))
	for _, d := range digits {
		buf = binary.BigEndian.AppendUint16(buf, uint16(d))
	}
	return buf
}

func atoi4(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

func DecodeBinary(t Type, b []byte) (Datum, error) {
	bad := func() (Datum, error) {
		return Datum{}, pgerr.New(pgerr.InvalidBinaryRepresentation, "incorrect binary data format in bind parameter")
	}
	switch t.OID {
	case OIDBool:
		if len(b) != 1 {
			return bad()
		}
		return BoolDatum(b[0] != 0), nil
	case OIDInt2:
		if len(b) != 2 {
			return bad()
		}
		return IntDatum(int64(int16(binary.BigEndian.Uint16(b)))), nil
	case OIDInt4:
		if len(b) != 4 {
			return bad()
		}
		return IntDatum(int64(int32(binary.BigEndian.Uint32(b)))), nil
	case OIDOid, OIDXid, OIDRegclass, OIDRegtype, OIDRegnsp, OIDRegrole, OIDRegproc:
		if len(b) != 4 {
			return bad()
		}
		return IntDatum(int64(binary.BigEndian.Uint32(b))), nil
	case OIDInt8, OIDPgLsn:
		if len(b) != 8 {
			return bad()
		}
		return IntDatum(int64(binary.BigEndian.Uint64(b))), nil
	case OIDFloat4:
		if len(b) != 4 {
			return bad()
		}
		return FloatDatum(float64(math.Float32frombits(binary.BigEndian.Uint32(b)))), nil
	case OIDFloat8:
		if len(b) != 8 {
			return bad()
		}
		return FloatDatum(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case OIDTimestamp, OIDTimestamptz:
		if len(b) != 8 {
			return bad()
		}
		return IntDatum(int64(binary.BigEndian.Uint64(b)) + PgEpochMicros), nil
	case OIDDate:
		if len(b) != 4 {
			return bad()
		}
		return IntDatum(int64(int32(binary.BigEndian.Uint32(b)))), nil
	case OIDText, OIDVarchar, OIDBpchar, OIDName, OIDChar, OIDUnknown, OIDBytea:
		return TextDatum(string(b)), nil
	case OIDInet:
		return decodeInetBinary(b)
	case OIDNumeric:
		if len(b) < 8 {
			return bad()
		}
		nd := int(binary.BigEndian.Uint16(b))
		weight := int(int16(binary.BigEndian.Uint16(b[2:])))
		sign := binary.BigEndian.Uint16(b[4:])
		dscale := int(binary.BigEndian.Uint16(b[6:]))
		if len(b) != 8+2*nd || dscale > 1000 {
			return bad()
		}
		var sb strings.Builder
		if sign == 0x4000 {
			sb.WriteByte('-')
		} else if sign != 0 {
			return bad()
		}
		// integer digits
		if weight < 0 {
			sb.WriteByte('0')
		}
		for i := 0; i <= weight; i++ {
			d := 0
			if i < nd {
				d = int(binary.BigEndian.Uint16(b[8+2*i:]))
			}
			if i == 0 {
				sb.WriteString(Itoa(int64(d)))
			} else {
				sb.WriteString(pad4(d))
			}
		}
		if dscale > 0 {
			var frac strings.Builder
			for i := weight + 1; frac.Len() < dscale; i++ {
				d := 0
				if i >= 0 && i < nd {
					d = int(binary.BigEndian.Uint16(b[8+2*i:]))
				}
				frac.WriteString(pad4(d))
			}
			sb.WriteByte('.')
			sb.WriteString(frac.String()[:dscale])
		}
		n, err := ParseNumeric(sb.String())
		if err != nil {
			return bad()
		}
		return TextDatum(n.String()), nil
	}
	if IsArray(t) {
		return decodeArrayBinary(t, b)
	}
	return Datum{}, pgerr.NotSupported("binary format for parameters of type %s is not supported", t.Name)
}

func pad4(d int) string {
	s := Itoa(int64(d))
	return strings.Repeat("0", 4-len(s)) + s
}
