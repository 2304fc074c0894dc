package funcs

import (
	"math"
	"strings"
	"time"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// date_trunc(field, source [, zone]) as PostgreSQL 15 defines it: the
// timestamp with every field below the named one set to its lowest value.
// A timestamp with time zone is truncated in the session's TimeZone, or
// in zone; infinities are returned unchanged. lockd's intervals have no
// months, so truncating one to month or longer gives 0 (as PostgreSQL
// gives for an interval with no months).
func dateTruncOverloads() []Builtin {
	trunc := func(t types.Type) Builtin {
		src := t
		return Builtin{args: []types.Type{types.TypeText, src}, Result: fixed(src),
			Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
				loc := time.UTC
				if src.OID == types.OIDTimestamptz && ec.B.Format.Loc != nil {
					loc = ec.B.Format.Loc
				}
				return dateTrunc(a[0].S, src, a[1], loc)
			}}
	}
	return []Builtin{
		trunc(types.TypeTimestamptz),
		trunc(types.TypeTimestamp),
		trunc(types.TypeInterval),
		// a date is a timestamp with time zone at its midnight in the
		// session's zone (PostgreSQL's implicit cast picks that overload)
		{args: []types.Type{types.TypeText, types.TypeDate}, Result: fixed(types.TypeTimestamptz),
			Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
				loc := time.UTC
				if ec.B.Format.Loc != nil {
					loc = ec.B.Format.Loc
				}
				d := a[1]
				if d.I != types.DatePosInf && d.I != types.DateNegInf {
					y, m, day := time.UnixMicro(d.I*usPerDay + types.PgEpochMicros).UTC().Date()
					d = types.IntDatum(time.Date(y, m, day, 0, 0, 0, 0, loc).UnixMicro())
				} else if d.I == types.DatePosInf {
					d = types.IntDatum(math.MaxInt64)
				} else {
					d = types.IntDatum(math.MinInt64)
				}
				return dateTrunc(a[0].S, types.TypeTimestamptz, d, loc)
			}},
		{args: []types.Type{types.TypeText, types.TypeTimestamptz, types.TypeText}, Result: fixed(types.TypeTimestamptz),
			Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
				loc, err := time.LoadLocation(a[2].S)
				if err != nil || a[2].S == "" {
					return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "time zone \"%s\" not recognized", a[2].S)
				}
				return dateTrunc(a[0].S, types.TypeTimestamptz, a[1], loc)
			}},
	}
}

func dateTrunc(field string, t types.Type, d types.Datum, loc *time.Location) (types.Datum, error) {
	unit := strings.ToLower(strings.TrimSpace(field))
	canon, ok := dateUnits[unit]
	if !ok {
		return types.Datum{}, unitError(unit, t, false)
	}
	if t.OID == types.OIDInterval {
		return intervalTrunc(canon, unit, t, d.I)
	}
	switch canon {
	case "microseconds", "milliseconds", "second", "minute", "hour", "day", "week",
		"month", "quarter", "year", "decade", "century", "millennium":
	case "timezone", "timezone_hour", "timezone_minute":
		return types.Datum{}, unitError(unit, t, true)
	default: // epoch, dow, doy, ...: not units date_trunc knows
		return types.Datum{}, unitError(unit, t, false)
	}
	if d.I == math.MinInt64 || d.I == math.MaxInt64 {
		return d, nil // -infinity, infinity
	}
	tm := time.UnixMicro(d.I).In(loc)
	y, mon, day := tm.Date()
	h, mi, s := tm.Clock()
	us := tm.Nanosecond() / 1000
	switch canon {
	case "microseconds":
		return d, nil
	case "milliseconds":
		us -= us % 1000
	case "second":
		us = 0
	case "minute":
		s, us = 0, 0
	case "hour":
		mi, s, us = 0, 0, 0
	default: // day and longer: midnight of a day
		h, mi, s, us = 0, 0, 0, 0
		switch canon {
		case "week": // the Monday of its ISO week
			day -= (int(tm.Weekday()) + 6) % 7
		case "month":
			day = 1
		case "quarter":
			mon, day = time.Month(3*((int(mon)-1)/3)+1), 1
		case "year":
			mon, day = time.January, 1
		case "decade", "century", "millennium":
			y, mon, day = truncYear(canon, y), time.January, 1
		}
	}
	return types.IntDatum(time.Date(y, mon, day, h, mi, s, us*1000, loc).UnixMicro()), nil
}

// truncYear is the first year of the decade, century or millennium of the
// astronomical year y (0 is 1 BC); centuries and millennia begin with
// their year 1 (2001, 1 BC's century begins in 100 BC).
func truncYear(unit string, y int) int {
	switch unit {
	case "decade":
		if y > 0 {
			return y / 10 * 10
		}
		return -((8 - (y - 1)) / 10) * 10
	case "century":
		if y > 0 {
			return (y+99)/100*100 - 99
		}
		return -((99-(y-1))/100)*100 + 1
	}
	if y > 0 {
		return (y+999)/1000*1000 - 999
	}
	return -((999-(y-1))/1000)*1000 + 1
}

// intervalTrunc truncates an interval of us microseconds: each field
// toward zero, as PostgreSQL's interval_trunc on its broken-down fields.
func intervalTrunc(canon, unit string, t types.Type, us int64) (types.Datum, error) {
	day := us / usPerDay
	rest := us - day*usPerDay
	var keep int64 // of the time part
	switch canon {
	case "microseconds":
		return types.IntDatum(us), nil
	case "milliseconds":
		keep = rest / 1000 * 1000
	case "second":
		keep = rest / 1000000 * 1000000
	case "minute":
		keep = rest / 60000000 * 60000000
	case "hour":
		keep = rest / 3600000000 * 3600000000
	case "day":
	case "month", "quarter", "year", "decade", "century", "millennium":
		return types.IntDatum(0), nil
	case "week":
		return types.Datum{}, pgerr.New(pgerr.FeatureNotSupported, "unit \"%s\" not supported for type %s", unit, t.Name).
			WithDetail("Months usually have fractional weeks.")
	default:
		return types.Datum{}, unitError(unit, t, true)
	}
	return types.IntDatum(day*usPerDay + keep), nil
}
