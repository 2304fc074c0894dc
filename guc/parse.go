package guc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// unitConv is one row of PostgreSQL's unit conversion tables: a value given
// in unit is multiplier times the base unit.
type unitConv struct {
	unit       string
	base       string
	multiplier float64
}

const blockSize = 8192

// Memory and time conversions, largest unit first within each base unit (the
// order matters for rounding and display), as in PostgreSQL's guc.c.
var (
	memoryUnits = []unitConv{
		{"TB", "B", 1 << 40}, {"GB", "B", 1 << 30}, {"MB", "B", 1 << 20}, {"kB", "B", 1 << 10}, {"B", "B", 1},
		{"TB", "kB", 1 << 30}, {"GB", "kB", 1 << 20}, {"MB", "kB", 1 << 10}, {"kB", "kB", 1}, {"B", "kB", 1.0 / (1 << 10)},
		{"TB", "MB", 1 << 20}, {"GB", "MB", 1 << 10}, {"MB", "MB", 1}, {"kB", "MB", 1.0 / (1 << 10)}, {"B", "MB", 1.0 / (1 << 20)},
		{"TB", "8kB", (1 << 40) / blockSize}, {"GB", "8kB", (1 << 30) / blockSize}, {"MB", "8kB", (1 << 20) / blockSize},
		{"kB", "8kB", 1024.0 / blockSize}, {"B", "8kB", 1.0 / blockSize},
	}
	timeUnits = []unitConv{
		{"d", "ms", 1000 * 60 * 60 * 24}, {"h", "ms", 1000 * 60 * 60}, {"min", "ms", 1000 * 60}, {"s", "ms", 1000}, {"ms", "ms", 1}, {"us", "ms", 1.0 / 1000},
		{"d", "s", 60 * 60 * 24}, {"h", "s", 60 * 60}, {"min", "s", 60}, {"s", "s", 1}, {"ms", "s", 1.0 / 1000}, {"us", "s", 1.0 / 1e6},
		{"d", "min", 60 * 24}, {"h", "min", 60}, {"min", "min", 1}, {"s", "min", 1.0 / 60}, {"ms", "min", 1.0 / (1000 * 60)}, {"us", "min", 1.0 / (1000 * 1000 * 60)},
	}
)

const (
	memoryUnitsHint = `Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".`
	timeUnitsHint   = `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`
	maxUnitLen      = 3
)

func isMemoryUnit(base string) bool {
	switch base {
	case "B", "kB", "MB", "8kB":
		return true
	}
	return false
}

func unitTable(base string) []unitConv {
	if isMemoryUnit(base) {
		return memoryUnits
	}
	return timeUnits
}

func unitsHint(base string) string {
	if isMemoryUnit(base) {
		return memoryUnitsHint
	}
	return timeUnitsHint
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// toBaseUnit converts value given in the unit spelled by rest (which may have
// surrounding whitespace) to base. A fractional result is first rounded to a
// multiple of the next smaller unit, if there is one, as PostgreSQL does
// ("30.1GB" for an MB setting is 30822MB).
func toBaseUnit(value float64, rest, base string) (float64, bool) {
	i := 0
	for i < len(rest) && !isSpace(rest[i]) {
		i++
	}
	unit := rest[:i]
	if len(unit) > maxUnitLen || strings.TrimLeft(rest[i:], " \t\n\r\f\v") != "" {
		return 0, false
	}
	table := unitTable(base)
	for j, u := range table {
		if u.base != base || u.unit != unit {
			continue
		}
		cv := value * u.multiplier
		if j+1 < len(table) && table[j+1].base == base {
			next := table[j+1].multiplier
			cv = math.RoundToEven(cv/next) * next
		}
		return cv, true
	}
	return 0, false
}

// parseNumber reads a leading number the way PostgreSQL's parse_int and
// parse_real do (strtol with base 0, falling back to strtod when the text
// continues with '.', 'e' or 'E'), returning it and the rest of s.
func parseNumber(s string, integer bool) (float64, string, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if integer {
		// strtol, base 0.
		j := i
		base := 10
		if j+1 < len(s) && s[j] == '0' && (s[j+1] == 'x' || s[j+1] == 'X') && j+2 < len(s) && isHex(s[j+2]) {
			base = 16
			j += 2
		} else if j < len(s) && s[j] == '0' {
			base = 8
		}
		k := j
		for k < len(s) && digitIn(s[k], base) {
			k++
		}
		if k > i && (k >= len(s) || (s[k] != '.' && s[k] != 'e' && s[k] != 'E')) {
			if n, err := strconv.ParseUint(s[j:k], base, 63); err == nil {
				v := float64(n)
				if s[start] == '-' {
					v = -v
				}
				return v, s[k:], true
			}
			// ERANGE: PostgreSQL retries with strtod, and the range
			// check then reports it.
		}
	}
	// strtod: digits, optional fraction, optional exponent; also inf/nan.
	j := i
	digits := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
	}
	if digits == 0 {
		rest := strings.ToLower(s[i:])
		for _, w := range []string{"infinity", "inf"} {
			if strings.HasPrefix(rest, w) {
				v := math.Inf(1)
				if s[start] == '-' {
					v = math.Inf(-1)
				}
				return v, s[i+len(w):], true
			}
		}
		return 0, "", false
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			j = k
		}
	}
	v, err := strconv.ParseFloat(s[start:j], 64)
	if err != nil {
		return 0, "", false // out of range
	}
	return v, s[j:], true
}

