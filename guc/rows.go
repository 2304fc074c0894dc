package guc

import (
	"strconv"
	"strings"
)

// ShowRow is one row of SHOW ALL.
type ShowRow struct {
	Name, Setting, Description string
}

// ShowAll implements SHOW ALL: every setting not hidden from it, with its
// display value and short description, sorted by name case-insensitively.
func (s *Session) ShowAll() []ShowRow {
	out := make([]ShowRow, 0, len(sortedIdx))
	for _, i := range sortedIdx {
		d := &Table[i]
		if d.flags&flagNoShowAll != 0 {
			continue
		}
		out = append(out, ShowRow{Name: d.Name, Setting: FormatValue(d, s.vars[i].cur), Description: d.Short})
	}
	return out
}

// SettingRow is one row of pg_settings. Pointer fields are NULL when nil.
type SettingRow struct {
	Name           string
	Setting        string  // base units, no unit suffix ("1000")
	Unit           *string // "ms", "8kB", ...
	Category       string
	ShortDesc      string
	ExtraDesc      *string
	Context        string
	VarType        string
	Source         string
	MinVal         *string // Int and Real only
	MaxVal         *string
	EnumVals       *string // Enum only: a text[] literal, "{a,b,\"c d\"}"
	BootVal        string
	ResetVal       string
	SourceFile     *string // when the value comes from a configuration file
	SourceLine     *string // an integer, when SourceFile is set
	PendingRestart bool
}

// SettingColumns names pg_settings' 17 columns in order, with the type
// names of their PostgreSQL types.
var SettingColumns = [17]struct{ Name, Type string }{
	{"name", "text"}, {"setting", "text"}, {"unit", "text"}, {"category", "text"},
	{"short_desc", "text"}, {"extra_desc", "text"}, {"context", "text"}, {"vartype", "text"},
	{"source", "text"}, {"min_val", "text"}, {"max_val", "text"}, {"enumvals", "text[]"},
	{"boot_val", "text"}, {"reset_val", "text"}, {"sourcefile", "text"}, {"sourceline", "int4"},
	{"pending_restart", "bool"},
}

// Values returns the row as 17 text values in pg_settings' column order
// (nil for NULL; pending_restart as "t"/"f").
func (r *SettingRow) Values() [17]*string {
	str := func(s string) *string { return &s }
	pending := "f"
	if r.PendingRestart {
		pending = "t"
	}
	return [17]*string{
		str(r.Name), str(r.Setting), r.Unit, str(r.Category), str(r.ShortDesc), r.ExtraDesc,
		str(r.Context), str(r.VarType), str(r.Source), r.MinVal, r.MaxVal, r.EnumVals,
		str(r.BootVal), str(r.ResetVal), r.SourceFile, r.SourceLine, str(pending),
	}
}

// Rows implements the pg_settings view for this session, sorted by name
// case-insensitively, without the settings hidden from SHOW ALL.
func (s *Session) Rows() []SettingRow {
	str := func(s string) *string { return &s }
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	out := make([]SettingRow, 0, len(sortedIdx))
	for _, i := range sortedIdx {
		d := &Table[i]
		if d.flags&flagNoShowAll != 0 {
			continue
		}
		sv := &s.vars[i]
		rv := &s.r.vars[i]
		row := SettingRow{
			Name:           d.Name,
			Setting:        rawSetting(d, sv.cur),
			Category:       d.Category,
			ShortDesc:      d.Short,
			Context:        d.Context.String(),
			VarType:        d.Type.String(),
			Source:         sv.src.String(),
			BootVal:        rawSetting(d, d.boot),
			ResetVal:       rawSetting(d, sv.reset),
			PendingRestart: rv.pendingRestart,
		}
		if d.Unit != "" {
			row.Unit = str(d.Unit)
		}
		if d.Extra != "" {
			row.ExtraDesc = str(d.Extra)
		}
		switch d.Type {
		case Int:
			row.MinVal = str(strconv.FormatInt(int64(d.Min), 10))
			row.MaxVal = str(strconv.FormatInt(int64(d.Max), 10))
		case Real:
			row.MinVal = str(formatG(d.Min))
			row.MaxVal = str(formatG(d.Max))
		case Enum:
			row.EnumVals = str(textArray(d.EnumValues))
		}
		if sv.src == SourceFile && rv.file != "" {
			row.SourceFile = str(rv.file)
			row.SourceLine = str(strconv.Itoa(rv.line))
		}
		out = append(out, row)
	}
	return out
}

// textArray writes a PostgreSQL text[] literal, quoting elements that need
// it ("{serializable,\"repeatable read\"}").
func textArray(elems []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for k, e := range elems {
		if k > 0 {
			b.WriteByte(',')
		}
		if e == "" || strings.EqualFold(e, "NULL") || strings.ContainsAny(e, " \t\n\r\f\v{},\"\\") {
			b.WriteByte('"')
			for _, c := range e {
				if c == '"' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteRune(c)
			}
			b.WriteByte('"')
		} else {
			b.WriteString(e)
		}
	}
	b.WriteByte('}')
	return b.String()
}
