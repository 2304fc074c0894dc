package funcs

import (
	"strconv"
	"strings"
	"time"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// extract(field from source) and date_part(field, source), as PostgreSQL
// 15 defines them: extract returns numeric (exact, with the scale
// PostgreSQL gives each field), date_part double precision. lockd's
// intervals are microseconds (no months), so an interval's month, quarter,
// year, decade, century and millennium are 0 and its days are whole 24-hour
// spans. julian is not supported.
var datetimeFuncs = map[string][]Builtin{
	"extract":    extractOverloads(true),
	"date_part":  extractOverloads(false),
	"date_trunc": dateTruncOverloads(),
}

func extractOverloads(numeric bool) []Builtin {
	result := types.TypeFloat8
	if numeric {
		result = types.TypeNumeric
	}
	var out []Builtin
	for _, t := range []types.Type{types.TypeTimestamptz, types.TypeTimestamp, types.TypeInterval, types.TypeDate} {
		src := t
		out = append(out, Builtin{args: []types.Type{types.TypeText, src}, Result: fixed(result),
			Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
				v, err := datePart(ec, a[0].S, src, a[1])
				if err != nil {
					return types.Datum{}, err
				}
				if numeric {
					return types.TextDatum(v.numericText()), nil
				}
				return types.FloatDatum(v.float()), nil
			}})
	}
	return out
}

// scaled is num / 10^scale.
type scaled struct {
	num   int64
	scale int
}

func (s scaled) float() float64 {
	f := float64(s.num)
	for range s.scale {
		f /= 10
	}
	return f
}

