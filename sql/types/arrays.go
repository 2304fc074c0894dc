package types

import (
	"encoding/binary"
	"math"
	"strings"

	"lockd/pgerr"
)

// One-dimensional arrays, as PostgreSQL's array types with lower bound 1.
// A Datum of an array type holds its elements in A. Each supported element
// type has its array type (the OIDs of pg_type.dat).

type arrayType struct {
	Array, elem uint32
	name        string
}

var arrayTypes = []arrayType{
	{1000, OIDBool, "boolean[]"},
	{1002, OIDChar, "\"char\"[]"},
	{1003, OIDName, "name[]"},
	{OIDInt2Array, OIDInt2, "smallint[]"},
	{OIDInt4Array, OIDInt4, "integer[]"},
	{OIDTextArray, OIDText, "text[]"},
	{1010, OIDTid, "tid[]"},
	{1011, OIDXid, "xid[]"},
	{1014, OIDBpchar, "character[]"},
	{1015, OIDVarchar, "character varying[]"},
	{1016, OIDInt8, "bigint[]"},
	{1021, OIDFloat4, "real[]"},
	{1022, OIDFloat8, "double precision[]"},
	{1028, OIDOid, "oid[]"},
	{1115, OIDTimestamp, "timestamp without time zone[]"},
	{1182, OIDDate, "date[]"},
	{1185, OIDTimestamptz, "timestamp with time zone[]"},
	{1187, OIDInterval, "interval[]"},
	{1231, OIDNumeric, "numeric[]"},
	{2210, OIDRegclass, "regclass[]"},
	{2211, OIDRegtype, "regtype[]"},
	{3221, OIDPgLsn, "pg_lsn[]"},
	{1001, OIDBytea, "bytea[]"},
	{1041, OIDInet, "inet[]"},
}

var (
	arrayByOID  = map[uint32]*arrayType{}
	ArrayByElem = map[uint32]*arrayType{}
)

func init() {
	for i := range arrayTypes {
		a := &arrayTypes[i]
		arrayByOID[a.Array] = a
		ArrayByElem[a.elem] = a
	}
}

// arrayOf returns the array type whose elements are t (unknown and the
// string types other than those with their own array type become text[]).
func ArrayOf(t Type) (Type, bool) {
	if t.OID == OIDUnknown || t.OID == 0 {
		t = TypeText
	}
	a, ok := ArrayByElem[t.OID]
	if !ok {
		return Type{}, false
	}
	return Type{OID: a.Array, Len: -1, Mod: -1, Name: a.name}, true
}

// elemOf returns the element type of an array type.
func ElemOf(t Type) (Type, bool) {
	a, ok := arrayByOID[t.OID]
	if !ok {
		return Type{}, false
	}
	e, ok := TypeByOID(a.elem)
	return e, ok
}

func IsArray(t Type) bool { _, ok := arrayByOID[t.OID]; return ok }

func ArrayTypeByOID(oid uint32) (Type, bool) {
	a, ok := arrayByOID[oid]
	if !ok {
		return Type{}, false
	}
	return Type{OID: a.Array, Len: -1, Mod: -1, Name: a.name}, true
}

func appendArray(buf []byte, t Type, d Datum, fc *FormatCtx) []byte {
	elem, _ := ElemOf(t)
	return AppendArrayText(buf, elem, d.A, fc)
}

// AppendArrayText appends the text form of a one-dimensional array of
// elements of type elem (array_out): {a,b,NULL}, elements quoted where
// they would otherwise read differently.
func AppendArrayText(buf []byte, elem Type, elems []Datum, fc *FormatCtx) []byte {
	buf = append(buf, '{')
	for i, e := range elems {
		if i > 0 {
			buf = append(buf, ',')
		}
		if e.Null {
			buf = append(buf, "NULL"...)
			continue
		}
		start := len(buf)
		buf = AppendText(buf, elem, e, fc)
		s := string(buf[start:])
		if s == "" || strings.ContainsAny(s, "{},\"\\ \t\n") || strings.EqualFold(s, "null") {
			buf = buf[:start]
			buf = append(buf, '"')
			for j := 0; j < len(s); j++ {
				if s[j] == '"' || s[j] == '\\' {
					buf = append(buf, '\\')
				}
				buf = append(buf, s[j])
			}
			buf = append(buf, '"')
		}
	}
	return append(buf, '}')
}

