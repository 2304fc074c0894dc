package types

import (
	"strings"
	"testing"

	"lockd/pgerr"
)

// TestParseTextBytesInt checks the integer input COPY FROM parses from
// bytes against what a user sees from PostgreSQL's int2in, int4in,
// int8in and oidin (and from ParseText, which must agree on every input).
func TestParseTextBytesInt(t *testing.T) {
	for _, tc := range []struct {
		typ  Type
		in   string
		want int64
		code string // "" for a value
		msg  string
	}{
		{TypeInt4, "0", 0, "", ""},
		{TypeInt4, "1", 1, "", ""},
		{TypeInt4, "-1", -1, "", ""},
		{TypeInt4, "+42", 42, "", ""},
		{TypeInt4, "007", 7, "", ""},
		{TypeInt4, "-0", 0, "", ""},
		{TypeInt4, "  12  ", 12, "", ""},
		{TypeInt4, "\t\n\v\f\r12\r\n", 12, "", ""},
		{TypeInt4, " -12 ", -12, "", ""},
		{TypeInt4, "2147483647", 2147483647, "", ""},
		{TypeInt4, "-2147483648", -2147483648, "", ""},
		{TypeInt4, "2147483648", 0, pgerr.NumericValueOutOfRange, `value "2147483648" is out of range for type integer`},
		{TypeInt4, "-2147483649", 0, pgerr.NumericValueOutOfRange, `value "-2147483649" is out of range for type integer`},
		{TypeInt4, " 99999999999 ", 0, pgerr.NumericValueOutOfRange, `value " 99999999999 " is out of range for type integer`},
		{TypeInt4, "99999999999999999999", 0, pgerr.NumericValueOutOfRange, `value "99999999999999999999" is out of range for type integer`},
		{TypeInt4, "", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: ""`},
		{TypeInt4, "   ", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "   "`},
		{TypeInt4, "-", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "-"`},
		{TypeInt4, "+", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "+"`},
		{TypeInt4, "+-1", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "+-1"`},
		{TypeInt4, "--1", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "--1"`},
		{TypeInt4, "- 1", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "- 1"`},
		{TypeInt4, "1 2", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "1 2"`},
		{TypeInt4, "12a", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "12a"`},
		{TypeInt4, "x", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "x"`},
		{TypeInt4, "1.5", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "1.5"`},
		{TypeInt4, "1_000", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "1_000"`},
		{TypeInt4, "0x10", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "0x10"`},
		{TypeInt4, `\N`, 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "\N"`},
		{TypeInt2, "32767", 32767, "", ""},
		{TypeInt2, "-32768", -32768, "", ""},
		{TypeInt2, "32768", 0, pgerr.NumericValueOutOfRange, `value "32768" is out of range for type smallint`},
		{TypeInt2, "-32769", 0, pgerr.NumericValueOutOfRange, `value "-32769" is out of range for type smallint`},
		{TypeInt2, "1e3", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type smallint: "1e3"`},
		{TypeInt8, "999999999999999999", 999999999999999999, "", ""},
		{TypeInt8, "-999999999999999999", -999999999999999999, "", ""},
		{TypeInt8, "9223372036854775807", 9223372036854775807, "", ""},
		{TypeInt8, "-9223372036854775808", -9223372036854775808, "", ""},
		{TypeInt8, "0000000000000000000001", 1, "", ""},
		{TypeInt8, "9223372036854775808", 0, pgerr.NumericValueOutOfRange, `value "9223372036854775808" is out of range for type bigint`},
		{TypeInt8, "-9223372036854775809", 0, pgerr.NumericValueOutOfRange, `value "-9223372036854775809" is out of range for type bigint`},
		{TypeInt8, "1 0", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type bigint: "1 0"`},
		{TypeOid, "4294967295", 4294967295, "", ""},
		{TypeOid, "4294967296", 0, pgerr.NumericValueOutOfRange, `value "4294967296" is out of range for type oid`},
		{TypeOid, "-1", 0, pgerr.NumericValueOutOfRange, `value "-1" is out of range for type oid`},
		// white space beyond ASCII is trimmed as strings.TrimSpace trims
		// it (PostgreSQL's isspace would not): the slow path keeps that
		{TypeInt4, "\u00a012\u0085", 12, "", ""},
		{TypeInt4, "１２", 0, pgerr.InvalidTextRepresentation, `invalid input syntax for type integer: "１２"`},
	} {
		for _, parse := range []struct {
			name string
			f    func() (Datum, error)
		}{
			{"ParseTextBytes", func() (Datum, error) { return ParseTextBytes(tc.typ, []byte(tc.in), nil) }},
			{"ParseText", func() (Datum, error) { return ParseText(tc.typ, tc.in, nil) }},
		} {
			d, err := parse.f()
			if tc.code == "" {
				if err != nil || !sameInt(d, tc.want) {
					t.Errorf("%s(%s, %q) = %+v, %v; want %d", parse.name, tc.typ.Name, tc.in, d, err, tc.want)
				}
				continue
			}
			e, ok := err.(*pgerr.Error)
			if !ok || e.Code != tc.code || e.Message != tc.msg {
				t.Errorf("%s(%s, %q) error = %v; want %s %s", parse.name, tc.typ.Name, tc.in, err, tc.code, tc.msg)
			}
		}
	}
}

