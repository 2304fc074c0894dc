package sysviews

import (
	"net"
	"os"
	"path/filepath"
	"sort"

	"lockd/auth"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// oidPgHbaFileRules is the view's OID in lockd (PostgreSQL assigns view
// OIDs at initdb).
const oidPgHbaFileRules = 12010

// pgHbaFileRulesView is pg_hba_file_rules: the hba file as it reads now,
// not the rules in force (as in PostgreSQL, it shows what a reload would
// load, with the errors that would keep it from loading). Superusers
// only. No hba_file: no rows (every connection is trusted).
func pgHbaFileRulesView() *expr.View {
	return &expr.View{
		Name: "pg_hba_file_rules", Oid: oidPgHbaFileRules,
		Cols: Cols(oidPgHbaFileRules,
			"line_number", types.TypeInt4, "type", types.TypeText, "database", types.TypeTextArray, "user_name", types.TypeTextArray,
			"address", types.TypeText, "netmask", types.TypeText, "auth_method", types.TypeText, "options", types.TypeTextArray,
			"error", types.TypeText),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if !ec.B.Superuser() {
				return pgerr.New(pgerr.InsufficientPrivilege, "permission denied for view pg_hba_file_rules")
			}
			path := ec.B.Settings.String("hba_file")
			if path == "" {
				return nil
			}
			if !filepath.IsAbs(path) {
				path = filepath.Join(ec.B.DataDir, path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return pgerr.New(pgerr.UndefinedFile, "could not open configuration file \"%s\": %v", path, err)
			}
			h := auth.ParseHBA(path, string(data))
			type row struct {
				line int
				d    []types.Datum
			}
			var rows []row
			null := types.NullDatum
			for _, l := range h.Lines {
				addr, mask := null, null
				switch {
				case l.AddrKind != "":
					addr = types.TextDatum(l.AddrKind)
				case l.Net != nil:
					addr = types.TextDatum(net.ParseIP(hostOf(l.Address)).String())
					mask = types.TextDatum(net.IP(l.Net.Mask).String())
				}
				opts := null
				if len(l.Options) > 0 {
					opts = textArray(l.Options)
				}
				rows = append(rows, row{l.LineNo, []types.Datum{types.IntDatum(int64(l.LineNo)), types.TextDatum(l.Type),
					tokenArray(l.Database), tokenArray(l.User), addr, mask, types.TextDatum(l.Method), opts, null}})
			}
			for _, e := range h.Errors {
				rows = append(rows, row{e.LineNo, []types.Datum{types.IntDatum(int64(e.LineNo)), null, null, null, null, null, null, null,
					types.TextDatum(e.Msg)}})
			}
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].line < rows[j].line })
			for _, r := range rows {
				if err := emit(r.d); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func hostOf(addr string) string {
	for i := 0; i < len(addr); i++ {
		if addr[i] == '/' {
			return addr[:i]
		}
	}
	return addr
}

func tokenArray(ts []auth.HBAToken) types.Datum {
	d := types.Datum{A: make([]types.Datum, len(ts))}
	for i, t := range ts {
		d.A[i] = types.TextDatum(t.String())
	}
	return d
}

func textArray(ss []string) types.Datum {
	d := types.Datum{A: make([]types.Datum, len(ss))}
	for i, s := range ss {
		d.A[i] = types.TextDatum(s)
	}
	return d
}
