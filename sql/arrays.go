package sql

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
	array, elem uint32
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
}

var (
	arrayByOID  = map[uint32]*arrayType{}
	arrayByElem = map[uint32]*arrayType{}
)

func init() {
	for i := range arrayTypes {
		a := &arrayTypes[i]
		arrayByOID[a.array] = a
		arrayByElem[a.elem] = a
	}
}

// arrayOf returns the array type whose elements are t (unknown and the
// string types other than those with their own array type become text[]).
func arrayOf(t Type) (Type, bool) {
	if t.OID == OIDUnknown || t.OID == 0 {
		t = TypeText
	}
	a, ok := arrayByElem[t.OID]
	if !ok {
		return Type{}, false
	}
	return Type{OID: a.array, Len: -1, Mod: -1, Name: a.name}, true
}

// elemOf returns the element type of an array type.
func elemOf(t Type) (Type, bool) {
	a, ok := arrayByOID[t.OID]
	if !ok {
		return Type{}, false
	}
	e, ok := typeByOID(a.elem)
	return e, ok
}

func isArray(t Type) bool { _, ok := arrayByOID[t.OID]; return ok }

func arrayTypeByOID(oid uint32) (Type, bool) {
	a, ok := arrayByOID[oid]
	if !ok {
		return Type{}, false
	}
	return Type{OID: a.array, Len: -1, Mod: -1, Name: a.name}, true
}

func appendArray(buf []byte, t Type, d Datum, fc *formatCtx) []byte {
	elem, _ := elemOf(t)
	buf = append(buf, '{')
	for i, e := range d.A {
		if i > 0 {
			buf = append(buf, ',')
		}
		if e.Null {
			buf = append(buf, "NULL"...)
			continue
		}
		start := len(buf)
		buf = appendText(buf, elem, e, fc)
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
func parseArray(t Type, s string, fc *formatCtx) (Datum, error) {
	elem, ok := elemOf(t)
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
			d, err := parseText(elem, text, fc)
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
	elem, _ := elemOf(t)
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
		if buf, err = appendBinary(buf, elem, e); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf, nil
}

// decodeArrayBinary reads array_recv's format (one dimension).
func decodeArrayBinary(t Type, b []byte) (Datum, error) {
	bad := pgerr.New(pgerr.InvalidBinaryRepresentation, "incorrect binary data format in bind parameter")
	elem, _ := elemOf(t)
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
		d, err := decodeBinary(elem, p[:l])
		if err != nil {
			return Datum{}, err
		}
		out.A = append(out.A, d)
		p = p[l:]
	}
	return out, nil
}

// arrayFuncs are the array functions psql's catalog queries and users
// call: array_to_string, array_length, array_upper, array_lower,
// cardinality, array_position.
func (a *analyzer) arrayFunc(name string, args []expr, loc int32) (expr, bool, error) {
	switch name {
	case "array_to_string", "array_length", "array_upper", "array_lower", "cardinality", "array_position", "array_positions":
	default:
		return nil, false, nil
	}
	if len(args) == 0 || !isArray(args[0].typ()) {
		if len(args) > 0 && isUnknown(args[0]) {
			return nil, true, posErr(pgerr.New(pgerr.UndefinedFunction, "could not determine polymorphic type because input has type unknown"), loc)
		}
		return nil, true, noFunction(name, args, loc)
	}
	at := args[0].typ()
	elem, _ := elemOf(at)
	var err error
	switch name {
	case "array_to_string":
		if len(args) < 2 || len(args) > 3 {
			return nil, true, noFunction(name, args, loc)
		}
		for i := 1; i < len(args); i++ {
			if args[i], err = a.coerceArg(args[i], TypeText, name, loc); err != nil {
				return nil, true, err
			}
		}
		fc := a.fold.formatCtx()
		return &funcExpr{name: name, t: TypeText, args: args, nonStrict: true, fn: func(ec *evalCtx, v []Datum) (Datum, error) {
			if v[0].Null || v[1].Null {
				return NullDatum, nil
			}
			var b []byte
			first := true
			for _, e := range v[0].A {
				if e.Null {
					if len(v) < 3 || v[2].Null {
						continue
					}
					if !first {
						b = append(b, v[1].S...)
					}
					b = append(b, v[2].S...)
					first = false
					continue
				}
				if !first {
					b = append(b, v[1].S...)
				}
				b = appendText(b, elem, e, ecFormat(ec, fc))
				first = false
			}
			return textDatum(string(b)), nil
		}}, true, nil
	case "array_length", "array_upper", "array_lower":
		if len(args) != 2 {
			return nil, true, noFunction(name, args, loc)
		}
		if args[1], err = a.coerceArg(args[1], TypeInt4, name, loc); err != nil {
			return nil, true, err
		}
		return &funcExpr{name: name, t: TypeInt4, args: args, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			if v[1].I != 1 || len(v[0].A) == 0 {
				return NullDatum, nil
			}
			if name == "array_lower" {
				return intDatum(1), nil
			}
			return intDatum(int64(len(v[0].A))), nil
		}}, true, nil
	case "cardinality":
		if len(args) != 1 {
			return nil, true, noFunction(name, args, loc)
		}
		return &funcExpr{name: name, t: TypeInt4, args: args, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			return intDatum(int64(len(v[0].A))), nil
		}}, true, nil
	default: // array_position(array, elem [, start]), array_positions(array, elem)
		if len(args) != 2 && !(name == "array_position" && len(args) == 3) {
			return nil, true, noFunction(name, args, loc)
		}
		if args[1], err = a.coerceArg(args[1], elem, name, loc); err != nil {
			return nil, true, err
		}
		if len(args) == 3 {
			if args[2], err = a.coerceArg(args[2], TypeInt4, name, loc); err != nil {
				return nil, true, err
			}
		}
		cmp := comparator(elem)
		all := name == "array_positions"
		t := TypeInt4
		if all {
			t = TypeInt4Array
		}
		return &funcExpr{name: name, t: t, args: args, nonStrict: true, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			if v[0].Null {
				return NullDatum, nil
			}
			start := 0
			if len(v) == 3 {
				if v[2].Null {
					return Datum{}, pgerr.New(pgerr.NullValueNotAllowed, "initial position must not be null")
				}
				start = int(v[2].I) - 1
			}
			found := Datum{A: []Datum{}}
			for i, e := range v[0].A {
				if i < start || e.Null != v[1].Null {
					continue
				}
				hit := e.Null
				if !e.Null {
					c, err := cmp(e, v[1])
					if err != nil {
						return Datum{}, err
					}
					hit = c == 0
				}
				if !hit {
					continue
				}
				if !all {
					return intDatum(int64(i + 1)), nil
				}
				found.A = append(found.A, intDatum(int64(i+1)))
			}
			if all {
				return found, nil
			}
			return NullDatum, nil
		}}, true, nil
	}
}

