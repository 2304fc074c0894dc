package funcs

import (
	"crypto/md5"
	"encoding/hex"
	"strings"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

func fnLength(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	return types.IntDatum(int64(len([]rune(a[0].S)))), nil
}

func fnSubstr(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	r := []rune(a[0].S)
	start := a[1].I // 1-based, may be <= 0
	end := int64(len(r)) + 1
	if len(a) == 3 {
		if a[2].I < 0 {
			return types.Datum{}, pgerr.New("22011", "negative substring length not allowed")
		}
		end = start + a[2].I
	}
	if start < 1 {
		start = 1
	}
	if end > int64(len(r))+1 {
		end = int64(len(r)) + 1
	}
	if start >= end {
		return types.TextDatum(""), nil
	}
	return types.TextDatum(string(r[start-1 : end-1])), nil
}

func fnPad(left bool) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		fill := " "
		if len(a) == 3 {
			fill = a[2].S
		}
		r := []rune(a[0].S)
		n := int(a[1].I)
		if n <= 0 {
			return types.TextDatum(""), nil
		}
		if len(r) >= n {
			return types.TextDatum(string(r[:n])), nil
		}
		if fill == "" {
			return types.TextDatum(string(r)), nil
		}
		fr := []rune(fill)
		pad := make([]rune, 0, n-len(r))
		for i := 0; len(pad) < n-len(r); i++ {
			pad = append(pad, fr[i%len(fr)])
		}
		if left {
			return types.TextDatum(string(pad) + string(r)), nil
		}
		return types.TextDatum(string(r) + string(pad)), nil
	}
}

func fnStrpos(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	i := strings.Index(a[0].S, a[1].S)
	if i < 0 {
		return types.IntDatum(0), nil
	}
	return types.IntDatum(int64(len([]rune(a[0].S[:i])) + 1)), nil
}

func fnSplitPart(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	n := a[2].I
	if n == 0 {
		return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "field position must not be zero")
	}
	if a[1].S == "" {
		if n == 1 || n == -1 {
			return a[0], nil
		}
		return types.TextDatum(""), nil
	}
	parts := strings.Split(a[0].S, a[1].S)
	if n < 0 {
		n = int64(len(parts)) + n + 1
	}
	if n < 1 || n > int64(len(parts)) {
		return types.TextDatum(""), nil
	}
	return types.TextDatum(parts[n-1]), nil
}

func fnTrim(left, right bool) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		set := " "
		if len(a) == 2 {
			set = a[1].S
		}
		v := a[0].S
		if left {
			v = strings.TrimLeft(v, set)
		}
		if right {
			v = strings.TrimRight(v, set)
		}
		return types.TextDatum(v), nil
	}
}

func fnLeftRight(left bool) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		r := []rune(a[0].S)
		n := int(a[1].I)
		if n < 0 {
			n = len(r) + n
			if n < 0 {
				n = 0
			}
		}
		if n > len(r) {
			n = len(r)
		}
		if left {
			return types.TextDatum(string(r[:n])), nil
		}
		return types.TextDatum(string(r[len(r)-n:])), nil
	}
}

func fnReverse(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	r := []rune(a[0].S)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return types.TextDatum(string(r)), nil
}

func fnInitcap(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	b := []byte(asciiCase(a[0].S, false))
	start := true
	for i, c := range b {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c > 127
		if start && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		start = !alnum
	}
	return types.TextDatum(string(b)), nil
}

// asciiCase maps ASCII letters only, as PostgreSQL does under the C
// collation lockd compares with.
func asciiCase(s string, upper bool) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case upper && c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// fnLikeEscape rewrites a LIKE pattern with a custom escape character
// into one with backslash escapes (ESCAPE ” means no escape at all).
func fnLikeEscape(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	esc := []rune(a[1].S)
	if len(esc) > 1 {
		return types.Datum{}, pgerr.New("22019", "invalid escape string").WithHint("Escape string must be empty or one character.")
	}
	var b strings.Builder
	r := []rune(a[0].S)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case len(esc) == 0:
			if c == '\\' {
				b.WriteString(`\\`)
			} else {
				b.WriteRune(c)
			}
		case c == esc[0]:
			if i+1 >= len(r) {
				return types.Datum{}, pgerr.New("22025", "LIKE pattern must not end with escape character")
			}
			i++
			b.WriteByte('\\')
			b.WriteRune(r[i])
		case c == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(c)
		}
	}
	return types.TextDatum(b.String()), nil
}

