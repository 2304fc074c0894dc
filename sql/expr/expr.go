package expr

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/types"
)

// The kinds of BoolExpr.
const (
	BoolAnd = pg.BoolExprType_AND_EXPR
	BoolOr  = pg.BoolExprType_OR_EXPR
	BoolNot = pg.BoolExprType_NOT_EXPR
)

// expr is a compiled, typed expression. eval must not retain row.
type Expr interface {
	Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error)
	Type() types.Type
}

// constExpr is a literal (or a folded constant).
type ConstExpr struct {
	T types.Type
	D types.Datum
}

func (c *ConstExpr) Eval(*EvalCtx, []types.Datum) (types.Datum, error) { return c.D, nil }
func (c *ConstExpr) Type() types.Type                                  { return c.T }

// paramExpr is $n; its type is inferred from context at analysis time.
type ParamExpr struct {
	N     int // 0-based
	Types *[]types.Type
}

func (p *ParamExpr) Eval(ec *EvalCtx, _ []types.Datum) (types.Datum, error) {
	return ec.Params[p.N], nil
}
func (p *ParamExpr) Type() types.Type { return (*p.Types)[p.N] }

// colExpr reads column i of the input row. loc is where a reference
// appeared in the query (for error positions), or 0.
type ColExpr struct {
	I   int
	T   types.Type
	Loc int32
}

func (c *ColExpr) Eval(_ *EvalCtx, row []types.Datum) (types.Datum, error) { return row[c.I], nil }
func (c *ColExpr) Type() types.Type                                        { return c.T }

// funcExpr calls fn with evaluated arguments (strict: NULL in → NULL out
// unless lazy or nonStrict is set).
type FuncExpr struct {
	Name      string
	T         types.Type
	Args      []Expr
	NonStrict bool
	Volatile  bool
	Fn        func(ec *EvalCtx, args []types.Datum) (types.Datum, error)
}

func (f *FuncExpr) Type() types.Type { return f.T }

func (f *FuncExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	var buf [4]types.Datum
	vals := buf[:0]
	if len(f.Args) > len(buf) {
		vals = make([]types.Datum, 0, len(f.Args))
	}
	for _, a := range f.Args {
		v, err := a.Eval(ec, row)
		if err != nil {
			return types.Datum{}, err
		}
		if v.Null && !f.NonStrict {
			return types.NullDatum, nil
		}
		vals = append(vals, v)
	}
	return f.Fn(ec, vals)
}

// boolExpr is AND / OR / NOT with SQL three-valued logic.
type BoolExpr struct {
	Op   pg.BoolExprType
	Args []Expr
}

func (b *BoolExpr) Type() types.Type { return types.TypeBool }

func (b *BoolExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	switch b.Op {
	case pg.BoolExprType_NOT_EXPR:
		v, err := b.Args[0].Eval(ec, row)
		if err != nil || v.Null {
			return v, err
		}
		return types.BoolDatum(v.I == 0), nil
	case pg.BoolExprType_AND_EXPR:
		sawNull := false
		for _, a := range b.Args {
			v, err := a.Eval(ec, row)
			if err != nil {
				return types.Datum{}, err
			}
			if v.Null {
				sawNull = true
			} else if v.I == 0 {
				return types.BoolDatum(false), nil
			}
		}
		if sawNull {
			return types.NullDatum, nil
		}
		return types.BoolDatum(true), nil
	default:
		sawNull := false
		for _, a := range b.Args {
			v, err := a.Eval(ec, row)
			if err != nil {
				return types.Datum{}, err
			}
			if v.Null {
				sawNull = true
			} else if v.I != 0 {
				return types.BoolDatum(true), nil
			}
		}
		if sawNull {
			return types.NullDatum, nil
		}
		return types.BoolDatum(false), nil
	}
}

type NullTestExpr struct {
	Arg    Expr
	IsNull bool
}

func (n *NullTestExpr) Type() types.Type { return types.TypeBool }
func (n *NullTestExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	v, err := n.Arg.Eval(ec, row)
	if err != nil {
		return types.Datum{}, err
	}
	return types.BoolDatum(v.Null == n.IsNull), nil
}

