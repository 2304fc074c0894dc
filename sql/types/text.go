package types

import (
	"math"
	"strconv"
	"strings"
	"time"

	"lockd/pgerr"
)

// trimBlanks drops the trailing blanks of a char(n) value (stored padded;
// output, comparisons and hashing ignore them). Eight at a time:
// pgbench_accounts' filler is 84 blanks in every row, and a scan reads it
// for each one.
func TrimBlanks[T ~string | ~[]byte](v T) T {
	for len(v) >= 8 && string(v[len(v)-8:]) == "        " {
		v = v[:len(v)-8]
	}
	for len(v) > 0 && v[len(v)-1] == ' ' {
		v = v[:len(v)-1]
	}
	return v
}

func Itoa(i int64) string { return string(AppendText(nil, TypeInt8, IntDatum(i), nil)) }

// formatCtx carries the session settings that shape text output, and the
// session whose catalog names reg* values.
type FormatCtx struct {
	Loc   *time.Location
	Names RegNamer // the reg* types' names
	// ByteaEscape: bytea_output = escape (else hex)
	ByteaEscape bool
}

// AppendText appends the text-format representation of d (not NULL) as
// PostgreSQL prints it for type t.
func AppendText(buf []byte, t Type, d Datum, fc *FormatCtx) []byte {
	switch t.OID {
	case OIDBool:
		if d.I != 0 {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case OIDInt2, OIDInt4, OIDInt8, OIDOid, OIDXid:
		return strconv.AppendInt(buf, d.I, 10)
	case OIDFloat4:
		return appendFloat(buf, d.F, 32)
	case OIDFloat8:
		return appendFloat(buf, d.F, 64)
	case OIDTimestamptz, OIDTimestamp:
		if d.I == tsPosInf {
			return append(buf, "infinity"...)
		}
		if d.I == tsNegInf {
			return append(buf, "-infinity"...)
		}
		if t.OID == OIDTimestamp {
			return appendTimestamp(buf, time.UnixMicro(d.I).UTC(), false)
		}
		loc := time.UTC
		if fc != nil && fc.Loc != nil {
			loc = fc.Loc
		}
		return appendTimestamp(buf, time.UnixMicro(d.I).In(loc), true)
	case OIDDate:
		if d.I == DatePosInf {
			return append(buf, "infinity"...)
		}
		if d.I == DateNegInf {
			return append(buf, "-infinity"...)
		}
		tm := time.UnixMicro(PgEpochMicros).UTC().AddDate(0, 0, int(d.I))
		buf, bc := appendYMD(buf, tm)
		if bc {
			buf = append(buf, " BC"...)
		}
		return buf
	case OIDInterval:
		return appendInterval(buf, d.I)
	case OIDVoid:
		return buf
	case OIDPgLsn:
		return appendLSN(buf, uint64(d.I))
	case OIDBytea:
		return appendBytea(buf, d.S, fc != nil && fc.ByteaEscape)
	case OIDInet:
		return appendInet(buf, d)
	case OIDTid:
		buf = append(buf, '(')
		buf = strconv.AppendInt(buf, d.I>>16, 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, d.I&0xffff, 10)
		return append(buf, ')')
	case OIDRegclass, OIDRegtype, OIDRegnsp, OIDRegrole, OIDRegproc:
		return appendRegName(buf, t, d, fc)
	case OIDRecord:
		return append(buf, d.S...)
	case OIDBpchar:
		s := d.S
		if t.Mod > 4 {
			n := int(t.Mod - 4)
			if c := charLen(s); c < n {
				buf = append(buf, s...)
				for ; c < n; c++ {
					buf = append(buf, ' ')
				}
				return buf
			}
		}
		return append(buf, s...)
	}
	if IsArray(t) {
		return appendArray(buf, t, d, fc)
	}
	return append(buf, d.S...)
}

func charLen(s string) int { return len([]rune(s)) }

// appendFloat prints a float as PostgreSQL 12+ does with
// extra_float_digits >= 1: the shortest text that reads back exactly, in
// exponent form when the decimal exponent is < -4 or >= the type's digits.
func appendFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(buf, "-0"...)
		}
		return append(buf, '0')
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	// e is like "-1.2345e+17"
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	limit := 15
	if bits == 32 {
		limit = 6
	}
	if exp < -4 || exp >= limit {
		buf = append(buf, mant...)
		buf = append(buf, 'e')
		if exp < 0 {
			buf = append(buf, '-')
			exp = -exp
		} else {
			buf = append(buf, '+')
		}
		if exp < 10 {
			buf = append(buf, '0')
		}
		return strconv.AppendInt(buf, int64(exp), 10)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, bits)
}

