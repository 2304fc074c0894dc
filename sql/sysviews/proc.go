package sysviews

import (
	"strings"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

const (
	oidPgProc = 1255
)

// ProcView is pg_proc: the built-in functions (sql/catalog/proc.go), with
// PostgreSQL 15's OIDs and attributes. lockd has no user-defined
// functions. proargdefaults, protrftypes, probin, prosqlbody, proconfig
// and proacl are NULL for every built-in, as in PostgreSQL.
func ProcView() *expr.View {
	return &expr.View{
		Name: "pg_proc", Oid: oidPgProc,
		Cols: Cols(oidPgProc,
			"oid", types.TypeOid, "proname", types.TypeName, "pronamespace", types.TypeOid, "proowner", types.TypeOid,
			"prolang", types.TypeOid, "procost", types.TypeFloat4, "prorows", types.TypeFloat4, "provariadic", types.TypeOid,
			"prosupport", types.TypeRegproc, "prokind", types.TypeChar, "prosecdef", types.TypeBool, "proleakproof", types.TypeBool,
			"proisstrict", types.TypeBool, "proretset", types.TypeBool, "provolatile", types.TypeChar, "proparallel", types.TypeChar,
			"pronargs", types.TypeInt2, "pronargdefaults", types.TypeInt2, "prorettype", types.TypeOid,
			"proargtypes", typeOidVector, "proallargtypes", typeOidArray, "proargmodes", typeCharArray,
			"proargnames", types.TypeTextArray, "proargdefaults", types.TypeNodeTree, "protrftypes", typeOidArray,
			"prosrc", types.TypeText, "probin", types.TypeText, "prosqlbody", types.TypeNodeTree,
			"proconfig", types.TypeTextArray, "proacl", typeAclArray),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			o := func(v uint32) types.Datum { return types.OIDDatum(v) }
			for _, p := range catalog.Procs {
				args := types.Datum{A: make([]types.Datum, len(p.ArgTypes))}
				for i, a := range p.ArgTypes {
					args.A[i] = o(a)
				}
				row := []types.Datum{
					o(p.OID), types.TextDatum(p.Name), o(catalog.NspPgCatalog), o(catalog.BootstrapRoleOID),
					o(p.Lang), types.FloatDatum(p.Cost), types.FloatDatum(p.Rows), o(p.Variadic),
					o(0), charDatum(p.Kind), types.BoolDatum(p.SecDef), types.BoolDatum(p.Leakproof),
					types.BoolDatum(p.Strict), types.BoolDatum(p.RetSet), charDatum(p.Volatile), charDatum(p.Parallel),
					types.IntDatum(int64(p.NArgs)), types.IntDatum(int64(p.NArgDefaults)), o(p.RetType),
					args, arrayText(p.AllArgTypes, true), arrayText(p.ArgModes, false), arrayText(p.ArgNames, false),
					types.NullDatum, types.NullDatum,
					types.TextDatum(p.Src), types.NullDatum, types.NullDatum, types.NullDatum, types.NullDatum,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// arrayText reads a one-dimensional array's text form ("{a,b}") of simple
// elements ("" is NULL).
func arrayText(s string, oids bool) types.Datum {
	if s == "" {
		return types.NullDatum
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	d := types.Datum{A: []types.Datum{}}
	if inner == "" {
		return d
	}
	for _, e := range strings.Split(inner, ",") {
		e = strings.Trim(e, `"`)
		if oids {
			var n int64
			for _, c := range e {
				n = n*10 + int64(c-'0')
			}
			d.A = append(d.A, types.IntDatum(n))
		} else {
			d.A = append(d.A, types.TextDatum(e))
		}
	}
	return d
}

const oidPgLanguage = 2612

// languageView is pg_language: PostgreSQL's built-in languages (internal,
// c, sql). lockd has no procedural languages (PostgreSQL's plpgsql is an
// extension).
func languageView() *expr.View {
	return &expr.View{
		Name: "pg_language", Oid: oidPgLanguage,
		Cols: Cols(oidPgLanguage, "oid", types.TypeOid, "lanname", types.TypeName, "lanowner", types.TypeOid,
			"lanispl", types.TypeBool, "lanpltrusted", types.TypeBool, "lanplcallfoid", types.TypeOid,
			"laninline", types.TypeOid, "lanvalidator", types.TypeOid, "lanacl", typeAclArray),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, l := range []struct {
				oid       uint32
				name      string
				trusted   bool
				validator uint32
			}{{12, "internal", false, 2246}, {13, "c", false, 2247}, {14, "sql", true, 2248}} {
				if err := emit([]types.Datum{types.OIDDatum(l.oid), types.TextDatum(l.name), types.OIDDatum(catalog.BootstrapRoleOID),
					types.BoolDatum(false), types.BoolDatum(l.trusted), types.OIDDatum(0), types.OIDDatum(0),
					types.OIDDatum(l.validator), types.NullDatum}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
