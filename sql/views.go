package sql

import (
	"strconv"

	"lockd/guc"
)

// view is a system view computed at scan time.
type view struct {
	name string
	oid  uint32
	cols []Column
	rows func(ec *evalCtx, emit func(row []Datum) error) error
}

type viewSource struct {
	v     *view
	s     *Backend
	alias string
}

func (v *viewSource) name() string      { return v.alias }
func (v *viewSource) columns() []Column { return v.v.cols }
func (x *Executor) scanView(ec *evalCtx, v *viewSource, fn func([]Datum) error) error {
	return v.v.rows(ec, fn)
}

func cols(oid uint32, spec ...any) []Column {
	var out []Column
	for i := 0; i < len(spec); i += 2 {
		out = append(out, Column{Name: spec[i].(string), Type: spec[i+1].(Type), TableOID: oid, Attnum: int16(i/2 + 1)})
	}
	return out
}

func nullableText(p *string) Datum {
	if p == nil {
		return NullDatum
	}
	return textDatum(*p)
}

// Fixed OIDs of the system views, as in PostgreSQL 15.
const (
	oidPgSettings      = 12009
	oidPgLocks         = 12134
	oidPgStatActivity  = 12222
	oidPgStatExtension = 16000
)

func settingsView() *view {
	return &view{
		name: "pg_settings",
		oid:  oidPgSettings,
		cols: cols(oidPgSettings,
			"name", TypeText, "setting", TypeText, "unit", TypeText, "category", TypeText,
			"short_desc", TypeText, "extra_desc", TypeText, "context", TypeText, "vartype", TypeText,
			"source", TypeText, "min_val", TypeText, "max_val", TypeText, "enumvals", TypeTextArray,
			"boot_val", TypeText, "reset_val", TypeText, "sourcefile", TypeText, "sourceline", TypeInt4,
			"pending_restart", TypeBool),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, r := range ec.s.gucs.Rows() {
				enum := NullDatum
				if d, ok := guc.Lookup(r.Name); ok && d.EnumValues != nil {
					enum = Datum{A: []Datum{}}
					for _, v := range d.EnumValues {
						enum.A = append(enum.A, textDatum(v))
					}
				}
				line := NullDatum
				if r.SourceLine != nil {
					n, _ := strconv.Atoi(*r.SourceLine)
					line = intDatum(int64(n))
				}
				row := []Datum{
					textDatum(r.Name), textDatum(r.Setting), nullableText(r.Unit), textDatum(r.Category),
					textDatum(r.ShortDesc), nullableText(r.ExtraDesc), textDatum(r.Context), textDatum(r.VarType),
					textDatum(r.Source), nullableText(r.MinVal), nullableText(r.MaxVal), enum,
					textDatum(r.BootVal), textDatum(r.ResetVal), nullableText(r.SourceFile), line,
					boolDatum(r.PendingRestart),
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