// appendYMD prints t's date as ISO DateStyle does: the year with at least
// four digits, and for the years before 1 AD (astronomical year 0 is
// 1 BC) the year counted back, with bc set for the caller to append
// " BC" after the rest.
func appendYMD(buf []byte, t time.Time) (_ []byte, bc bool) {
	y, m, d := t.Date()
	if y <= 0 {
		y, bc = 1-y, true
	}
	for p := 1000; p > 1 && y < p; p /= 10 {
		buf = append(buf, '0')
	}
	buf = strconv.AppendInt(buf, int64(y), 10)
	buf = append(buf, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return buf, bc
}

// appendTimestamp prints ISO DateStyle: 2026-11-30 00:13:46.727121+00
// (and " BC" last for years before 1 AD).
func appendTimestamp(buf []byte, t time.Time, withZone bool) []byte {
	buf, bc := appendYMD(buf, t)
	buf = t.AppendFormat(append(buf, ' '), "15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		frac := strconv.Itoa(us + 1000000)[1:]
		frac = strings.TrimRight(frac, "0")
		buf = append(buf, '.')
		buf = append(buf, frac...)
	}
	if withZone {
		_, off := t.Zone()
		sign := byte('+')
		if off < 0 {
			sign = '-'
			off = -off
		}
		buf = append(buf, sign)
		h, m, s := off/3600, (off%3600)/60, off%60
		if h < 10 {
			buf = append(buf, '0')
		}
		buf = strconv.AppendInt(buf, int64(h), 10)
		if m != 0 || s != 0 {
			buf = append(buf, ':')
			if m < 10 {
				buf = append(buf, '0')
			}
			buf = strconv.AppendInt(buf, int64(m), 10)
		}
		if s != 0 {
			buf = append(buf, ':')
			if s < 10 {
				buf = append(buf, '0')
			}
			buf = strconv.AppendInt(buf, int64(s), 10)
		}
	}
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendInterval prints an interval held as microseconds in PostgreSQL's
// "postgres" IntervalStyle (days are 24 h here; lockd has no months).
func appendInterval(buf []byte, us int64) []byte {
	neg := us < 0
	if neg {
		us = -us
	}
	days := us / (86400 * 1000000)
	us -= days * 86400 * 1000000
	if days != 0 {
		if neg {
			buf = append(buf, '-')
		}
		buf = strconv.AppendInt(buf, days, 10)
		if days == 1 && !neg { // "-1 days", as PostgreSQL prints it
			buf = append(buf, " day"...)
		} else {
			buf = append(buf, " days"...)
		}
		if us == 0 {
			return buf
		}
		buf = append(buf, ' ')
	}
	if neg {
		buf = append(buf, '-')
	}
	h := us / 3600000000
	us -= h * 3600000000
	m := us / 60000000
	us -= m * 60000000
	s := us / 1000000
	us -= s * 1000000
	buf = append(buf, pad2(h)...)
	buf = append(buf, ':')
	buf = append(buf, pad2(m)...)
	buf = append(buf, ':')
	buf = append(buf, pad2(s)...)
	if us != 0 {
		frac := strings.TrimRight(strconv.Itoa(int(us) + 1000000)[1:], "0")
		buf = append(buf, '.')
		buf = append(buf, frac...)
	}
	return buf
}

func pad2(v int64) string {
	if v < 10 {
		return "0" + strconv.FormatInt(v, 10)
	}
	return strconv.FormatInt(v, 10)
}

func InvalidInput(t Type, s string) *pgerr.Error {
	return pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", t.Name, s)
}

func OutOfRange(t Type) *pgerr.Error {
	switch t.OID {
	case OIDInt2:
		return pgerr.New(pgerr.NumericValueOutOfRange, "smallint out of range")
	case OIDInt4:
		return pgerr.New(pgerr.NumericValueOutOfRange, "integer out of range")
	case OIDInt8:
		return pgerr.New(pgerr.NumericValueOutOfRange, "bigint out of range")
	}
	return pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
}

// parseText reads a text-format value of type t, as a parameter or a
// cast from text.
func ParseText(t Type, s string, fc *FormatCtx) (Datum, error) {
	switch t.OID {
	case OIDBool:
		b, ok := ParseBool(s)
		if !ok {
			return Datum{}, InvalidInput(TypeBool, s)
		}
		return BoolDatum(b), nil
	case OIDInt2, OIDInt4, OIDInt8, OIDOid, OIDXid:
		return parseInt(t, s)
	case OIDRegclass, OIDRegtype, OIDRegnsp, OIDRegrole, OIDRegproc:
		return ParseRegName(t, s, fc)
	case OIDTid:
		return parseTid(s)
	case OIDPgLsn:
		return parseLSN(s)
	case OIDBytea:
		return parseBytea(s)
	case OIDInet:
		return ParseInet(s)
	case OIDFloat4, OIDFloat8:
		return parseFloat(t, s)
	case OIDNumeric:
		n, err := ParseNumeric(strings.TrimSpace(s))
		if err != nil {
			return Datum{}, InvalidInput(TypeNumeric, s)
		}
		if t.Mod >= 4 {
			if n, err = n.applyTypmod(t.Mod); err != nil {
				return Datum{}, err
			}
		}
		return TextDatum(n.String()), nil
	case OIDTimestamptz, OIDTimestamp:
		return parseTimestamp(t, s, fc)
	case OIDDate:
		return parseDate(s, fc)
	case OIDInterval:
		return parseInterval(s)
	case OIDBpchar, OIDVarchar:
		return CoerceString(t, s, false)
	case OIDVoid:
		return Datum{}, nil
	}
	if IsArray(t) {
		return parseArray(t, s, fc)
	}
	return TextDatum(s), nil
}

// ParseTextBytes is ParseText of the text in b, for a caller holding
// bytes (COPY FROM's fields): an integer is read from them directly,
// without the string ParseText needs, when it is plainly one — ASCII
// blanks around an optional sign and at most 18 digits, in range for
// t — and a char(n) or varchar(n) value that fits is made a string at
// once (char(n) without its trailing blanks, which CoerceString would
// trim). Anything else, every error among it, goes to ParseText, so the
// values accepted and the errors given are ParseText's.
func ParseTextBytes(t Type, b []byte, fc *FormatCtx) (Datum, error) {
	switch t.OID {
	case OIDBpchar:
		// at most n bytes left after the blanks: at most n characters,
		// and any cut would take blanks alone
		if v := TrimBlanks(b); t.Mod <= 4 || len(v) <= int(t.Mod-4) {
			return TextDatum(string(v)), nil
		}
	case OIDVarchar:
		if t.Mod <= 4 || len(b) <= int(t.Mod-4) {
			return TextDatum(string(b)), nil
		}
	}
	if i, ok := ParseIntBytes(t, b); ok {
		return IntDatum(i), nil
	}
	return ParseText(t, string(b), fc)
}

// ParseIntBytes is ParseTextBytes's integer fast path by itself: the
// value of b for an integer type t (int2, int4, int8, oid, xid) when b is
// plainly one and in range. It reports false for any other input or
// type, which need not be wrong: ParseText decides.
func ParseIntBytes(t Type, b []byte) (int64, bool) {
	switch t.OID {
	case OIDInt2, OIDInt4, OIDInt8, OIDOid, OIDXid:
		if i, ok := parseIntBytes(b); ok && intInRange(t.OID, i) {
			return i, true
		}
	}
	return 0, false
}

// parseIntBytes reads a decimal integer of at most 18 digits (so that it
// cannot overflow) with an optional sign, between ASCII white space
// (what strings.TrimSpace trims among ASCII). It reports false for any
// other input, which need not be wrong: parseInt decides.
func parseIntBytes(b []byte) (int64, bool) {
	for len(b) > 0 && asciiSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && asciiSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// intInRange is CheckIntRange without its error, for the fast path.
func intInRange(oid uint32, i int64) bool {
	switch oid {
	case OIDInt2:
		return i >= math.MinInt16 && i <= math.MaxInt16
	case OIDInt4:
		return i >= math.MinInt32 && i <= math.MaxInt32
	case OIDOid, OIDXid:
		return i >= 0 && i <= math.MaxUint32
	}
	return true
}

func parseTid(s string) (Datum, error) {
	v := strings.TrimSpace(s)
	if len(v) < 5 || v[0] != '(' || v[len(v)-1] != ')' {
		return Datum{}, InvalidInput(TypeTid, s)
	}
	b, o, ok := strings.Cut(v[1:len(v)-1], ",")
	bn, err1 := strconv.ParseUint(strings.TrimSpace(b), 10, 32)
	on, err2 := strconv.ParseUint(strings.TrimSpace(o), 10, 16)
	if !ok || err1 != nil || err2 != nil {
		return Datum{}, InvalidInput(TypeTid, s)
	}
	return IntDatum(int64(bn)<<16 | int64(on)), nil
}

// coerceString applies a char(n)/varchar(n) length limit. An explicit cast
// truncates; an assignment errors when non-space characters would be lost.
func CoerceString(t Type, s string, explicit bool) (Datum, error) {
	if t.Mod <= 4 {
		if t.OID == OIDBpchar {
			return TextDatum(strings.TrimRight(s, " ")), nil
		}
		return TextDatum(s), nil
	}
	n := int(t.Mod - 4)
	if len(s) <= n { // no more characters than bytes: nothing to cut
		if t.OID == OIDBpchar {
			s = strings.TrimRight(s, " ")
		}
		return TextDatum(s), nil
	}
	r := []rune(s)
	if len(r) > n {
		if !explicit && strings.TrimRight(string(r[n:]), " ") != "" {
			name := "character varying"
			if t.OID == OIDBpchar {
				name = "character"
			}
			return Datum{}, pgerr.New(pgerr.StringDataRightTruncation, "value too long for type %s(%d)", name, n)
		}
		s = string(r[:n])
	}
	if t.OID == OIDBpchar {
		s = strings.TrimRight(s, " ")
	}
	return TextDatum(s), nil
}

func ParseBool(s string) (bool, bool) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "t", "tr", "tru", "true", "y", "ye", "yes", "on", "1":
		return true, true
	case "f", "fa", "fal", "fals", "false", "n", "no", "of", "off", "0":
		return false, true
	}
	return false, false
}

func parseInt(t Type, s string) (Datum, error) {
	v := strings.TrimSpace(s)
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			if t.OID == OIDInt8 {
				return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type bigint", s)
			}
			return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, t.Name)
		}
		return Datum{}, InvalidInput(t, s)
	}
	if err := CheckIntRange(t, i); err != nil {
		return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, t.Name)
	}
	return IntDatum(i), nil
}

