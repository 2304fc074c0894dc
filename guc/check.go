package guc

import (
	"strings"
	"time"
	_ "time/tzdata" // TimeZone validation must not depend on the host's zoneinfo
)

// Check hooks: validations beyond the type's own parsing, like PostgreSQL's
// check_* functions. They may normalise the value in place.

func checkPowerOfTwo(d *Def, v *Value) *Error {
	if v.Int <= 0 || v.Int&(v.Int-1) != 0 {
		e := errInvalid(d.Name, FormatValue(d, *v))
		e.Hint = "The value must be a power of two."
		return e
	}
	return nil
}

// checkClientEncoding accepts the spellings of UTF8 (normalised to "UTF8"),
// and SQL_ASCII, which libpq sends for client_encoding=auto in the C locale.
func checkClientEncoding(d *Def, v *Value) *Error {
	var b strings.Builder
	for _, c := range strings.ToLower(v.Str) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		}
	}
	switch b.String() {
	case "utf8", "unicode":
		v.Str = "UTF8"
	case "sqlascii":
		v.Str = "SQL_ASCII"
	default:
		e := errInvalid(d.Name, v.Str)
		e.Hint = "lockd supports only the UTF8 encoding."
		return e
	}
	return nil
}

// checkTimeZone accepts UTC and GMT in any case and the names of the IANA
// time zone database.
func checkTimeZone(d *Def, v *Value) *Error {
	s := strings.TrimSpace(v.Str)
	switch {
	case strings.EqualFold(s, "UTC"):
		v.Str = "UTC"
		return nil
	case strings.EqualFold(s, "Etc/UTC"):
		v.Str = "Etc/UTC"
		return nil
	case strings.EqualFold(s, "GMT"):
		v.Str = "GMT"
		return nil
	case s == "" || s == "Local":
		return errInvalid(d.Name, v.Str)
	}
	if _, err := time.LoadLocation(s); err != nil {
		e := errInvalid(d.Name, v.Str)
		e.Detail = "Time zone \"" + s + "\" is not recognized."
		return e
	}
	v.Str = s
	return nil
}

// checkDateStyle parses a comma-separated list of an output style (ISO, SQL,
// Postgres, German) and a field order (YMD, DMY/Euro/European, MDY/US/
// NonEuro/NonEuropean) and normalises it to "Style, Order". A missing part
// takes its default (ISO, MDY; DMY for German), not the session's previous
// value as PostgreSQL does.
func checkDateStyle(d *Def, v *Value) *Error {
	style, order := "", ""
	styleConflict, orderConflict := false, false
	setStyle := func(s string) {
		if style != "" && style != s {
			styleConflict = true
		}
		style = s
	}
	setOrder := func(o string) {
		if order != "" && order != o {
			orderConflict = true
		}
		order = o
	}
	for _, tok := range strings.Split(v.Str, ",") {
		tok = strings.TrimSpace(tok)
		if len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' {
			tok = tok[1 : len(tok)-1]
		}
		switch strings.ToLower(tok) {
		case "iso":
			setStyle("ISO")
		case "sql":
			setStyle("SQL")
		case "postgres":
			setStyle("Postgres")
		case "german":
			setStyle("German")
		case "ymd":
			setOrder("YMD")
		case "dmy", "euro", "european":
			setOrder("DMY")
		case "mdy", "us", "noneuro", "noneuropean":
			setOrder("MDY")
		case "default":
			setStyle("ISO")
			setOrder("MDY")
		case "":
			if strings.TrimSpace(v.Str) == "" {
				continue
			}
			e := errInvalid(d.Name, v.Str)
			e.Detail = "List syntax is invalid."
			return e
		default:
			e := errInvalid(d.Name, v.Str)
			e.Detail = "Unrecognized key word: \"" + tok + "\"."
			return e
		}
	}
	if styleConflict || orderConflict {
		e := errInvalid(d.Name, v.Str)
		e.Detail = "Conflicting \"datestyle\" specifications."
		return e
	}
	if style == "" {
		style = "ISO"
	}
	if order == "" {
		order = "MDY"
		if style == "German" {
			order = "DMY"
		}
	}
	v.Str = style + ", " + order
	return nil
}

// checkApplicationName replaces characters outside printable ASCII with '?',
// as PostgreSQL 15 does.
func checkApplicationName(_ *Def, v *Value) *Error {
	for i := 0; i < len(v.Str); i++ {
		if c := v.Str[i]; c < 32 || c > 126 {
			b := []byte(v.Str)
			for j := i; j < len(b); j++ {
				if b[j] < 32 || b[j] > 126 {
					b[j] = '?'
				}
			}
			v.Str = string(b)
			break
		}
	}
	return nil
}
