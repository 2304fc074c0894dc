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
	sh := &shaper{q: q}
	sh.b.Grow(len(q) + 8)
	for i := 0; i < len(q); {
		c := q[i]
		var next int
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			sh.b.WriteByte(c)
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
			sh.sawSemicolon = true
			sh.b.WriteByte(c)
			i++
			continue
		case c == '\'':
			next = sh.stringLiteral(i)
		case c == '"':
			next = sh.quotedIdent(i)
		case isDigit(c) || (c == '.' && i+1 < len(q) && isDigit(q[i+1])):
			next = sh.number(i)
		case isIdentStart(c):
			next = sh.word(i)
		default:
			if !sh.punct(c) {
				return "", nil, false
			}
			i++
			continue
		}
		if next < 0 {
			return "", nil, false
		}
		i = next
	}
	if len(sh.lits) == 0 {
		return "", nil, false
	}
	sig := make([]byte, len(sh.lits))
	for i, l := range sh.lits {
		sig[i] = l.kind
	}
	return string(sig) + "|" + sh.b.String(), sh.lits, true
}

// shaper is shapeOf's scan of one query: the key written so far, the
// literals taken out, and what the last tokens were.
type shaper struct {
	q        string
	b        strings.Builder
	lits     []literal
	prevWord string // the last identifier or keyword, lower case
	lastWord string // the identifier or keyword before prevWord
	byList   bool   // inside ORDER BY / GROUP BY, where 1 means column 1
	// byOuter saves byList at each open parenthesis: a subquery's FROM
	// ends its own lists, not the ORDER BY it sits in, as in
	// ORDER BY x IN (SELECT y FROM t), 2
	byOuter      []bool
	lastTok      byte // last significant character
	typmodDepth  int  // >0 inside the parentheses of a type modifier
	sawSemicolon bool
}

// stringLiteral takes out the quoted literal at i; it returns the
// position after it, or -1 when the query cannot be shaped.
func (sh *shaper) stringLiteral(i int) int {
	q := sh.q
	switch sh.lastTok {
	case 'E', 'e', 'B', 'b', 'X', 'x', 'U', 'u':
		if prevWordEndsAt(q, i) {
			return -1 // E'..', B'..', X'..', U&'..'
		}
	}
	j := i + 1
	var sb strings.Builder
	for {
		if j >= len(q) {
			return -1
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
	if prevWordEndsAt(q, i) || typeModWords[sh.prevWord] || sh.prevWord == "date" {
		return -1
	}
	sh.lits = append(sh.lits, literal{text: sb.String(), kind: 's', quote: true})
	sh.b.WriteString("$" + strconv.Itoa(len(sh.lits)))
	sh.lastTok = '\''
	sh.prevWord = ""
	return j + 1
}

// quotedIdent copies the quoted identifier at i.
func (sh *shaper) quotedIdent(i int) int {
	q := sh.q
	j := strings.IndexByte(q[i+1:], '"')
	if j < 0 {
		return -1
	}
	sh.b.WriteString(q[i : i+j+2])
	sh.lastTok = '"'
	sh.prevWord = ""
	return i + j + 2
}

// number takes out the numeric literal at i (a type modifier's number
// stays in the key).
func (sh *shaper) number(i int) int {
	q := sh.q
	if i > 0 && isIdentChar(q[i-1]) {
		// part of an identifier such as t1
		sh.b.WriteByte(q[i])
		return i + 1
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
		return -1 // 123abc: let the parser judge
	}
	if sh.byList && (sh.prevWord == "by" || sh.lastTok == ',' || sh.lastTok == '(') {
		// ORDER BY 1 names an output column (also written (1)); in
		// ORDER BY f(1) the 1 is a value, but the ordinary path sorts
		// that out
		return -1
	}
	if sh.lastTok == '-' && (q[i:j] == "2147483648" || q[i:j] == "9223372036854775808") {
		return -1 // -2147483648 is an integer, not -(bigint)
	}
	text := q[i:j]
	if sh.typmodDepth > 0 {
		sh.b.WriteString(text) // a type modifier stays in the key
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
		sh.lits = append(sh.lits, literal{text: text, kind: kind})
		sh.b.WriteString("$" + strconv.Itoa(len(sh.lits)))
	}
	sh.lastTok = '0'
	sh.prevWord = ""
	return j
}

// word copies the identifier or keyword at i, following ORDER BY and
// GROUP BY lists.
func (sh *shaper) word(i int) int {
	q := sh.q
	j := i
	for j < len(q) && isIdentChar(q[j]) {
		j++
	}
	sh.lastWord, sh.prevWord = sh.prevWord, strings.ToLower(q[i:j])
	switch sh.prevWord {
	case "by":
		sh.byList = sh.lastWord == "order" || sh.lastWord == "group"
	case "from":
		// IS [NOT] DISTINCT FROM is an operator, not a FROM clause
		sh.byList = sh.byList && sh.lastWord == "distinct"
	case "limit", "offset", "having", "for", "union", "intersect", "except", "fetch", "window", "where":
		sh.byList = false
	}
	sh.b.WriteString(q[i:j])
	sh.lastTok = q[j-1]
	return j
}

// punct copies one punctuation character, following the parentheses of
// type modifiers; false: text after the trailing semicolon.
func (sh *shaper) punct(c byte) bool {
	switch c {
	case '(':
		if typeModWords[sh.prevWord] || sh.typmodDepth > 0 {
			sh.typmodDepth++
		}
		sh.byOuter = append(sh.byOuter, sh.byList)
	case ')':
		if sh.typmodDepth > 0 {
			sh.typmodDepth--
		}
		if n := len(sh.byOuter); n > 0 {
			sh.byList, sh.byOuter = sh.byOuter[n-1], sh.byOuter[:n-1]
		}
	}
	if sh.sawSemicolon {
		return false
	}
	sh.b.WriteByte(c)
	sh.lastTok = c
	sh.prevWord = ""
	return true
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
