package types

import (
	"math"
	"strings"

	"lockd/pgerr"
)

func CastDatum(fc *FormatCtx, v Datum, from, to Type, explicit bool) (Datum, error) {
	if from.OID == to.OID && (to.Mod < 0 || from.Mod == to.Mod) {
		return v, nil
	}
	if fe, ok := ElemOf(from); ok {
		if te, ok := ElemOf(to); ok {
			out := Datum{A: make([]Datum, len(v.A))}
			for i, e := range v.A {
				if e.Null {
					out.A[i] = e
					continue
				}
				c, err := CastDatum(fc, e, fe, te, explicit)
				if err != nil {
					return Datum{}, err
				}
				out.A[i] = c
			}
			return out, nil
		}
	}
	fromCat, toCat := CategoryOf(from), CategoryOf(to)
	switch {
	case toCat == CatString || to.OID == OIDTextArray && from.OID != OIDTextArray:
		if fromCat == CatString || fromCat == CatUnknown {
			if to.OID == OIDBpchar || to.OID == OIDVarchar {
				return CoerceString(to, v.S, explicit)
			}
			if from.OID == OIDBpchar {
				return TextDatum(strings.TrimRight(v.S, " ")), nil
			}
			return v, nil
		}
		s := string(AppendText(nil, from, v, fc))
		if from.OID == OIDInet {
			s = InetText(v) // text(inet) keeps the mask length
		}
		if from.OID == OIDBool {
			s = "false"
			if v.I != 0 {
				s = "true"
			}
		}
		if to.OID == OIDBpchar || to.OID == OIDVarchar {
			return CoerceString(to, s, explicit)
		}
		return TextDatum(s), nil
	case fromCat == CatString || fromCat == CatUnknown:
		return ParseText(to, v.S, fc)
	case toCat == CatInt:
		switch fromCat {
		case CatInt:
			if err := CheckIntRange(to, v.I); err != nil {
				return Datum{}, err
			}
			return v, nil
		case CatFloat:
			f := math.RoundToEven(v.F)
			if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
				return Datum{}, OutOfRange(to)
			}
			if err := CheckIntRange(to, int64(f)); err != nil {
				return Datum{}, err
			}
			return IntDatum(int64(f)), nil
		case CatNumeric:
			i, err := MustNumeric(v.S).toInt64(to)
			return IntDatum(i), err
		case CatBool:
			if to.OID == OIDInt4 {
				return v, nil
			}
		}
	case toCat == CatFloat:
		f := v.F
		switch fromCat {
		case CatInt:
			f = float64(v.I)
		case CatFloat:
		case CatNumeric:
			f = MustNumeric(v.S).toFloat()
		default:
			return Datum{}, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from.Name, to.Name)
		}
		if to.OID == OIDFloat4 {
			if g := float32(f); math.IsInf(float64(g), 0) && !math.IsInf(f, 0) {
				return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
			} else {
				f = float64(g)
			}
		}
		return FloatDatum(f), nil
	case toCat == CatNumeric:
		var n *Numeric
		switch fromCat {
		case CatInt:
			n = NumericFromInt(v.I)
		case CatFloat:
			var err error
			if n, err = numericFromFloat(v.F); err != nil {
				return Datum{}, err
			}
		case CatNumeric:
			if to.Mod < 4 {
				return v, nil
			}
			n = MustNumeric(v.S)
		}
		if n != nil {
			r, err := n.applyTypmod(to.Mod)
			if err != nil {
				return Datum{}, err
			}
			return TextDatum(r.String()), nil
		}
	case toCat == CatBool:
		if fromCat == CatInt && from.OID == OIDInt4 {
			return BoolDatum(v.I != 0), nil
		}
	case toCat == CatDatetime && fromCat == CatDatetime:
		return castDatetime(fc, v, from, to), nil
	}
	return Datum{}, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from.Name, to.Name)
}

func castDatetime(fc *FormatCtx, v Datum, from, to Type) Datum {
	loc := fc.Loc
	switch {
	case from.OID == OIDTimestamptz && to.OID == OIDTimestamp:
		_, off := unixMicroIn(v.I, loc)
		return IntDatum(v.I + int64(off)*1000000)
	case from.OID == OIDTimestamp && to.OID == OIDTimestamptz:
		_, off := unixMicroIn(v.I, loc)
		return IntDatum(v.I - int64(off)*1000000)
	case to.OID == OIDDate:
		us := v.I
		if from.OID == OIDTimestamptz {
			_, off := unixMicroIn(v.I, loc)
			us += int64(off) * 1000000
		}
		days := (us - PgEpochMicros)
		if days < 0 {
			days -= 86400000000 - 1
		}
		return IntDatum(days / 86400000000)
	case from.OID == OIDDate:
		us := v.I*86400000000 + PgEpochMicros
		if to.OID == OIDTimestamptz {
			_, off := unixMicroIn(us, loc)
			us -= int64(off) * 1000000
		}
		return IntDatum(us)
	}
	return v
}