// parseArray reads a one-dimensional array literal such as {1,2,NULL} or
// {"a b",c} (array_in).
func parseArray(t Type, s string, fc *FormatCtx) (Datum, error) {
	elem, ok := ElemOf(t)
	if !ok {
		return Datum{}, pgerr.NotSupported("type %s is not supported", t.Name)
	}
	bad := func(detail string) (Datum, error) {
		return Datum{}, pgerr.New(pgerr.InvalidTextRepresentation, "malformed array literal: \"%s\"", s).WithDetail(detail)
	}
	v := strings.TrimSpace(s)
	if len(v) < 2 || v[0] != '{' {
		return bad("Array value must start with \"{\" or dimension information.")
	}
	if v[len(v)-1] != '}' {
		return bad("Junk after closing right brace.")
	}
	body := v[1 : len(v)-1]
	out := Datum{A: []Datum{}}
	if strings.TrimSpace(body) == "" {
		return out, nil
	}
	i := 0
	for {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n') {
			i++
		}
		var item strings.Builder
		quoted := false
		if i < len(body) && body[i] == '{' {
			return Datum{}, pgerr.NotSupported("multidimensional arrays are not supported")
		}
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for {
				if i >= len(body) {
					return bad("Unexpected end of input.")
				}
				c := body[i]
				if c == '\\' && i+1 < len(body) {
					item.WriteByte(body[i+1])
					i += 2
					continue
				}
				if c == '"' {
					i++
					break
				}
				item.WriteByte(c)
				i++
			}
			for i < len(body) && body[i] == ' ' {
				i++
			}
		} else {
			for i < len(body) && body[i] != ',' {
				c := body[i]
				if c == '\\' && i+1 < len(body) {
					item.WriteByte(body[i+1])
					i += 2
					continue
				}
				if c == '"' || c == '{' || c == '}' {
					return bad("Unexpected \"" + string(c) + "\" character.")
				}
				item.WriteByte(c)
				i++
			}
		}
		text := item.String()
		if !quoted {
			text = strings.TrimRight(text, " \t\n")
		}
		if !quoted && strings.EqualFold(text, "null") {
			out.A = append(out.A, NullDatum)
		} else {
			d, err := ParseText(elem, text, fc)
			if err != nil {
				return Datum{}, err
			}
			out.A = append(out.A, d)
		}
		if i >= len(body) {
			break
		}
		if body[i] != ',' {
			return bad("Unexpected array element.")
		}
		i++
	}
	return out, nil
}

// appendArrayBinary writes array_send's format for one dimension.
func appendArrayBinary(buf []byte, t Type, d Datum) ([]byte, error) {
	elem, _ := ElemOf(t)
	hasNull := uint32(0)
	for _, e := range d.A {
		if e.Null {
			hasNull = 1
		}
	}
	if len(d.A) == 0 {
		buf = binary.BigEndian.AppendUint32(buf, 0)
		buf = binary.BigEndian.AppendUint32(buf, 0)
		return binary.BigEndian.AppendUint32(buf, elem.OID), nil
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, elem.OID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(d.A)))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	for _, e := range d.A {
		if e.Null {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		if buf, err = AppendBinary(buf, elem, e); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf, nil
}

// decodeArrayBinary reads array_recv's format (one dimension).
func decodeArrayBinary(t Type, b []byte) (Datum, error) {
	bad := pgerr.New(pgerr.InvalidBinaryRepresentation, "incorrect binary data format in bind parameter")
	elem, _ := ElemOf(t)
	if len(b) < 12 {
		return Datum{}, bad
	}
	ndim := binary.BigEndian.Uint32(b)
	if binary.BigEndian.Uint32(b[8:]) != elem.OID {
		return Datum{}, pgerr.New(pgerr.DatatypeMismatch, "wrong element type")
	}
	out := Datum{A: []Datum{}}
	if ndim == 0 {
		return out, nil
	}
	if ndim != 1 {
		return Datum{}, pgerr.NotSupported("multidimensional arrays are not supported")
	}
	if len(b) < 20 {
		return Datum{}, bad
	}
	n := int(binary.BigEndian.Uint32(b[12:]))
	p := b[20:]
	for i := 0; i < n; i++ {
		if len(p) < 4 {
			return Datum{}, bad
		}
		l := int32(binary.BigEndian.Uint32(p))
		p = p[4:]
		if l < 0 {
			out.A = append(out.A, NullDatum)
			continue
		}
		if int(l) > len(p) {
			return Datum{}, bad
		}
		d, err := DecodeBinary(elem, p[:l])
		if err != nil {
			return Datum{}, err
		}
		out.A = append(out.A, d)
		p = p[l:]
	}
	return out, nil
}
