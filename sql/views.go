package sql

import (
	"context"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/guc"
	"lockd/pgerr"
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
	s     *Session
	alias string
}

func (v *viewSource) name() string      { return v.alias }
func (v *viewSource) columns() []Column { return v.v.cols }
func (v *viewSource) scan(ec *evalCtx, fn func([]Datum) error) error {
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

// functionSource supports set-returning functions in FROM.
func (s *Session) functionSource(rf *pg.RangeFunction) (rowSource, error) {
	if len(rf.Functions) != 1 || rf.Lateral || rf.Ordinality || rf.IsRowsfrom {
		return nil, pgerr.NotSupported("this form of function in FROM is not supported")
	}
	fc := rf.Functions[0].GetList().GetItems()[0].GetFuncCall()
	if fc == nil {
		return nil, pgerr.NotSupported("this form of function in FROM is not supported")
	}
	_, name := qualifiedName(fc.Funcname)
	if strings.ToLower(name) != "generate_series" {
		return nil, posErr(pgerr.NotSupported("function %s in FROM is not supported", name), fc.Location)
	}
	if len(fc.Args) < 2 || len(fc.Args) > 3 {
		return nil, posErr(pgerr.New(pgerr.UndefinedFunction, "function generate_series with %d arguments does not exist", len(fc.Args)), fc.Location)
	}
	var params []Type // generate_series bounds must be constants here
	a := newAnalyzer(s, &params)
	var args []expr
	for _, n := range fc.Args {
		e, err := a.expr(n)
		if err != nil {
			return nil, err
		}
		items, _, err := a.unify([]expr{e}, "generate_series", fc.Location)
		if err != nil {
			return nil, err
		}
		args = append(args, items[0])
	}
	t := TypeInt4
	for _, e := range args {
		if e.typ().OID == OIDInt8 {
			t = TypeInt8
		} else if categoryOf(e.typ()) != catInt {
			return nil, pgerr.NotSupported("generate_series over %s is not supported", e.typ().Name)
		}
	}
	colName := "generate_series"
	alias := "generate_series"
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
		colName = alias
		if len(rf.Alias.Colnames) > 0 {
			colName = nodeName(rf.Alias.Colnames[0])
		}
	}
	return &seriesSource{alias: alias, col: Column{Name: colName, Type: t}, args: args}, nil
}

type seriesSource struct {
	alias string
	col   Column
	args  []expr
}

func (g *seriesSource) name() string      { return g.alias }
func (g *seriesSource) columns() []Column { return []Column{g.col} }
func (g *seriesSource) scan(ec *evalCtx, fn func([]Datum) error) error {
	var v [3]int64
	v[2] = 1
	for i, a := range g.args {
		d, err := a.eval(ec, nil)
		if err != nil {
			return err
		}
		if d.Null {
			return nil
		}
		v[i] = d.I
	}
	if v[2] == 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	row := make([]Datum, 1)
	for i := v[0]; (v[2] > 0 && i <= v[1]) || (v[2] < 0 && i >= v[1]); i += v[2] {
		if i&1023 == 0 && ec.ctx.Err() != nil {
			return context.Cause(ec.ctx)
		}
		row[0] = intDatum(i)
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}
