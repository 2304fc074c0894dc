package types

import "math"

func OIDDatum(o uint32) Datum { return IntDatum(int64(o)) }

// Datum is one typed value. Which field holds it depends on the type:
// I for bool (0/1), integers, oid, date (days since 2000-01-01),
// timestamps (microseconds since the Unix epoch, UTC) and intervals
// (microseconds); F for floats; S for text-like values and numeric (its
// canonical decimal text); A for arrays. The zero Datum is not NULL: use
// Null.
type Datum struct {
	Null bool
	I    int64
	F    float64
	S    string
	A    []Datum
}

// SetInt stores the integer v in d. Scans decode each row into the same
// slots, so a slot usually holds the previous row's value of the same
// column: then only the number and the null flag change, and the string
// and array pointers are not rewritten (a whole-datum store rewrites
// them, under the garbage collector's write barrier).
func (d *Datum) SetInt(v int64) {
	if d.S == "" && d.A == nil && math.Float64bits(d.F) == 0 {
		d.Null, d.I = false, v
		return
	}
	*d = Datum{I: v}
}

// SetFloat is SetInt for a float.
func (d *Datum) SetFloat(v float64) {
	if d.S == "" && d.A == nil && d.I == 0 {
		d.Null, d.F = false, v
		return
	}
	*d = Datum{F: v}
}

// NullDatum is SQL NULL.
var NullDatum = Datum{Null: true}

func BoolDatum(b bool) Datum {
	if b {
		return Datum{I: 1}
	}
	return Datum{}
}

func IntDatum(i int64) Datum     { return Datum{I: i} }
func FloatDatum(f float64) Datum { return Datum{F: f} }
func TextDatum(s string) Datum   { return Datum{S: s} }

// pgEpochMicros is 2000-01-01 00:00:00 UTC in microseconds since 1970.
const PgEpochMicros = 946684800 * 1000000

// Column describes one result column.
type Column struct {
	Name     string
	Type     Type
	TableOID uint32
	Attnum   int16
}

// Row constructors: ROW(a, b) or (a, b). A row value carries its fields in
// A and its text form (record_out) in S, so it prints, groups and counts
// DISTINCT like PostgreSQL's anonymous records; comparisons between rows
// are compiled field by field (PostgreSQL's row-wise comparison).

const OIDRecord = 2249

// knownTypes are the types TypeByOID knows, the most used first: a
// column's type is looked up on every row that builds an index key.
var knownTypes = [...]Type{TypeInt4, TypeText, TypeInt8, TypeBpchar, TypeVarchar, TypeNumeric, TypeBool, TypeDate,
	TypeTimestamp, TypeTimestamptz, TypeFloat8, TypeInt2, TypeFloat4, TypeOid, TypeXid, TypeChar, TypeName,
	TypeUnknown, TypeInterval, TypeTextArray, TypeInt4Array,
	TypeTid, TypeRegproc, TypeRegclass, TypeRegtype, TypeRegrole, TypeRegnsp, TypePgLsn, TypeBytea, TypeInet}

func TypeByOID(oid uint32) (Type, bool) {
	for i := range knownTypes {
		if t := &knownTypes[i]; t.OID == oid {
			if t.OID == OIDUnknown {
				return Type{}, true
			}
			return *t, true
		}
	}
	return Type{}, false
}

// Type is a PostgreSQL type as the wire protocol describes it.
type Type struct {
	OID  uint32
	Len  int16 // typlen: -1 variable, -2 cstring
	Mod  int32 // typmod, -1 none
	Name string
}

// Type OIDs from PostgreSQL's pg_type.dat.
const (
	OIDBool        = 16
	OIDBytea       = 17
	OIDChar        = 18
	OIDName        = 19
	OIDInt8        = 20
	OIDInt2        = 21
	OIDInt4        = 23
	OIDText        = 25
	OIDOid         = 26
	OIDTid         = 27
	OIDXid         = 28
	OIDNodeTree    = 194
	OIDFloat4      = 700
	OIDFloat8      = 701
	OIDUnknown     = 705
	OIDInt2Array   = 1005
	OIDInt4Array   = 1007
	OIDTextArray   = 1009
	OIDBpchar      = 1042
	OIDVarchar     = 1043
	OIDDate        = 1082
	OIDTimestamp   = 1114
	OIDTimestamptz = 1184
	OIDInterval    = 1186
	OIDNumeric     = 1700
	OIDVoid        = 2278
	OIDAnyArray    = 2277
	OIDRegproc     = 24
	OIDRegclass    = 2205
	OIDRegtype     = 2206
	OIDRegrole     = 4096
	OIDRegnsp      = 4089
	OIDPgLsn       = 3220
	OIDInet        = 869
)

