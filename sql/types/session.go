package types

import ()

func Itoa(i int64) string { return string(AppendText(nil, TypeInt8, IntDatum(i), nil)) }

func TypeByOID(oid uint32) (Type, bool) {
	for _, t := range []Type{TypeBool, TypeChar, TypeName, TypeInt2, TypeInt4, TypeInt8, TypeOid, TypeXid,
		TypeFloat4, TypeFloat8, TypeNumeric, TypeText, TypeVarchar, TypeBpchar, TypeUnknown, TypeDate,
		TypeTimestamp, TypeTimestamptz, TypeInterval, TypeTextArray, TypeInt4Array,
		TypeTid, TypeRegproc, TypeRegclass, TypeRegtype, TypeRegrole, TypeRegnsp} {
		if t.OID == oid {
			if t.OID == OIDUnknown {
				return Type{}, true
			}
			return t, true
		}
	}
	return Type{}, false
}
