package guc

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// AlterSystem implements ALTER SYSTEM SET name = value: it validates the
// value and rewrites lockd.auto.conf in the data directory (atomically, by
// writing a temporary file and renaming it). The new value takes effect at
// the next [Registry.Reload], or restart for postmaster settings. Errors are
// *Error: 42704 unknown name, 55P02 internal setting, 22023 bad value.
func (r *Registry) AlterSystem(name, value string) error {
	d, err := alterTarget(name)
	if err != nil {
		return err
	}
	v, perr := parseValue(d, value)
	if perr != nil {
		return perr
	}
	return r.rewriteAutoConf(d, tomlLiteral(d, v))
}

// AlterSystemReset implements ALTER SYSTEM RESET name, and ALTER SYSTEM RESET
// ALL for name "all": the entries are removed from lockd.auto.conf.
func (r *Registry) AlterSystemReset(name string) error {
	if strings.EqualFold(name, "all") {
		return r.rewriteAutoConf(nil, "")
	}
	d, err := alterTarget(name)
	if err != nil {
		return err
	}
	return r.rewriteAutoConf(d, "")
}

func alterTarget(name string) (*Def, *Error) {
	d, ok := Lookup(name)
	if !ok {
		return nil, errUnknown(name)
	}
	if d.Context == Internal || d.flags&flagDisallowInFile != 0 {
		return nil, errCantChange(d.Name, cantChange)
	}
	return d, nil
}

// rewriteAutoConf removes every entry for d (every entry, if d is nil) from
// lockd.auto.conf and, if literal is not "", appends "d.Name = literal". The
// order of the other entries is kept.
func (r *Registry) rewriteAutoConf(d *Def, literal string) error {
	r.mu.RLock()
	dataDir := r.dataDir
	r.mu.RUnlock()
	if dataDir == "" {
		return &Error{Code: CodeInternalError, Message: "ALTER SYSTEM needs a data directory"}
	}
	r.fileMu.Lock()
	defer r.fileMu.Unlock()

	path := filepath.Join(dataDir, AutoConfName)
	type kv struct {
		key, literal string
		line         int
	}
	var keep []kv
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return &Error{Code: CodeConfigFileError, Message: fmt.Sprintf("could not read file \"%s\": %v", path, errors.Unwrap(err))}
	default:
		var m map[string]any
		if _, err := toml.Decode(string(data), &m); err != nil {
			return &Error{Code: CodeConfigFileError, Message: fmt.Sprintf("could not parse contents of file \"%s\"", path), Detail: err.Error()}
		}
		lines := keyLines(string(data))
		for key, raw := range m {
			if d == nil {
				continue
			}
			if od, ok := Lookup(key); ok && od == d {
				continue
			}
			lit, ok := rawLiteral(raw)
			if !ok {
				continue // not a setting value; it would only fail to load
			}
			keep = append(keep, kv{key, lit, lines[key]})
		}
		sort.Slice(keep, func(a, b int) bool { return keep[a].line < keep[b].line })
	}
	var b strings.Builder
	b.WriteString(autoConfHeader)
	for _, e := range keep {
		fmt.Fprintf(&b, "%s = %s\n", tomlKey(e.key), e.literal)
	}
	if d != nil && literal != "" {
		fmt.Fprintf(&b, "%s = %s\n", tomlKey(d.Name), literal)
	}
	return writeFileAtomic(path, b.String())
}

func writeFileAtomic(path, content string) error {
	fail := func(err error) error {
		return &Error{Code: CodeConfigFileError, Message: fmt.Sprintf("could not write file \"%s\": %v", path, err)}
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		os.Remove(tmp)
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	return nil
}

// tomlLiteral writes v as a TOML value a person would write: booleans and
// unit-less numbers bare, values with a unit as their display string
// ("128MB", "1s"; zero and negatives bare), strings and enums quoted.
func tomlLiteral(d *Def, v Value) string {
	switch d.Type {
	case Bool:
		return strconv.FormatBool(v.Bool)
	case Int:
		if d.Unit != "" && v.Int > 0 {
			return tomlQuote(FormatValue(d, v))
		}
		return strconv.FormatInt(v.Int, 10)
	case Real:
		if d.Unit != "" && v.Real > 0 {
			return tomlQuote(FormatValue(d, v))
		}
		if math.IsInf(v.Real, 0) {
			return tomlQuote(FormatValue(d, v))
		}
		s := strconv.FormatFloat(v.Real, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	}
	return tomlQuote(v.Str)
}

// rawLiteral re-encodes a decoded TOML scalar.
func rawLiteral(raw any) (string, bool) {
	switch x := raw.(type) {
	case string:
		return tomlQuote(x), true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", false
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s, true
	}
	return "", false
}

// tomlQuote returns s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlKey returns key bare if TOML allows it, else quoted.
func tomlKey(key string) string {
	if key == "" {
		return `""`
	}
	for i := 0; i < len(key); i++ {
		if !isBareKeyChar(key[i]) {
			return tomlQuote(key)
		}
	}
	return key
}