func (s scaled) numericText() string {
	neg := s.num < 0
	u := uint64(s.num)
	if neg {
		u = -u
	}
	digits := strconv.FormatUint(u, 10)
	if s.scale > 0 {
		for len(digits) <= s.scale {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-s.scale] + "." + digits[len(digits)-s.scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// dateUnits maps PostgreSQL's spellings of the fields to canonical names.
var dateUnits = map[string]string{}

func init() {
	for canon, aliases := range map[string][]string{
		"microseconds":    {"microsecond", "us", "usec", "usecs", "useconds"},
		"milliseconds":    {"millisecond", "ms", "msec", "msecs", "mseconds"},
		"second":          {"seconds", "s", "sec", "secs"},
		"minute":          {"minutes", "m", "min", "mins"},
		"hour":            {"hours", "h", "hr", "hrs"},
		"day":             {"days", "d"},
		"week":            {"weeks", "w"},
		"month":           {"months", "mon", "mons"},
		"quarter":         {"qtr"},
		"year":            {"years", "y", "yr", "yrs"},
		"decade":          {"decades", "dec", "decs"},
		"century":         {"centuries", "c", "cent"},
		"millennium":      {"millennia", "mil", "mils", "millenniums"},
		"epoch":           nil,
		"dow":             nil,
		"isodow":          nil,
		"doy":             nil,
		"isoyear":         nil,
		"julian":          {"j"},
		"timezone":        nil,
		"timezone_hour":   {"timezone_h"},
		"timezone_minute": {"timezone_m"},
	} {
		dateUnits[canon] = canon
		for _, a := range aliases {
			dateUnits[a] = canon
		}
	}
}

func unitError(unit string, t types.Type, recognized bool) error {
	if recognized {
		return pgerr.New(pgerr.FeatureNotSupported, "unit \"%s\" not supported for type %s", unit, t.Name)
	}
	return pgerr.New(pgerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", unit, t.Name)
}

const usPerDay = 86400 * 1000000

func datePart(ec *expr.EvalCtx, field string, t types.Type, d types.Datum) (scaled, error) {
	unit := strings.ToLower(strings.TrimSpace(field))
	canon, ok := dateUnits[unit]
	if !ok {
		return scaled{}, unitError(unit, t, false)
	}
	if t.OID == types.OIDInterval {
		return intervalPart(canon, unit, t, d.I)
	}
	var tm time.Time
	switch t.OID {
	case types.OIDDate:
		tm = time.UnixMicro(d.I*usPerDay + types.PgEpochMicros).UTC()
		switch canon {
		case "microseconds", "milliseconds", "second", "minute", "hour", "timezone", "timezone_hour", "timezone_minute", "julian":
			return scaled{}, unitError(unit, t, true)
		case "epoch":
			return scaled{num: tm.Unix()}, nil
		}
	case types.OIDTimestamp:
		tm = time.UnixMicro(d.I).UTC()
		switch canon {
		case "timezone", "timezone_hour", "timezone_minute", "julian":
			return scaled{}, unitError(unit, t, true)
		}
	default:
		loc := ec.B.Format.Loc
		if loc == nil {
			loc = time.UTC
		}
		tm = time.UnixMicro(d.I).In(loc)
		if canon == "julian" {
			return scaled{}, unitError(unit, t, true)
		}
	}
	usInMinute := int64(tm.Second())*1000000 + int64(tm.Nanosecond()/1000)
	astro := int64(tm.Year()) // astronomical: 0 is 1 BC
	year := astro
	if year <= 0 {
		year-- // there is no year 0: 1 BC is -1
	}
	n := func(v int64) (scaled, error) { return scaled{num: v}, nil }
	switch canon {
	case "microseconds":
		return n(usInMinute)
	case "milliseconds":
		return scaled{num: usInMinute, scale: 3}, nil
	case "second":
		return scaled{num: usInMinute, scale: 6}, nil
	case "minute":
		return n(int64(tm.Minute()))
	case "hour":
		return n(int64(tm.Hour()))
	case "day":
		return n(int64(tm.Day()))
	case "month":
		return n(int64(tm.Month()))
	case "quarter":
		return n((int64(tm.Month())-1)/3 + 1)
	case "year":
		return n(year)
	case "week":
		_, w := tm.ISOWeek()
		return n(int64(w))
	case "isoyear":
		y, _ := tm.ISOWeek()
		if y <= 0 {
			y--
		}
		return n(int64(y))
	case "dow":
		return n(int64(tm.Weekday()))
	case "isodow":
		if tm.Weekday() == time.Sunday {
			return n(7)
		}
		return n(int64(tm.Weekday()))
	case "doy":
		return n(int64(tm.YearDay()))
	case "decade":
		if astro >= 0 {
			return n(astro / 10)
		}
		return n(-((8 - (astro - 1)) / 10))
	case "century":
		if astro > 0 {
			return n((astro + 99) / 100)
		}
		return n(-((99 - (astro - 1)) / 100))
	case "millennium":
		if astro > 0 {
			return n((astro + 999) / 1000)
		}
		return n(-((999 - (astro - 1)) / 1000))
	case "epoch":
		return scaled{num: d.I, scale: 6}, nil
	case "timezone":
		_, off := tm.Zone()
		return n(int64(off))
	case "timezone_hour":
		_, off := tm.Zone()
		return n(int64(off) / 3600)
	case "timezone_minute":
		_, off := tm.Zone()
		return n(int64(off) / 60 % 60)
	}
	return scaled{}, unitError(unit, t, true)
}

func intervalPart(canon, unit string, t types.Type, us int64) (scaled, error) {
	day := us / usPerDay
	rest := us - day*usPerDay // the time part, same sign as us
	usInMinute := rest % 60000000
	switch canon {
	case "microseconds":
		return scaled{num: usInMinute}, nil
	case "milliseconds":
		return scaled{num: usInMinute, scale: 3}, nil
	case "second":
		return scaled{num: usInMinute, scale: 6}, nil
	case "minute":
		return scaled{num: rest / 60000000 % 60}, nil
	case "hour":
		return scaled{num: rest / 3600000000}, nil
	case "day":
		return scaled{num: day}, nil
	case "month", "quarter", "year", "decade", "century", "millennium":
		return scaled{}, nil
	case "epoch":
		return scaled{num: us, scale: 6}, nil
	}
	return scaled{}, unitError(unit, t, true)
}
