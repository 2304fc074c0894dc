package guc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// PostgreSQL-syntax configuration files (postgresql.conf): one setting per
// line, "name [=] value", # comments, values that are numbers with optional
// units, bare words or single-quoted strings, and the include,
// include_if_exists and include_dir directives. The rules are those of
// PostgreSQL 15's configuration file lexer and ParseConfigFp; the code is
// lockd's own.

// maxIncludeDepth is PostgreSQL's CONF_FILE_MAX_DEPTH.
const maxIncludeDepth = 10

// isPGSyntax reports whether data is a PostgreSQL-syntax configuration file
// rather than TOML: it is if TOML cannot read it, or if it uses one of the
// include directives (which TOML would take for a setting). Files that both
// can read mean the same either way.
func isPGSyntax(data string) bool {
	var m map[string]any
	if _, err := toml.Decode(data, &m); err != nil {
		return true
	}
	for k := range m {
		switch strings.ToLower(k) {
		case "include", "include_if_exists", "include_dir":
			return true
		}
	}
	return false
}

// looksTOML reports whether data uses constructs only TOML has (table
// headers, values that are double-quoted strings, arrays or inline tables),
// so that a file neither syntax reads gets TOML's error rather than
// PostgreSQL's.
func looksTOML(data string) bool {
	for _, line := range strings.Split(data, "\n") {
		s := strings.TrimSpace(line)
		if strings.HasPrefix(s, "#") {
			continue
		}
		if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "\"") {
			return true
		}
		if _, v, ok := strings.Cut(s, "="); ok {
			v = strings.TrimSpace(v)
			if v != "" && (v[0] == '"' || v[0] == '[' || v[0] == '{') {
				return true
			}
		}
	}
	return false
}

// pgItem is one "name = value" of a PostgreSQL-syntax file, in file order.
type pgItem struct {
	name, value string
	file        string
	line        int
}

// pgConfReader reads a PostgreSQL-syntax file and the files it includes.
type pgConfReader struct {
	items []pgItem
	fatal []*FileError
}

// readFile reads path (absolute, or relative to the including file's
// directory) at include depth depth.
func (r *pgConfReader) readFile(path, from string, fromLine int, depth int, strict bool) {
	if depth > maxIncludeDepth {
		r.fatal = append(r.fatal, &FileError{File: path, Line: fromLine,
			Err: &Error{Code: CodeConfigFileError, Message: "could not open configuration file \"" + path + "\": maximum nesting depth exceeded"},
			msg: fmt.Sprintf("could not open configuration file \"%s\": maximum nesting depth exceeded", path)})
		return
	}
	path = relativeTo(path, from)
	data, err := os.ReadFile(path)
	if err != nil {
		if !strict && errors.Is(err, fs.ErrNotExist) {
			return // include_if_exists: PostgreSQL logs "skipping missing configuration file"
		}
		r.fatal = append(r.fatal, &FileError{File: path, Line: fromLine,
			Err: &Error{Code: CodeConfigFileError, Message: err.Error()},
			msg: fmt.Sprintf("could not open configuration file \"%s\": %v", path, errors.Unwrap(err))})
		return
	}
	r.parse(path, string(data), depth)
}

// relativeTo resolves a relative include path against the directory of the
// file that names it.
func relativeTo(path, from string) string {
	if filepath.IsAbs(path) || from == "" {
		return path
	}
	return filepath.Join(filepath.Dir(from), path)
}

// readDir implements include_dir: the files in dir whose names end in
// ".conf" and do not start with ".", in name order.
func (r *pgConfReader) readDir(dir, from string, fromLine int, depth int) {
	dir = relativeTo(dir, from)
	ents, err := os.ReadDir(dir)
	if err != nil {
		r.fatal = append(r.fatal, &FileError{File: from, Line: fromLine,
			Err: &Error{Code: CodeConfigFileError, Message: err.Error()},
			msg: fmt.Sprintf("could not open configuration directory \"%s\": %v", dir, errors.Unwrap(err))})
		return
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".conf") {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r.readFile(filepath.Join(dir, n), "", fromLine, depth+1, true)
	}
}

// parse reads the lines of one file. A syntax error stops the file, as in
// PostgreSQL.
func (r *pgConfReader) parse(path, data string, depth int) {
	for n, line := range strings.Split(data, "\n") {
		lineNo := n + 1
		name, value, tok, ok := pgConfLine(line)
		if !ok {
			near := "near end of line"
			if tok != "" {
				near = "near token \"" + tok + "\""
			}
			e := &Error{Code: CodeSyntaxError, Message: "syntax error"}
			r.fatal = append(r.fatal, &FileError{File: path, Line: lineNo, Err: e,
				msg: fmt.Sprintf("syntax error in file \"%s\" line %d, %s", path, lineNo, near)})
			return
		}
		switch strings.ToLower(name) {
		case "":
			continue
		case "include":
			r.readFile(value, path, lineNo, depth+1, true)
		case "include_if_exists":
			r.readFile(value, path, lineNo, depth+1, false)
		case "include_dir":
			r.readDir(value, path, lineNo, depth)
		default:
			r.items = append(r.items, pgItem{name: name, value: value, file: path, line: lineNo})
		}
	}
}

