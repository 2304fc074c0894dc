package types

import (
	"math"
	"strconv"
	"strings"
	"time"

	"lockd/pgerr"
)

// Date and timestamp input in the formats PostgreSQL accepts with
// DateStyle ISO, MDY: ISO dates (2024-01-02, 20240102), month names (Jan
// 5 2024, 5 Jan 2024), US dates (1/5/2024), an optional time
// (10:30[:05[.123456]]) with an optional zone (Z, +02, -05:30, UTC), and
// the special values epoch, infinity, -infinity, now, today, tomorrow,
// yesterday. Out-of-range fields are 22008, other garbage 22007, with
// PostgreSQL's message texts.

// Infinite dates and timestamps (PostgreSQL's DATEVAL_NOBEGIN/NOEND and
// DT_NOBEGIN/DT_NOEND).
const (
	DateNegInf = math.MinInt32
	DatePosInf = math.MaxInt32
	tsNegInf   = math.MinInt64
	tsPosInf   = math.MaxInt64
)

var monthNames = map[string]int{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
	"may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
	"september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

type dtFields struct {
	year, month, day     int
	hour, min, sec, usec int
	hasDate, hasTime     bool
	zoneSet              bool
	zoneOff              int // seconds east of UTC
	zoneLoc              *time.Location
	special              string
}

// dtError is the error PostgreSQL gives for a bad date/time input:
// invalid syntax (22007) or a field out of range (22008).
func dtError(typeName, in string, outOfRange bool, monthHint bool) error {
	if outOfRange {
		e := pgerr.New("22008", "date/time field value out of range: \"%s\"", in)
		if monthHint {
			e.WithHint("Perhaps you need a different \"datestyle\" setting.")
		}
		return e
	}
	return pgerr.New(pgerr.InvalidDatetimeFormat, "invalid input syntax for type %s: \"%s\"", typeName, in)
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseDateTime splits a date/time string into fields.
func parseDateTime(in, typeName string) (dtFields, error) {
	var f dtFields
	v := strings.ToLower(strings.TrimSpace(in))
	switch v {
	case "epoch", "infinity", "-infinity", "now", "today", "tomorrow", "yesterday":
		f.special = v
		return f, nil
	case "+infinity":
		f.special = "infinity"
		return f, nil
	}
	bad := func() (dtFields, error) { return f, dtError(typeName, in, false, false) }
	if v == "" {
		return bad()
	}
	// split into tokens: date part, time part, zone
	v = strings.Replace(v, "t", " ", 1)
	if i := strings.IndexByte(v, ' '); i < 0 && strings.Count(v, ":") > 0 && !strings.ContainsAny(v[:1], "0123456789") {
		return bad()
	}
	toks := strings.Fields(v)
	var numeric []int
	for _, tok := range toks {
		switch {
		case strings.Contains(tok, ":") && !f.hasTime:
			// a time, possibly with a zone glued on
			timePart, zone := tok, ""
			if i := strings.IndexAny(tok, "+-z"); i > 0 {
				timePart, zone = tok[:i], tok[i:]
			}
			if err := f.parseTime(timePart); err != nil {
				return bad()
			}
			if zone != "" && !f.parseZone(zone) {
				return bad()
			}
		case strings.Count(tok, "-") == 2 && !f.hasDate && tok[0] != '-' && tok[0] != '+':
			p := strings.Split(tok, "-")
			if m, ok := monthNames[p[1]]; ok {
				d, err1 := strconv.Atoi(p[0])
				y, err2 := strconv.Atoi(p[2])
				if err1 != nil || err2 != nil {
					return bad()
				}
				f.year, f.month, f.day = y, m, d
			} else {
				y, err1 := strconv.Atoi(p[0])
				m, err2 := strconv.Atoi(p[1])
				d, err3 := strconv.Atoi(p[2])
				if err1 != nil || err2 != nil || err3 != nil {
					return bad()
				}
				f.year, f.month, f.day = y, m, d
			}
			f.hasDate = true
		case strings.Count(tok, "/") == 2 && !f.hasDate:
			p := strings.Split(tok, "/")
			m, err1 := strconv.Atoi(p[0])
			d, err2 := strconv.Atoi(p[1])
			y, err3 := strconv.Atoi(p[2])
			if err1 != nil || err2 != nil || err3 != nil {
				return bad()
			}
			f.year, f.month, f.day = y, m, d
			f.hasDate = true
		case len(tok) == 8 && allDigits(tok) && !f.hasDate:
			f.year, _ = strconv.Atoi(tok[:4])
			f.month, _ = strconv.Atoi(tok[4:6])
			f.day, _ = strconv.Atoi(tok[6:])
			f.hasDate = true
		case monthNames[strings.TrimSuffix(tok, ",")] != 0:
			f.month = monthNames[strings.TrimSuffix(tok, ",")]
		case allDigits(strings.TrimSuffix(tok, ",")):
			n, _ := strconv.Atoi(strings.TrimSuffix(tok, ","))
			numeric = append(numeric, n)
		case tok == "z" || tok == "utc" || tok == "gmt" || tok[0] == '+' || tok[0] == '-':
			if !f.parseZone(tok) {
				return bad()
			}
		case tok == "bc" || tok == "ad":
			if tok == "bc" {
				f.year = 1 - f.year
			}
		default:
			if loc, err := time.LoadLocation(strings.ToUpper(tok[:1]) + tok[1:]); err == nil && strings.Contains(tok, "/") {
				f.zoneLoc, f.zoneSet = loc, true
				continue
			}
			return bad()
		}
	}
	if f.month != 0 && !f.hasDate {
		// Jan 5 2024 or 5 Jan 2024
		if len(numeric) != 2 {
			return bad()
		}
		d, y := numeric[0], numeric[1]
		if d > 31 {
			d, y = y, d
		}
		f.day, f.year, f.hasDate = d, y, true
	} else if len(numeric) > 0 {
		return bad()
	}
	if !f.hasDate {
		return bad()
	}
	if f.month < 1 || f.month > 12 {
		return f, dtError(typeName, in, true, true)
	}
	if f.day < 1 || f.day > daysIn(f.year, f.month) {
		return f, dtError(typeName, in, true, false)
	}
	if f.hour > 24 || f.min > 59 || f.sec > 60 || (f.hour == 24 && (f.min != 0 || f.sec != 0 || f.usec != 0)) {
		return f, dtError(typeName, in, true, false)
	}
	return f, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (f *dtFields) parseTime(s string) error {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return errBadNumeric
	}
	var err error
	if f.hour, err = strconv.Atoi(parts[0]); err != nil {
		return err
	}
	if f.min, err = strconv.Atoi(parts[1]); err != nil {
		return err
	}
	if len(parts) == 3 {
		secPart, frac, hasFrac := strings.Cut(parts[2], ".")
		if f.sec, err = strconv.Atoi(secPart); err != nil {
			return err
		}
		if hasFrac {
			if !allDigits(frac) {
				return errBadNumeric
			}
			// round to microseconds
			x, _ := strconv.ParseFloat("0."+frac, 64)
			f.usec = int(math.Round(x * 1e6))
		}
	}
	f.hasTime = true
	return nil
}

func (f *dtFields) parseZone(z string) bool {
	switch z {
	case "z", "utc", "gmt":
		f.zoneSet, f.zoneOff = true, 0
		return true
	}
	if len(z) < 2 || (z[0] != '+' && z[0] != '-') {
		return false
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	body := z[1:]
	var h, m, sec int
	var err error
	switch {
	case strings.Contains(body, ":"):
		p := strings.Split(body, ":")
		if h, err = strconv.Atoi(p[0]); err != nil {
			return false
		}
		if m, err = strconv.Atoi(p[1]); err != nil {
			return false
		}
		if len(p) > 2 {
			if sec, err = strconv.Atoi(p[2]); err != nil {
				return false
			}
		}
	case len(body) == 4 && allDigits(body):
		h, _ = strconv.Atoi(body[:2])
		m, _ = strconv.Atoi(body[2:])
	case allDigits(body):
		h, _ = strconv.Atoi(body)
	default:
		return false
	}
	f.zoneSet, f.zoneOff = true, sign*(h*3600+m*60+sec)
	return true
}

// parseDate reads a date (days since 2000-01-01).
func parseDate(in string, fc *FormatCtx) (Datum, error) {
	f, err := parseDateTime(in, "date")
	if err != nil {
		return Datum{}, err
	}
	switch f.special {
	case "":
	case "epoch":
		return IntDatum(-10957), nil
	case "infinity":
		return IntDatum(DatePosInf), nil
	case "-infinity":
		return IntDatum(DateNegInf), nil
	default:
		loc := time.UTC
		if fc != nil && fc.Loc != nil {
			loc = fc.Loc
		}
		now := time.Now().In(loc)
		y, m, d := now.Date()
		f = dtFields{year: y, month: int(m), day: d}
		switch f.special {
		case "tomorrow":
			f.day++
		case "yesterday":
			f.day--
		}
	}
	t := time.Date(f.year, time.Month(f.month), f.day, 0, 0, 0, 0, time.UTC)
	return IntDatum((t.UnixMicro() - PgEpochMicros) / 86400000000), nil
}

// parseTimestamp reads a timestamp or timestamptz (microseconds since the
// Unix epoch; a timestamp holds its wall-clock time as if in UTC).
func parseTimestamp(t Type, in string, fc *FormatCtx) (Datum, error) {
	typeName := "timestamp"
	if t.OID == OIDTimestamptz {
		typeName = "timestamp with time zone"
	}
	f, err := parseDateTime(in, typeName)
	if err != nil {
		return Datum{}, err
	}
	loc := time.UTC
	if fc != nil && fc.Loc != nil && t.OID == OIDTimestamptz {
		loc = fc.Loc
	}
	switch f.special {
	case "":
	case "epoch":
		return IntDatum(0), nil
	case "infinity":
		return IntDatum(tsPosInf), nil
	case "-infinity":
		return IntDatum(tsNegInf), nil
	case "now":
		now := time.Now()
		if t.OID == OIDTimestamp {
			now = wallAsUTC(now.In(localOf(fc)))
		}
		return IntDatum(now.UnixMicro()), nil
	default:
		now := time.Now().In(localOf(fc))
		y, m, d := now.Date()
		switch f.special {
		case "tomorrow":
			d++
		case "yesterday":
			d--
		}
		day := time.Date(y, m, d, 0, 0, 0, 0, loc)
		if t.OID == OIDTimestamp {
			day = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		}
		return IntDatum(day.UnixMicro()), nil
	}
	if f.zoneSet && t.OID == OIDTimestamptz {
		loc = time.FixedZone("", f.zoneOff)
		if f.zoneLoc != nil {
			loc = f.zoneLoc
		}
	}
	tm := time.Date(f.year, time.Month(f.month), f.day, f.hour, f.min, f.sec, 0, loc)
	return IntDatum(tm.UnixMicro() + int64(f.usec)), nil
}

func localOf(fc *FormatCtx) *time.Location {
	if fc != nil && fc.Loc != nil {
		return fc.Loc
	}
	return time.UTC
}

// wallAsUTC keeps t's wall-clock fields and reinterprets them as UTC.
func wallAsUTC(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}