var (
	TypeBool    = Type{OIDBool, 1, -1, "boolean"}
	TypeChar    = Type{OIDChar, 1, -1, "\"char\""}
	TypeName    = Type{OIDName, 64, -1, "name"}
	TypeInt2    = Type{OIDInt2, 2, -1, "smallint"}
	TypeInt4    = Type{OIDInt4, 4, -1, "integer"}
	TypeInt8    = Type{OIDInt8, 8, -1, "bigint"}
	TypeOid     = Type{OIDOid, 4, -1, "oid"}
	TypeXid     = Type{OIDXid, 4, -1, "xid"}
	TypeFloat4  = Type{OIDFloat4, 4, -1, "real"}
	TypeFloat8  = Type{OIDFloat8, 8, -1, "double precision"}
	TypeNumeric = Type{OIDNumeric, -1, -1, "numeric"}
	// TypePgLsn is a write-ahead log position (pg_lsn.c): the LSN in I,
	// as an unsigned 64-bit number.
	TypePgLsn       = Type{OIDPgLsn, 8, -1, "pg_lsn"}
	TypeText        = Type{OIDText, -1, -1, "text"}
	TypeBytea       = Type{OIDBytea, -1, -1, "bytea"}
	TypeInet        = Type{OIDInet, -1, -1, "inet"}
	TypeVarchar     = Type{OIDVarchar, -1, -1, "character varying"}
	TypeBpchar      = Type{OIDBpchar, -1, -1, "character"}
	TypeUnknown     = Type{OIDUnknown, -2, -1, "unknown"}
	TypeDate        = Type{OIDDate, 4, -1, "date"}
	TypeTimestamp   = Type{OIDTimestamp, 8, -1, "timestamp without time zone"}
	TypeTimestamptz = Type{OIDTimestamptz, 8, -1, "timestamp with time zone"}
	TypeInterval    = Type{OIDInterval, 16, -1, "interval"}
	TypeVoid        = Type{OIDVoid, 4, -1, "void"}
	// TypeAnyArray is a catalog column holding arrays of varying element
	// types (pg_statistic.stavaluesN, pg_stats.most_common_vals): its
	// Datum carries the array's text form in S, made with the element
	// type (AppendArrayText), and prints as that.
	TypeAnyArray  = Type{OIDAnyArray, -1, -1, "anyarray"}
	TypeTextArray = Type{OIDTextArray, -1, -1, "text[]"}
	TypeInt4Array = Type{OIDInt4Array, -1, -1, "integer[]"}
	TypeTid       = Type{OIDTid, 6, -1, "tid"}
	TypeNodeTree  = Type{OIDNodeTree, -1, -1, "pg_node_tree"}
	TypeRegproc   = Type{OIDRegproc, 4, -1, "regproc"}
	TypeRegclass  = Type{OIDRegclass, 4, -1, "regclass"}
	TypeRegtype   = Type{OIDRegtype, 4, -1, "regtype"}
	TypeRegrole   = Type{OIDRegrole, 4, -1, "regrole"}
	TypeRegnsp    = Type{OIDRegnsp, 4, -1, "regnamespace"}
)

// isOidLike reports whether t is oid or one of its reg* aliases, which
// compare as oids.
func IsOIDLike(t Type) bool {
	switch t.OID {
	case OIDOid, OIDRegproc, OIDRegclass, OIDRegtype, OIDRegrole, OIDRegnsp:
		return true
	}
	return false
}

// category groups types for operator resolution.
type category uint8

const (
	CatOther category = iota
	CatBool
	CatInt
	CatNumeric
	CatFloat
	CatString
	CatUnknown
	CatDatetime
)

func CategoryOf(t Type) category {
	switch t.OID {
	case OIDBool:
		return CatBool
	case OIDInt2, OIDInt4, OIDInt8, OIDOid, OIDXid, OIDRegproc, OIDRegclass, OIDRegtype, OIDRegrole, OIDRegnsp:
		return CatInt
	case OIDNumeric:
		return CatNumeric
	case OIDFloat4, OIDFloat8:
		return CatFloat
	case OIDText, OIDVarchar, OIDBpchar, OIDName, OIDChar, OIDNodeTree:
		return CatString
	case OIDUnknown:
		return CatUnknown
	case OIDTimestamp, OIDTimestamptz, OIDDate:
		return CatDatetime
	}
	return CatOther
}

// Identical reports whether a and b are the same value in every field:
// stricter than equality (numeric 1.0 and 1.00 differ, as do float 0 and
// -0), so that what was computed from one may stand for the other.
func Identical(a, b Datum) bool {
	if a.Null != b.Null || a.I != b.I || math.Float64bits(a.F) != math.Float64bits(b.F) || a.S != b.S || len(a.A) != len(b.A) || (a.A == nil) != (b.A == nil) {
		return false
	}
	for i := range a.A {
		if !Identical(a.A[i], b.A[i]) {
			return false
		}
	}
	return true
}

// DeepCopy returns d with its array elements copied, for a value kept
// while the buffers it was read from are reused.
func DeepCopy(d Datum) Datum {
	if d.A == nil {
		return d
	}
	a := make([]Datum, len(d.A))
	for i := range d.A {
		a[i] = DeepCopy(d.A[i])
	}
	d.A = a
	return d
}
