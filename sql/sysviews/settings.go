package sysviews

import (
	"strconv"

	"lockd/guc"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Fixed OIDs of the system views, as in PostgreSQL 15.
const (
	oidPgSettings      = 12009
	oidPgLocks         = 12134
	OidPgStatActivity  = 12222
	oidPgStatExtension = 16000
)

func SettingsView() *expr.View {
	return &expr.View{
		Name: "pg_settings",
		Oid:  oidPgSettings,
		Cols: Cols(oidPgSettings,
			"name", types.TypeText, "setting", types.TypeText, "unit", types.TypeText, "category", types.TypeText,
			"short_desc", types.TypeText, "extra_desc", types.TypeText, "context", types.TypeText, "vartype", types.TypeText,
			"source", types.TypeText, "min_val", types.TypeText, "max_val", types.TypeText, "enumvals", types.TypeTextArray,
			"boot_val", types.TypeText, "reset_val", types.TypeText, "sourcefile", types.TypeText, "sourceline", types.TypeInt4,
			"pending_restart", types.TypeBool),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, r := range ec.B.Settings.Rows() {
				enum := types.NullDatum
				if d, ok := guc.Lookup(r.Name); ok && d.EnumValues != nil {
					enum = types.Datum{A: []types.Datum{}}
					for _, v := range d.EnumValues {
						enum.A = append(enum.A, types.TextDatum(v))
					}
				}
				line := types.NullDatum
				if r.SourceLine != nil {
					n, _ := strconv.Atoi(*r.SourceLine)
					line = types.IntDatum(int64(n))
				}
				row := []types.Datum{
					types.TextDatum(r.Name), types.TextDatum(r.Setting), nullableText(r.Unit), types.TextDatum(r.Category),
					types.TextDatum(r.ShortDesc), nullableText(r.ExtraDesc), types.TextDatum(r.Context), types.TextDatum(r.VarType),
					types.TextDatum(r.Source), nullableText(r.MinVal), nullableText(r.MaxVal), enum,
					types.TextDatum(r.BootVal), types.TextDatum(r.ResetVal), nullableText(r.SourceFile), line,
					types.BoolDatum(r.PendingRestart),
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