// TestParseIntBytesAgrees compares the fast path with ParseText on every
// short string over the characters integers are made of and around.
func TestParseIntBytesAgrees(t *testing.T) {
	alphabet := []byte(" \t+-0189a")
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		for _, typ := range []Type{TypeInt2, TypeInt4, TypeInt8} {
			got, gerr := ParseTextBytes(typ, prefix, nil)
			want, werr := ParseText(typ, string(prefix), nil)
			if !sameParse(got, gerr, want, werr) {
				t.Fatalf("%s %q: ParseTextBytes %+v, %v; ParseText %+v, %v", typ.Name, prefix, got, gerr, want, werr)
			}
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(append(prefix, c), n-1)
		}
	}
	gen(nil, 5)
	for _, digits := range []string{"9", "1", "0"} {
		for n := 15; n <= 21; n++ {
			for _, sign := range []string{"", "-", "+"} {
				s := sign + strings.Repeat(digits, n)
				got, gerr := ParseTextBytes(TypeInt8, []byte(s), nil)
				want, werr := ParseText(TypeInt8, s, nil)
				if !sameParse(got, gerr, want, werr) {
					t.Errorf("bigint %q: ParseTextBytes %+v, %v; ParseText %+v, %v", s, got, gerr, want, werr)
				}
			}
		}
	}
}

func sameInt(d Datum, i int64) bool {
	return !d.Null && d.I == i && d.F == 0 && d.S == "" && d.A == nil
}

// sameParse reports whether two parses gave the same integer or the same
// error.
func sameParse(d1 Datum, err1 error, d2 Datum, err2 error) bool {
	if err1 != nil || err2 != nil {
		e1, ok1 := err1.(*pgerr.Error)
		e2, ok2 := err2.(*pgerr.Error)
		return ok1 && ok2 && e1.Code == e2.Code && e1.Message == e2.Message
	}
	return sameInt(d1, d2.I) && sameInt(d2, d1.I)
}

func TestParseTextBytesIntNoAlloc(t *testing.T) {
	b := []byte(" -2147483648 ")
	if n := testing.AllocsPerRun(100, func() {
		if _, err := ParseTextBytes(TypeInt4, b, nil); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ParseTextBytes(integer): %v allocs, want 0", n)
	}
}

// TestCoerceString covers char(n) and varchar(n) assignment, whose
// common case (no longer in bytes than n) skips counting characters.
func TestCoerceString(t *testing.T) {
	bpchar3 := Type{OIDBpchar, -1, 3 + 4, "character"}
	varchar3 := Type{OIDVarchar, -1, 3 + 4, "character varying"}
	for _, tc := range []struct {
		typ      Type
		in       string
		explicit bool
		want     string
		msg      string
	}{
		{bpchar3, "", false, "", ""},
		{bpchar3, "ab ", false, "ab", ""},
		{bpchar3, "abc", false, "abc", ""},
		{bpchar3, "abc   ", false, "abc", ""},
		{bpchar3, "a  ", false, "a", ""},
		{bpchar3, "äöü", false, "äöü", ""},
		{bpchar3, "äöü ", false, "äöü", ""},
		{bpchar3, "abcd", false, "", "value too long for type character(3)"},
		{bpchar3, "abcd", true, "abc", ""},
		{bpchar3, "äöüß", false, "", "value too long for type character(3)"},
		{varchar3, "ab ", false, "ab ", ""},
		{varchar3, "abc ", false, "abc", ""},
		{varchar3, "äöü", false, "äöü", ""},
		{varchar3, "abcd", false, "", "value too long for type character varying(3)"},
		{TypeBpchar, "x  ", false, "x", ""},
		{TypeVarchar, "x  ", false, "x  ", ""},
	} {
		d, err := CoerceString(tc.typ, tc.in, tc.explicit)
		if tc.msg != "" {
			e, ok := err.(*pgerr.Error)
			if !ok || e.Code != pgerr.StringDataRightTruncation || e.Message != tc.msg {
				t.Errorf("CoerceString(%s, %q) error = %v; want %s", tc.typ.Name, tc.in, err, tc.msg)
			}
			continue
		}
		if err != nil || d.S != tc.want {
			t.Errorf("CoerceString(%s, %q, %v) = %q, %v; want %q", tc.typ.Name, tc.in, tc.explicit, d.S, err, tc.want)
		}
	}
}

// TestParseTextBytesString compares ParseTextBytes with ParseText for
// char(n) and varchar(n) around their limits, in bytes and characters.
func TestParseTextBytesString(t *testing.T) {
	var typs []Type
	for _, n := range []int32{-1, 1, 3, 8, 84} {
		mod := n
		if n > 0 {
			mod = n + 4
		}
		typs = append(typs, Type{OIDBpchar, -1, mod, "character"}, Type{OIDVarchar, -1, mod, "character varying"})
	}
	ins := []string{"", " ", "a", "a ", " a", "ab", "abc", "abc ", "abc  ", "abcd", "abcd ", "ä", "äö", "äöü", "äöü ", "äöüß",
		"a\t", "ab\t ", strings.Repeat(" ", 90), strings.Repeat("x", 84) + "   ", strings.Repeat("x", 85), strings.Repeat("é", 84) + " "}
	for _, typ := range typs {
		for _, in := range ins {
			got, gerr := ParseTextBytes(typ, []byte(in), nil)
			want, werr := ParseText(typ, in, nil)
			same := gerr == nil && werr == nil && got.S == want.S && !got.Null && !want.Null
			if gerr != nil && werr != nil {
				ge, _ := gerr.(*pgerr.Error)
				we, _ := werr.(*pgerr.Error)
				same = ge != nil && we != nil && ge.Code == we.Code && ge.Message == we.Message
			}
			if !same {
				t.Errorf("%s(%d) %q: ParseTextBytes %q, %v; ParseText %q, %v", typ.Name, typ.Mod-4, in, got.S, gerr, want.S, werr)
			}
		}
	}
}
