package sql

import (
	"strconv"
	"strings"

	"lockd/sql/types"
)

// Statement shapes. pgbench -M simple sends every statement with its
// values pasted in ("... WHERE aid = 4711;"), so caching plans by text
// never hits. shapeOf strips the literals out of a single DML statement,
// replacing each with a parameter: statements that differ only in their
// literals share one analysed plan, and the literals are bound as
// parameter values, typed as the literal would have been (an integer that
// fits int4 is int4, a larger one int8, a decimal numeric, a quoted
// string unknown). Anything unusual — comments, dollar quotes, escape
// strings, existing parameters, numbers inside type modifiers such as
// char(3) — is left to the ordinary path.

type literal struct {
	text  string
	kind  byte // 'i' int4, 'l' int8, 'n' numeric, 's' string
	quote bool
}

// typeModWords are the type names whose parenthesised numbers are type
// modifiers, not values.
var typeModWords = map[string]bool{
	"char": true, "character": true, "varchar": true, "varying": true, "numeric": true, "decimal": true,
	"bit": true, "varbit": true, "interval": true, "timestamp": true, "timestamptz": true, "time": true,
	"timetz": true, "float": true, "bpchar": true,
}

// shapeOf returns the statement's shape key and its literals, or ok=false
// when the statement should not be shaped.
func shapeOf(q string) (key string, lits []literal, ok bool) {
	t := strings.TrimSpace(q)
	if len(t) < 7 {
		return "", nil, false
	}
	switch strings.ToLower(t[:6]) {
	case "select", "insert", "update", "delete":
	default:
		return "", nil, false
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	prevWord := ""     // the last identifier or keyword, lower case
	lastWord := ""     // the identifier or keyword before prevWord
	byList := false    // inside ORDER BY / GROUP BY, where 1 means column 1
	lastTok := byte(0) // last significant character
	typmodDepth := 0   // >0 inside the parentheses of a type modifier
	sawSemicolon := false
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(c)
			i++
			continue
		case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '/' && i+1 < len(q) && q[i+1] == '*':
			return "", nil, false
		case c == '$':
			return "", nil, false
		case c == ';':
			// only a trailing semicolon: a second statement is not shaped
			if strings.TrimSpace(q[i+1:]) != "" {
				return "", nil, false
			}
			sawSemicolon = true
			b.WriteByte(c)
			i++
			continue
		case c == '\'':
			if lastTok == 'E' || lastTok == 'e' || lastTok == 'B' || lastTok == 'b' || lastTok == 'X' || lastTok == 'x' || lastTok == 'U' || lastTok == 'u' {
				if prevWordEndsAt(q, i) {
					return "", nil, false // E'..', B'..', X'..', U&'..'
				}
			}
			j := i + 1
			var sb strings.Builder
			for {
				if j >= len(q) {
					return "", nil, false
				}
				if q[j] == '\'' {
					if j+1 < len(q) && q[j+1] == '\'' {
						sb.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				sb.WriteByte(q[j])
				j++
			}
			// a typed literal such as interval '1 day' or timestamp '...'
			// keeps its text: its meaning depends on the type name.
			if prevWordEndsAt(q, i) || typeModWords[prevWord] || prevWord == "date" {
				return "", nil, false
			}
			lits = append(lits, literal{text: sb.String(), kind: 's', quote: true})
			b.WriteString("$" + strconv.Itoa(len(lits)))
			i = j + 1
			lastTok = '\''
			prevWord = ""
			continue
		case c == '"':
			j := strings.IndexByte(q[i+1:], '"')
			if j < 0 {
				return "", nil, false
			}
			b.WriteString(q[i : i+j+2])
			i += j + 2
			lastTok = '"'
			prevWord = ""
			continue
		case isDigit(c) || (c == '.' && i+1 < len(q) && isDigit(q[i+1])):
			if i > 0 && isIdentChar(q[i-1]) {
				// part of an identifier such as t1
				b.WriteByte(c)
				i++
				continue
			}
			j := i
			sawDot, sawExp := false, false
			for j < len(q) {
				d := q[j]
				if isDigit(d) {
					j++
				} else if d == '.' && !sawDot && !sawExp {
					sawDot = true
					j++
				} else if (d == 'e' || d == 'E') && !sawExp && j+1 < len(q) && (isDigit(q[j+1]) || ((q[j+1] == '+' || q[j+1] == '-') && j+2 < len(q) && isDigit(q[j+2]))) {
					sawExp = true
					j += 2
				} else {
					break
				}
			}
			if j < len(q) && isIdentChar(q[j]) {
				return "", nil, false // 123abc: let the parser judge
			}
			if byList && (prevWord == "by" || lastTok == ',') {
				return "", nil, false // ORDER BY 1 names an output column
			}
			if lastTok == '-' && (q[i:j] == "2147483648" || q[i:j] == "9223372036854775808") {
				return "", nil, false // -2147483648 is an integer, not -(bigint)
			}
			text := q[i:j]
			if typmodDepth > 0 {
				b.WriteString(text) // a type modifier stays in the key
			} else {
				kind := byte('n')
				if !sawDot && !sawExp {
					if v, err := strconv.ParseInt(text, 10, 64); err == nil {
						kind = 'l'
						if v <= 2147483647 {
							kind = 'i'
						}
					}
				}
				lits = append(lits, literal{text: text, kind: kind})
				b.WriteString("$" + strconv.Itoa(len(lits)))
			}
			i = j
			lastTok = '0'
			prevWord = ""
			continue
		case isIdentStart(c):
			j := i
			for j < len(q) && isIdentChar(q[j]) {
				j++
			}
			lastWord, prevWord = prevWord, strings.ToLower(q[i:j])
			switch prevWord {
			case "by":
				byList = lastWord == "order" || lastWord == "group"
			case "limit", "offset", "having", "for", "union", "intersect", "except", "fetch", "window", "where", "from":
				byList = false
			}
			b.WriteString(q[i:j])
			lastTok = q[j-1]
			i = j
			continue
		case c == '(':
			if typeModWords[prevWord] || typmodDepth > 0 {
				typmodDepth++
			}
		case c == ')':
			if typmodDepth > 0 {
				typmodDepth--
			}
		}
		if sawSemicolon {
			return "", nil, false
		}
		b.WriteByte(c)
		lastTok = c
		prevWord = ""
		i++
	}
	if len(lits) == 0 {
		return "", nil, false
	}
	sig := make([]byte, len(lits))
	for i, l := range lits {
		sig[i] = l.kind
	}
	return string(sig) + "|" + b.String(), lits, true
}

// prevWordEndsAt reports whether an identifier character directly
// precedes position i (as in E'..' or a type name before a literal).
func prevWordEndsAt(q string, i int) bool { return i > 0 && isIdentChar(q[i-1]) }

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 0x80 || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) || c == '$' }

// literalType is the type a literal of this kind has in PostgreSQL.
func literalType(kind byte) types.Type {
	switch kind {
	case 'i':
		return types.TypeInt4
	case 'l':
		return types.TypeInt8
	case 'n':
		return types.TypeNumeric
	}
	return types.Type{} // a quoted string: unknown, typed by its context
}