func CheckIntRange(t Type, i int64) error {
	switch t.OID {
	case OIDInt2:
		if i < math.MinInt16 || i > math.MaxInt16 {
			return OutOfRange(t)
		}
	case OIDInt4:
		if i < math.MinInt32 || i > math.MaxInt32 {
			return OutOfRange(t)
		}
	case OIDOid, OIDXid, OIDRegclass, OIDRegtype, OIDRegnsp, OIDRegrole, OIDRegproc:
		if i < 0 || i > math.MaxUint32 {
			return pgerr.New(pgerr.NumericValueOutOfRange, "OID out of range")
		}
	}
	return nil
}

func parseFloat(t Type, s string) (Datum, error) {
	v := strings.TrimSpace(s)
	switch strings.ToLower(v) {
	case "nan":
		return FloatDatum(math.NaN()), nil
	case "infinity", "inf", "+infinity", "+inf":
		return FloatDatum(math.Inf(1)), nil
	case "-infinity", "-inf":
		return FloatDatum(math.Inf(-1)), nil
	}
	bits := 64
	if t.OID == OIDFloat4 {
		bits = 32
	}
	f, err := strconv.ParseFloat(v, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "\"%s\" is out of range for type %s", s, t.Name)
		}
		return Datum{}, InvalidInput(t, s)
	}
	return FloatDatum(f), nil
}