func isHex(c byte) bool { return digitIn(c, 16) }

func digitIn(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c >= '8' && c <= '9':
		return base >= 10
	case (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'):
		return base == 16
	}
	return false
}

// parseBool implements PostgreSQL's parse_bool: case-insensitive prefixes of
// true, false, yes, no; "on"/"off" need at least two characters; "1" and "0"
// only alone.
func parseBool(s string) (bool, bool) {
	if s == "" {
		return false, false
	}
	prefix := func(word string, min int) bool {
		return len(s) >= min && len(s) <= len(word) && strings.EqualFold(s, word[:len(s)])
	}
	switch s[0] {
	case 't', 'T':
		return true, prefix("true", 1)
	case 'f', 'F':
		return false, prefix("false", 1)
	case 'y', 'Y':
		return true, prefix("yes", 1)
	case 'n', 'N':
		return false, prefix("no", 1)
	case 'o', 'O':
		if prefix("on", 2) {
			return true, true
		}
		return false, prefix("off", 2)
	case '1':
		return true, len(s) == 1
	case '0':
		return false, len(s) == 1
	}
	return false, false
}

// ParseValue parses s, a value in PostgreSQL's spelling, for setting d and
// validates it (range, enum values, check hooks). Errors are *Error with
// SQLSTATE 22023 and PostgreSQL's texts and hints.
func ParseValue(d *Def, s string) (Value, error) {
	v, err := parseValue(d, s)
	if err != nil {
		return Value{}, err
	}
	return v, nil
}

func parseValue(d *Def, s string) (Value, *Error) {
	var v Value
	switch d.Type {
	case Bool:
		b, ok := parseBool(s)
		if !ok {
			return v, &Error{Code: CodeInvalidParameterValue, Message: fmt.Sprintf("parameter \"%s\" requires a Boolean value", d.Name)}
		}
		v.Bool = b
	case Int, Real:
		f, rest, ok := parseNumber(s, d.Type == Int)
		if !ok || math.IsNaN(f) {
			return v, errInvalid(d.Name, s)
		}
		rest = strings.TrimLeft(rest, " \t\n\r\f\v")
		if rest != "" {
			if d.Unit == "" {
				return v, errInvalid(d.Name, s)
			}
			f, ok = toBaseUnit(f, rest, d.Unit)
			if !ok {
				e := errInvalid(d.Name, s)
				e.Hint = unitsHint(d.Unit)
				return v, e
			}
		}
		if d.Type == Int {
			f = math.RoundToEven(f)
			if f > math.MaxInt32 || f < math.MinInt32 {
				e := errInvalid(d.Name, s)
				e.Hint = "Value exceeds integer range."
				return v, e
			}
			if f < d.Min || f > d.Max {
				return v, rangeError(d, int64(f), 0)
			}
			v.Int = int64(f)
		} else {
			if f < d.Min || f > d.Max {
				return v, rangeError(d, 0, f)
			}
			v.Real = f
		}
	case String:
		v.Str = s
	case Enum:
		found := false
		name := s
		if a, ok := d.enumAliases[strings.ToLower(s)]; ok {
			name = a
		}
		for i, e := range d.EnumValues {
			if strings.EqualFold(e, name) {
				v.Str, v.Int, found = e, int64(i), true
				break
			}
		}
		if !found {
			e := errInvalid(d.Name, s)
			e.Hint = "Available values: " + strings.Join(d.EnumValues, ", ") + "."
			return v, e
		}
	}
	if d.check != nil {
		if err := d.check(d, &v); err != nil {
			return Value{}, err
		}
	}
	return v, nil
}