// ecFormat is the format context of a running expression, falling back
// to the one captured at analysis.
func ecFormat(ec *evalCtx, fallback *formatCtx) *formatCtx {
	if fc := ec.formatCtx(); fc != nil {
		return fc
	}
	return fallback
}

// anyExpr is `x op ANY (array)` or `x op ALL (array)` with SQL's NULL
// rules: ANY is true if some comparison is true, else NULL if one was
// NULL, else false; ALL the dual.
type anyExpr struct {
	arg, arr expr
	cmp      func(ec *evalCtx, a, b Datum) (Datum, error)
	all      bool
}

func (e *anyExpr) typ() Type { return TypeBool }
func (e *anyExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	v, err := e.arg.eval(ec, row)
	if err != nil {
		return Datum{}, err
	}
	arr, err := e.arr.eval(ec, row)
	if err != nil || arr.Null {
		return NullDatum, err
	}
	return quantified(ec, v, arr.A, e.cmp, e.all)
}

// quantified applies cmp between v and each element (ANY or ALL).
func quantified(ec *evalCtx, v Datum, elems []Datum, cmp func(ec *evalCtx, a, b Datum) (Datum, error), all bool) (Datum, error) {
	if len(elems) == 0 {
		return boolDatum(all), nil
	}
	sawNull := false
	for _, el := range elems {
		if v.Null || el.Null {
			sawNull = true
			continue
		}
		r, err := cmp(ec, v, el)
		if err != nil {
			return Datum{}, err
		}
		if r.Null {
			sawNull = true
			continue
		}
		if (r.I != 0) != all {
			return boolDatum(!all), nil
		}
	}
	if sawNull {
		return NullDatum, nil
	}
	return boolDatum(all), nil
}