// parseInterval accepts "N unit [N unit ...]" and "HH:MM:SS" forms.
func parseInterval(s string) (Datum, error) {
	fields := strings.Fields(strings.ToLower(s))
	var us float64
	bad := pgerr.New(pgerr.InvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", s)
	if len(fields) == 0 {
		return Datum{}, bad
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			neg := strings.HasPrefix(f, "-")
			parts := strings.Split(strings.TrimPrefix(f, "-"), ":")
			var sec float64
			for _, p := range parts {
				v, err := strconv.ParseFloat(p, 64)
				if err != nil {
					return Datum{}, bad
				}
				sec = sec*60 + v
			}
			if len(parts) == 2 {
				sec *= 60
			}
			if neg {
				sec = -sec
			}
			us += sec * 1e6
			continue
		}
		num, err := strconv.ParseFloat(f, 64)
		unit := ""
		if err != nil {
			// "10s", "5min"
			j := strings.IndexFunc(f, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' })
			if j <= 0 {
				return Datum{}, bad
			}
			num, err = strconv.ParseFloat(f[:j], 64)
			if err != nil {
				return Datum{}, bad
			}
			unit = f[j:]
		} else if i+1 < len(fields) {
			i++
			unit = fields[i]
		}
		mult, ok := intervalUnits[strings.TrimSuffix(unit, "s")]
		if !ok && unit != "" {
			mult, ok = intervalUnits[unit]
		}
		if !ok {
			if unit == "" {
				mult = 1e6
			} else {
				return Datum{}, bad
			}
		}
		us += num * mult
	}
	return IntDatum(int64(math.Round(us))), nil
}

var intervalUnits = map[string]float64{
	"microsecond": 1, "us": 1, "usec": 1,
	"millisecond": 1e3, "ms": 1e3, "msec": 1e3,
	"second": 1e6, "sec": 1e6, "s": 1e6,
	"minute": 60e6, "min": 60e6, "m": 60e6,
	"hour": 3600e6, "h": 3600e6, "hr": 3600e6,
	"day": 86400e6, "d": 86400e6,
	"week": 7 * 86400e6, "w": 7 * 86400e6,
}

// unixMicroIn returns the time of a Unix-microsecond instant in loc and
// that zone's offset in seconds.
func unixMicroIn(us int64, loc *time.Location) (time.Time, int) {
	if loc == nil {
		loc = time.UTC
	}
	t := time.UnixMicro(us).In(loc)
	_, off := t.Zone()
	return t, off
}