// pgConfLine splits one line into name and value ("" and "" for a blank or
// comment line). On a syntax error it returns the offending token ("" at the
// end of the line).
func pgConfLine(line string) (name, value, tok string, ok bool) {
	s := strings.TrimRight(line, "\r")
	i := skipBlank(s, 0)
	if i >= len(s) || s[i] == '#' {
		return "", "", "", true
	}
	// Name: an identifier, possibly qualified (prefix.name).
	j := i
	for j < len(s) && isPGNameChar(s[j], j == i) {
		j++
	}
	if j == i {
		return "", "", tokenAt(s, i), false
	}
	for j < len(s) && s[j] == '.' {
		k := j + 1
		for k < len(s) && isPGNameChar(s[k], k == j+1) {
			k++
		}
		if k == j+1 {
			return "", "", tokenAt(s, j), false
		}
		j = k
	}
	name = s[i:j]
	i = skipBlank(s, j)
	if i < len(s) && s[i] == '=' {
		i = skipBlank(s, i+1)
	}
	if i >= len(s) || s[i] == '#' {
		return "", "", "", false
	}
	value, j, ok = pgConfValue(s, i)
	if !ok {
		return "", "", tokenAt(s, i), false
	}
	i = skipBlank(s, j)
	if i < len(s) && s[i] != '#' {
		return "", "", tokenAt(s, i), false
	}
	return name, value, "", true
}

func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f' || s[i] == '\v') {
		i++
	}
	return i
}

// isPGNameChar: letters (including bytes of non-ASCII characters), "_",
// and after the first character digits and "$".
func isPGNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c >= 0x80:
		return true
	case c >= '0' && c <= '9', c == '$':
		return !first
	}
	return false
}

// tokenAt returns the word at s[i:] for a syntax error message.
func tokenAt(s string, i int) string {
	j := i
	for j < len(s) && !isBlankOrEOL(s[j]) {
		j++
	}
	if j == i {
		return ""
	}
	return s[i:j]
}

func isBlankOrEOL(c byte) bool {
	return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || c == '\n'
}

// pgConfValue reads a value starting at s[i]: a single-quoted string (”
// and backslash escapes), or an unquoted run of the characters PostgreSQL's
// lexer allows in numbers, units and bare words.
func pgConfValue(s string, i int) (string, int, bool) {
	if s[i] == '\'' {
		var b strings.Builder
		j := i + 1
		for j < len(s) {
			c := s[j]
			switch {
			case c == '\'' && j+1 < len(s) && s[j+1] == '\'':
				b.WriteByte('\'')
				j += 2
			case c == '\'':
				return b.String(), j + 1, true
			case c == '\\' && j+1 < len(s):
				j++
				switch d := s[j]; d {
				case 'b':
					b.WriteByte('\b')
				case 'f':
					b.WriteByte('\f')
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case '0', '1', '2', '3', '4', '5', '6', '7':
					v, k := 0, 0
					for k < 3 && j < len(s) && s[j] >= '0' && s[j] <= '7' {
						v = v*8 + int(s[j]-'0')
						j++
						k++
					}
					b.WriteByte(byte(v))
					continue
				default:
					b.WriteByte(d)
				}
				j++
			default:
				b.WriteByte(c)
				j++
			}
		}
		return "", 0, false // unterminated
	}
	j := i
	for j < len(s) && isPGValueChar(s[j]) {
		j++
	}
	if j == i {
		return "", 0, false
	}
	return s[i:j], j, true
}

// isPGValueChar covers PostgreSQL's unquoted values: identifiers and
// unquoted strings (letters, digits, _ $ - . : /), and numbers (sign,
// digits, hex, ".", exponent, unit letters).
func isPGValueChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c >= 0x80:
		return true
	}
	switch c {
	case '_', '$', '-', '+', '.', ':', '/':
		return true
	}
	return false
}

// parsePGConfig reads a PostgreSQL-syntax file (whose text is data) and the
// files it includes, and returns its entries in file order (a later entry
// for the same setting overrides an earlier one). Qualified names
// (prefix.name) are extensions' settings: PostgreSQL keeps them as
// placeholders; lockd has no extensions and skips them.
func parsePGConfig(path, data string) (entries []fileEntry, fatal []*FileError) {
	r := &pgConfReader{}
	r.parse(path, data, 0)
	if len(r.fatal) > 0 {
		return nil, r.fatal
	}
	for _, it := range r.items {
		if strings.Contains(it.name, ".") {
			continue
		}
		i, ok := index(it.name)
		if !ok {
			fatal = append(fatal, newFileError(it.file, it.line, errUnknown(it.name), true))
			continue
		}
		entries = append(entries, fileEntryFor(i, it.name, it.value, it.file, it.line))
	}
	return entries, fatal
}

// fileEntryFor checks value for setting i as read from file at line.
func fileEntryFor(i int, key, value, file string, line int) fileEntry {
	e := fileEntry{idx: i, key: key, raw: value, file: file, line: line}
	d := &Table[i]
	if d.Context == Internal || d.flags&flagDisallowInFile != 0 {
		e.err = newFileError(file, line, errCantChange(d.Name, cantChange), false)
	} else if v, perr := parseValue(d, value); perr != nil {
		e.err = newFileError(file, line, perr, false)
	} else {
		e.val = v
	}
	return e
}