// quoteLiteral is quote_literal: the string in single quotes, quotes
// doubled, and an E prefix with doubled backslashes if it has any.
func QuoteLiteral(v string) string {
	q := "'" + strings.ReplaceAll(v, "'", "''") + "'"
	if strings.Contains(v, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// formatFn is format(fmt, args...) with %s, %I, %L and %%.
func FormatFn(ec *expr.EvalCtx, v []types.Datum, text func(*expr.EvalCtx, int, types.Datum) string) (types.Datum, error) {
	if v[0].Null {
		return types.NullDatum, nil
	}
	f := v[0].S
	var b strings.Builder
	next := 1
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "unterminated format() type specifier").
				WithHint("For a single \"%\" use \"%%\".")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if next >= len(v) {
			return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "too few arguments for format()")
		}
		d := v[next]
		next++
		switch f[i] {
		case 's':
			if !d.Null {
				b.WriteString(text(ec, next-1, d))
			}
		case 'I':
			if d.Null {
				return types.Datum{}, pgerr.New(pgerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			b.WriteString(types.QuoteIdent(text(ec, next-1, d)))
		case 'L':
			if d.Null {
				b.WriteString("NULL")
			} else {
				b.WriteString(QuoteLiteral(text(ec, next-1, d)))
			}
		default:
			return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "unrecognized format() type specifier \"%c\"", f[i]).
				WithHint("For a single \"%\" use \"%%\".")
		}
	}
	return types.TextDatum(b.String()), nil
}

// fnRegexSubstring is substring(string from pattern): the part matching
// the first parenthesised subexpression, or the whole match.
func fnRegexSubstring(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	re, err := expr.CompileRegex(a[1].S, false)
	if err != nil {
		return types.Datum{}, err
	}
	m := re.FindStringSubmatch(a[0].S)
	switch {
	case m == nil:
		return types.NullDatum, nil
	case len(m) > 1:
		return types.TextDatum(m[1]), nil
	}
	return types.TextDatum(m[0]), nil
}

// stringFuncs are the string functions (PostgreSQL: utils/adt/varlena.c,
// oracle_compat.c).
var stringFuncs = map[string][]Builtin{
	"length": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnLength},
		{args: []types.Type{types.TypeBytea}, Result: fixed(types.TypeInt4), Fn: byteaLength}},
	"char_length": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnLength}},
	"octet_length": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.IntDatum(int64(len(a[0].S))), nil
	}}, {args: []types.Type{types.TypeBytea}, Result: fixed(types.TypeInt4), Fn: byteaLength}},
	"upper": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.TextDatum(asciiCase(a[0].S, true)), nil
	}}},
	"lower": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.TextDatum(asciiCase(a[0].S, false)), nil
	}}},
	"md5": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		sum := md5.Sum([]byte(a[0].S))
		return types.TextDatum(hex.EncodeToString(sum[:])), nil
	}}},
	"repeat": {{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		if a[1].I <= 0 {
			return types.TextDatum(""), nil
		}
		if int64(len(a[0].S))*a[1].I > 1<<30 {
			return types.Datum{}, pgerr.New(pgerr.ProgramLimitExceeded, "requested length too large")
		}
		return types.TextDatum(strings.Repeat(a[0].S, int(a[1].I))), nil
	}}},
	"substr": {
		{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
		{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
	},
	"substring": {
		{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
		{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
		{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnRegexSubstring},
	},
	"position":    {{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnStrpos}},
	"like_escape": {{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnLikeEscape}},
	"strpos":      {{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnStrpos}},
	"replace": {{args: []types.Type{types.TypeText, types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		if a[1].S == "" {
			return a[0], nil
		}
		return types.TextDatum(strings.ReplaceAll(a[0].S, a[1].S, a[2].S)), nil
	}}},
	"split_part": {{args: []types.Type{types.TypeText, types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSplitPart}},
	"btrim": {
		{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, true)},
		{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, true)},
	},
	"ltrim": {
		{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, false)},
		{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, false)},
	},
	"rtrim": {
		{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(false, true)},
		{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(false, true)},
	},
	"left":    {{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnLeftRight(true)}},
	"right":   {{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnLeftRight(false)}},
	"reverse": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnReverse}},
	"initcap": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnInitcap}},
	"bit_length": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.IntDatum(int64(8 * len(a[0].S))), nil
	}}},
	"quote_literal": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.TextDatum(QuoteLiteral(a[0].S)), nil
	}}},
	"quote_nullable": {{args: []types.Type{types.TypeText}, NonStrict: true, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		if a[0].Null {
			return types.TextDatum("NULL"), nil
		}
		return types.TextDatum(QuoteLiteral(a[0].S)), nil
	}}},
	"quote_ident": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.TextDatum(types.QuoteIdent(a[0].S)), nil
	}}},
	"chr": {{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		if a[0].I <= 0 || a[0].I > 0x10ffff {
			return types.Datum{}, pgerr.New(pgerr.ProgramLimitExceeded, "requested character too large for encoding: %d", a[0].I)
		}
		return types.TextDatum(string(rune(a[0].I))), nil
	}}},
	"ascii": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		r := []rune(a[0].S)
		if len(r) == 0 {
			return types.IntDatum(0), nil
		}
		return types.IntDatum(int64(r[0])), nil
	}}},
	"lpad": {
		{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnPad(true)},
		{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeText}, Result: fixed(types.TypeText), Fn: fnPad(true)},
	},
	"rpad": {
		{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnPad(false)},
		{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeText}, Result: fixed(types.TypeText), Fn: fnPad(false)},
	},
}