// rangeError is PostgreSQL's "%d%s%s is outside the valid range for
// parameter \"%s\" (%d%s%s .. %d%s%s)": the base unit follows each number,
// after a space, for settings that have one.
func rangeError(d *Def, i int64, f float64) *Error {
	unit := ""
	if d.Unit != "" {
		unit = " " + d.Unit
	}
	var msg string
	if d.Type == Int {
		msg = fmt.Sprintf("%d%s is outside the valid range for parameter \"%s\" (%d%s .. %d%s)",
			i, unit, d.Name, int64(d.Min), unit, int64(d.Max), unit)
	} else {
		msg = fmt.Sprintf("%s%s is outside the valid range for parameter \"%s\" (%s%s .. %s%s)",
			formatG(f), unit, d.Name, formatG(d.Min), unit, formatG(d.Max), unit)
	}
	return &Error{Code: CodeInvalidParameterValue, Message: msg}
}

// formatG formats f as C's printf("%g") does.
func formatG(f float64) string {
	if math.IsInf(f, 1) {
		return "inf"
	}
	if math.IsInf(f, -1) {
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// FormatValue returns v in the display form of SHOW and current_setting():
// booleans "on"/"off"; integers with a unit in the largest unit that
// represents them exactly ("1s", "128MB"; zero and negative values bare);
// reals as %g.
func FormatValue(d *Def, v Value) string {
	switch d.Type {
	case Bool:
		if v.Bool {
			return "on"
		}
		return "off"
	case Int:
		if d.Unit == "" || v.Int <= 0 {
			return strconv.FormatInt(v.Int, 10)
		}
		n, unit := intFromBaseUnit(v.Int, d.Unit)
		return strconv.FormatInt(n, 10) + unit
	case Real:
		if d.Unit == "" || v.Real <= 0 {
			return formatG(v.Real)
		}
		f, unit := realFromBaseUnit(v.Real, d.Unit)
		return formatG(f) + unit
	}
	return v.Str
}

// intFromBaseUnit picks the largest unit that divides n exactly.
func intFromBaseUnit(n int64, base string) (int64, string) {
	for _, u := range unitTable(base) {
		if u.base != base {
			continue
		}
		if u.multiplier <= 1 || n%int64(u.multiplier) == 0 {
			return int64(math.RoundToEven(float64(n) / u.multiplier)), u.unit
		}
	}
	return n, base
}

// realFromBaseUnit picks the largest unit in which f is (nearly) integral.
func realFromBaseUnit(f float64, base string) (float64, string) {
	for _, u := range unitTable(base) {
		if u.base != base {
			continue
		}
		c := f / u.multiplier
		if u.multiplier <= 1 || math.Abs(c-math.RoundToEven(c)) < 1e-8*math.Max(1, math.Abs(c)) {
			return c, u.unit
		}
	}
	return f, base
}

// rawSetting is the pg_settings.setting / boot_val / reset_val form: base
// units, no unit suffix.
func rawSetting(d *Def, v Value) string {
	switch d.Type {
	case Bool:
		if v.Bool {
			return "on"
		}
		return "off"
	case Int:
		return strconv.FormatInt(v.Int, 10)
	case Real:
		return formatG(v.Real)
	}
	return v.Str
}
