package bench

import (
	"strconv"
	"strings"
)

// keyPositions finds the line of each key of a TOML document, for error
// messages: the TOML decoder reports lines only for syntax and type
// errors. Keys are dotted; a key inside the n-th [[array]] table gets the
// index (0-based) after the array's name ("workload.1.file"), and also
// an index-less alias for its first occurrence ("workload.file"). Keys of
// an inline table ({ a = 1 }) get the line of the table.
type keyPositions map[string]int

func locateKeys(data string) keyPositions {
	out := keyPositions{}
	set := func(key string, line int) {
		if _, ok := out[key]; !ok {
			out[key] = line
		}
	}
	arrays := map[string]int{} // array table name -> occurrences so far
	prefix := ""
	inML := "" // closing delimiter of the multi-line string we are in
	depth := 0 // open brackets of a multi-line array value
	for n, line := range strings.Split(data, "\n") {
		lineNo := n + 1
		if inML != "" {
			if strings.Contains(line, inML) {
				inML = ""
			}
			continue
		}
		s := strings.TrimSpace(stripComment(line))
		if depth > 0 {
			depth += bracketDelta(s)
			continue
		}
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "[[") {
			end := strings.Index(s, "]]")
			if end < 0 {
				continue
			}
			parts, _, ok := scanKey(s[2:end])
			if !ok {
				continue
			}
			name := join(withIndices(parts[:len(parts)-1], arrays), parts[len(parts)-1])
			idx := arrays[name]
			arrays[name] = idx + 1
			prefix = name + "." + strconv.Itoa(idx)
			set(prefix, lineNo)
			set(name, lineNo)
			continue
		}
		if s[0] == '[' {
			end := strings.Index(s, "]")
			if end < 0 {
				continue
			}
			parts, _, ok := scanKey(s[1:end])
			if !ok {
				continue
			}
			prefix = withIndices(parts, arrays)
			set(prefix, lineNo)
			set(strings.Join(parts, "."), lineNo)
			continue
		}
		parts, rest, ok := scanKey(s)
		rest = strings.TrimSpace(rest)
		if !ok || !strings.HasPrefix(rest, "=") {
			continue
		}
		key := join(prefix, strings.Join(parts, "."))
		set(key, lineNo)
		set(stripIndices(key), lineNo)
		value := strings.TrimSpace(rest[1:])
		switch {
		case strings.HasPrefix(value, `"""`) && !strings.Contains(value[3:], `"""`):
			inML = `"""`
		case strings.HasPrefix(value, `'''`) && !strings.Contains(value[3:], `'''`):
			inML = `'''`
		case strings.HasPrefix(value, "{"):
			for _, k := range inlineKeys(value) {
				set(key+"."+k, lineNo)
				set(stripIndices(key+"."+k), lineNo)
			}
		case strings.HasPrefix(value, "["):
			depth = bracketDelta(value)
		}
	}
	return out
}

// line returns the line of key, or of its nearest enclosing key that has
// one, or 0.
func (p keyPositions) line(key string) int {
	for key != "" {
		if l, ok := p[key]; ok {
			return l
		}
		i := strings.LastIndex(key, ".")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// withIndices joins a table header's parts, inserting the current index
// after each part that names an array of tables.
func withIndices(parts []string, arrays map[string]int) string {
	out := ""
	plain := ""
	for _, p := range parts {
		out = join(out, p)
		plain = join(plain, p)
		if n, ok := arrays[plain]; ok && n > 0 {
			out += "." + strconv.Itoa(n-1)
		}
	}
	return out
}

// stripIndices drops the numeric parts of a dotted key.
func stripIndices(key string) string {
	var keep []string
	for _, p := range strings.Split(key, ".") {
		if _, err := strconv.Atoi(p); err != nil {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, ".")
}

// inlineKeys returns the top-level keys of an inline table "{ a = 1, b = 2 }".
func inlineKeys(v string) []string {
	var keys []string
	depth := 0
	start := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(v) && v[j] != c {
				if c == '"' && v[j] == '\\' {
					j++
				}
				j++
			}
			if start && depth == 1 {
				if parts, rest, ok := scanKey(v[i:]); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
					keys = append(keys, strings.Join(parts, "."))
				}
				start = false
			}
			i = j
		case c == '{' || c == '[':
			depth++
			start = depth == 1
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 1:
			start = true
		case c == ' ' || c == '\t':
		default:
			if start && depth == 1 {
				if parts, rest, ok := scanKey(v[i:]); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
					keys = append(keys, strings.Join(parts, "."))
				}
				start = false
			}
		}
	}
	return keys
}

// bracketDelta counts [ minus ] outside strings.
func bracketDelta(s string) int {
	d := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[':
			d++
		case c == ']':
			d--
		}
	}
	return d
}

// stripComment removes a # comment that is not inside a string.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return s[:i]
		}
	}
	return s
}

// scanKey reads a possibly dotted, possibly quoted TOML key from the
// start of s and returns its parts and the rest of s.
func scanKey(s string) (parts []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, "", false
		}
		var part string
		switch s[0] {
		case '"', '\'':
			q := s[0]
			end := 1
			for end < len(s) && s[end] != q {
				if q == '"' && s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, "", false
			}
			part = s[1:end]
			if q == '"' {
				if u, err := strconv.Unquote(s[:end+1]); err == nil {
					part = u
				}
			}
			s = s[end+1:]
		default:
			end := 0
			for end < len(s) && isBareKeyChar(s[end]) {
				end++
			}
			if end == 0 {
				return nil, "", false
			}
			part, s = s[:end], s[end:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return parts, s, true
		}
		s = s[1:]
	}
}

func isBareKeyChar(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