type BoolTestExpr struct {
	Arg  Expr
	Kind pg.BoolTestType
}

func (b *BoolTestExpr) Type() types.Type { return types.TypeBool }
func (b *BoolTestExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	v, err := b.Arg.Eval(ec, row)
	if err != nil {
		return types.Datum{}, err
	}
	switch b.Kind {
	case pg.BoolTestType_IS_TRUE:
		return types.BoolDatum(!v.Null && v.I != 0), nil
	case pg.BoolTestType_IS_NOT_TRUE:
		return types.BoolDatum(v.Null || v.I == 0), nil
	case pg.BoolTestType_IS_FALSE:
		return types.BoolDatum(!v.Null && v.I == 0), nil
	case pg.BoolTestType_IS_NOT_FALSE:
		return types.BoolDatum(v.Null || v.I != 0), nil
	case pg.BoolTestType_IS_UNKNOWN:
		return types.BoolDatum(v.Null), nil
	default:
		return types.BoolDatum(!v.Null), nil
	}
}

type CaseExpr struct {
	T       types.Type
	Whens   []Expr
	Results []Expr
	Def     Expr
}

func (c *CaseExpr) Type() types.Type { return c.T }
func (c *CaseExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	for i, w := range c.Whens {
		v, err := w.Eval(ec, row)
		if err != nil {
			return types.Datum{}, err
		}
		if !v.Null && v.I != 0 {
			return c.Results[i].Eval(ec, row)
		}
	}
	if c.Def == nil {
		return types.NullDatum, nil
	}
	return c.Def.Eval(ec, row)
}

type CoalesceExpr struct {
	T    types.Type
	Args []Expr
}

func (c *CoalesceExpr) Type() types.Type { return c.T }
func (c *CoalesceExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	for _, a := range c.Args {
		v, err := a.Eval(ec, row)
		if err != nil || !v.Null {
			return v, err
		}
	}
	return types.NullDatum, nil
}

// inExpr is x IN (list); NULL semantics as SQL.
type InExpr struct {
	Arg  Expr
	List []Expr
	Cmp  func(a, b types.Datum) (int, error)
	Not  bool
}

func (e *InExpr) Type() types.Type { return types.TypeBool }
func (e *InExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	v, err := e.Arg.Eval(ec, row)
	if err != nil || v.Null {
		return types.NullDatum, err
	}
	sawNull := false
	for _, l := range e.List {
		w, err := l.Eval(ec, row)
		if err != nil {
			return types.Datum{}, err
		}
		if w.Null {
			sawNull = true
			continue
		}
		c, err := e.Cmp(v, w)
		if err != nil {
			return types.Datum{}, err
		}
		if c == 0 {
			return types.BoolDatum(!e.Not), nil
		}
	}
	if sawNull {
		return types.NullDatum, nil
	}
	return types.BoolDatum(e.Not), nil
}

// castExpr converts between types.
type CastExpr struct {
	Arg      Expr
	T        types.Type
	Explicit bool
}

func (c *CastExpr) Type() types.Type { return c.T }
func (c *CastExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	v, err := c.Arg.Eval(ec, row)
	if err != nil || v.Null {
		return v, err
	}
	return types.CastDatum(ec.FormatCtx(), v, c.Arg.Type(), c.T, c.Explicit)
}

var TypeRecord = types.Type{OID: types.OIDRecord, Len: -1, Mod: -1, Name: "record"}

type RowExpr struct {
	Args []Expr
}

func (r *RowExpr) Type() types.Type { return TypeRecord }
func (r *RowExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	vals := make([]types.Datum, len(r.Args))
	typs := make([]types.Type, len(r.Args))
	for i, a := range r.Args {
		v, err := a.Eval(ec, row)
		if err != nil {
			return types.Datum{}, err
		}
		vals[i], typs[i] = v, a.Type()
	}
	return MakeRecord(ec, typs, vals), nil
}

// MakeRecord is the record of the values vals of types typs: the fields
// in A and record_out's text in S.
func MakeRecord(ec *EvalCtx, typs []types.Type, vals []types.Datum) types.Datum {
	out := types.Datum{A: vals}
	var b []byte
	b = append(b, '(')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		if v.Null {
			continue
		}
		s := string(types.AppendText(nil, typs[i], v, ec.FormatCtx()))
		if s == "" || strings.ContainsAny(s, "(),\"\\ \t\n") {
			b = append(b, '"')
			for j := 0; j < len(s); j++ {
				if s[j] == '"' || s[j] == '\\' {
					b = append(b, s[j])
				}
				b = append(b, s[j])
			}
			b = append(b, '"')
			continue
		}
		b = append(b, s...)
	}
	out.S = string(append(b, ')'))
	return out
}

// outerExpr reads an expression of an enclosing level's row: depth 1 is
// the level directly enclosing the one being evaluated.
type OuterExpr struct {
	Depth int
	E     Expr
}

func (o *OuterExpr) Type() types.Type { return o.E.Type() }
func (o *OuterExpr) Eval(ec *EvalCtx, _ []types.Datum) (types.Datum, error) {
	n := len(ec.Outer) - o.Depth
	if n < 0 {
		return types.Datum{}, pgerr.New(pgerr.InternalError, "outer reference evaluated without its row")
	}
	return o.E.Eval(ec, ec.Outer[n])
}

// LevelExpr reads an expression of the current level row from inside a
// source that sees rows of its own: the outer side's join key that prunes
// the partitions of a nested loop's inner side and keys their index
// scans, once per outer row. The executor sets ec.Level while it scans
// such a source.
type LevelExpr struct{ E Expr }

func (l *LevelExpr) Type() types.Type { return l.E.Type() }
func (l *LevelExpr) Eval(ec *EvalCtx, _ []types.Datum) (types.Datum, error) {
	if ec.Level == nil {
		return types.Datum{}, pgerr.New(pgerr.InternalError, "outer join key evaluated without its row")
	}
	return l.E.Eval(ec, ec.Level)
}

// Set-returning functions: generate_series and unnest, in FROM and at the
// top level of a select list (where several are run in lock step, as
// PostgreSQL 10+'s ProjectSet does: as many rows as the longest, the
// shorter padded with NULLs).

type SrfExpr struct {
	Name string
	Args []Expr
	T    types.Type
	Gen  func(ec *EvalCtx, args []types.Datum, emit func(types.Datum) error) error
	// Cols are the output columns of a function that returns rows of
	// several columns (OUT parameters, T is record): Gen emits records
	// (MakeRecord), which a FROM item spreads into these columns
	Cols []types.Column
	// While the select list is projected for one of the set's values,
	// eval returns it (a ProjectSet step).
	Cur    types.Datum
	Active bool
}

func (f *SrfExpr) Type() types.Type { return f.T }
func (f *SrfExpr) Eval(*EvalCtx, []types.Datum) (types.Datum, error) {
	if f.Active {
		return f.Cur, nil
	}
	return types.Datum{}, pgerr.NotSupported("set-returning function %s is not supported in this position", f.Name)
}

// srfsIn lists the set-returning calls inside e.
func SrfsIn(e Expr) []*SrfExpr {
	var out []*SrfExpr
	WalkExpr(e, func(x Expr) bool {
		if f, ok := x.(*SrfExpr); ok {
			out = append(out, f)
			return false
		}
		return true
	})
	return out
}

// each evaluates the arguments over row and calls emit per result value.
// A NULL argument yields no rows (the functions are strict).
func (f *SrfExpr) Each(ec *EvalCtx, row []types.Datum, emit func(types.Datum) error) error {
	vals := make([]types.Datum, len(f.Args))
	for i, a := range f.Args {
		v, err := a.Eval(ec, row)
		if err != nil {
			return err
		}
		if v.Null {
			return nil
		}
		vals[i] = v
	}
	return f.Gen(ec, vals, emit)
}
