package sql

import (
	"math"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// expr is a compiled, typed expression. eval must not retain row.
type expr interface {
	eval(ec *evalCtx, row []Datum) (Datum, error)
	typ() Type
}

// constExpr is a literal (or a folded constant).
type constExpr struct {
	t Type
	d Datum
}

func (c *constExpr) eval(*evalCtx, []Datum) (Datum, error) { return c.d, nil }
func (c *constExpr) typ() Type                             { return c.t }

// paramExpr is $n; its type is inferred from context at analysis time.
type paramExpr struct {
	n     int // 0-based
	types *[]Type
}

func (p *paramExpr) eval(ec *evalCtx, _ []Datum) (Datum, error) { return ec.params[p.n], nil }
func (p *paramExpr) typ() Type                                  { return (*p.types)[p.n] }

// colExpr reads column i of the input row. loc is where a reference
// appeared in the query (for error positions), or 0.
type colExpr struct {
	i   int
	t   Type
	loc int32
}

func (c *colExpr) eval(_ *evalCtx, row []Datum) (Datum, error) { return row[c.i], nil }
func (c *colExpr) typ() Type                                   { return c.t }

// funcExpr calls fn with evaluated arguments (strict: NULL in → NULL out
// unless lazy or nonStrict is set).
type funcExpr struct {
	name      string
	t         Type
	args      []expr
	nonStrict bool
	volatile  bool
	fn        func(ec *evalCtx, args []Datum) (Datum, error)
}

func (f *funcExpr) typ() Type { return f.t }

func (f *funcExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	var buf [4]Datum
	vals := buf[:0]
	if len(f.args) > len(buf) {
		vals = make([]Datum, 0, len(f.args))
	}
	for _, a := range f.args {
		v, err := a.eval(ec, row)
		if err != nil {
			return Datum{}, err
		}
		if v.Null && !f.nonStrict {
			return NullDatum, nil
		}
		vals = append(vals, v)
	}
	return f.fn(ec, vals)
}

// boolExpr is AND / OR / NOT with SQL three-valued logic.
type boolExpr struct {
	op   pg.BoolExprType
	args []expr
}

func (b *boolExpr) typ() Type { return TypeBool }

func (b *boolExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	switch b.op {
	case pg.BoolExprType_NOT_EXPR:
		v, err := b.args[0].eval(ec, row)
		if err != nil || v.Null {
			return v, err
		}
		return boolDatum(v.I == 0), nil
	case pg.BoolExprType_AND_EXPR:
		sawNull := false
		for _, a := range b.args {
			v, err := a.eval(ec, row)
			if err != nil {
				return Datum{}, err
			}
			if v.Null {
				sawNull = true
			} else if v.I == 0 {
				return boolDatum(false), nil
			}
		}
		if sawNull {
			return NullDatum, nil
		}
		return boolDatum(true), nil
	default:
		sawNull := false
		for _, a := range b.args {
			v, err := a.eval(ec, row)
			if err != nil {
				return Datum{}, err
			}
			if v.Null {
				sawNull = true
			} else if v.I != 0 {
				return boolDatum(true), nil
			}
		}
		if sawNull {
			return NullDatum, nil
		}
		return boolDatum(false), nil
	}
}

type nullTestExpr struct {
	arg    expr
	isNull bool
}

func (n *nullTestExpr) typ() Type { return TypeBool }
func (n *nullTestExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	v, err := n.arg.eval(ec, row)
	if err != nil {
		return Datum{}, err
	}
	return boolDatum(v.Null == n.isNull), nil
}

type boolTestExpr struct {
	arg  expr
	kind pg.BoolTestType
}

func (b *boolTestExpr) typ() Type { return TypeBool }
func (b *boolTestExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	v, err := b.arg.eval(ec, row)
	if err != nil {
		return Datum{}, err
	}
	switch b.kind {
	case pg.BoolTestType_IS_TRUE:
		return boolDatum(!v.Null && v.I != 0), nil
	case pg.BoolTestType_IS_NOT_TRUE:
		return boolDatum(v.Null || v.I == 0), nil
	case pg.BoolTestType_IS_FALSE:
		return boolDatum(!v.Null && v.I == 0), nil
	case pg.BoolTestType_IS_NOT_FALSE:
		return boolDatum(v.Null || v.I != 0), nil
	case pg.BoolTestType_IS_UNKNOWN:
		return boolDatum(v.Null), nil
	default:
		return boolDatum(!v.Null), nil
	}
}

type caseExpr struct {
	t       Type
	whens   []expr
	results []expr
	def     expr
}

func (c *caseExpr) typ() Type { return c.t }
func (c *caseExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	for i, w := range c.whens {
		v, err := w.eval(ec, row)
		if err != nil {
			return Datum{}, err
		}
		if !v.Null && v.I != 0 {
			return c.results[i].eval(ec, row)
		}
	}
	if c.def == nil {
		return NullDatum, nil
	}
	return c.def.eval(ec, row)
}

type coalesceExpr struct {
	t    Type
	args []expr
}

func (c *coalesceExpr) typ() Type { return c.t }
func (c *coalesceExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	for _, a := range c.args {
		v, err := a.eval(ec, row)
		if err != nil || !v.Null {
			return v, err
		}
	}
	return NullDatum, nil
}

// inExpr is x IN (list); NULL semantics as SQL.
type inExpr struct {
	arg  expr
	list []expr
	cmp  func(a, b Datum) (int, error)
	not  bool
}

func (e *inExpr) typ() Type { return TypeBool }
func (e *inExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	v, err := e.arg.eval(ec, row)
	if err != nil || v.Null {
		return NullDatum, err
	}
	sawNull := false
	for _, l := range e.list {
		w, err := l.eval(ec, row)
		if err != nil {
			return Datum{}, err
		}
		if w.Null {
			sawNull = true
			continue
		}
		c, err := e.cmp(v, w)
		if err != nil {
			return Datum{}, err
		}
		if c == 0 {
			return boolDatum(!e.not), nil
		}
	}
	if sawNull {
		return NullDatum, nil
	}
	return boolDatum(e.not), nil
}

// compare orders two non-NULL values of a common type.
func comparator(t Type) func(a, b Datum) (int, error) {
	switch categoryOf(t) {
	case catInt, catBool, catDatetime:
		return func(a, b Datum) (int, error) { return cmpInt(a.I, b.I), nil }
	case catFloat:
		return func(a, b Datum) (int, error) { return cmpFloat(a.F, b.F), nil }
	case catNumeric:
		return func(a, b Datum) (int, error) {
			return mustNumeric(a.S).cmp(mustNumeric(b.S)), nil
		}
	}
	if t.OID == OIDInterval {
		return func(a, b Datum) (int, error) { return cmpInt(a.I, b.I), nil }
	}
	if t.OID == OIDBpchar {
		return func(a, b Datum) (int, error) {
			return strings.Compare(strings.TrimRight(a.S, " "), strings.TrimRight(b.S, " ")), nil
		}
	}
	if elem, ok := elemOf(t); ok {
		ec := comparator(elem)
		// element by element; NULL elements sort after others, a shorter
		// array before a longer one with the same prefix (array_cmp)
		return func(a, b Datum) (int, error) {
			for i := 0; i < len(a.A) && i < len(b.A); i++ {
				x, y := a.A[i], b.A[i]
				switch {
				case x.Null && y.Null:
					continue
				case x.Null:
					return 1, nil
				case y.Null:
					return -1, nil
				}
				c, err := ec(x, y)
				if err != nil || c != 0 {
					return c, err
				}
			}
			return cmpInt(int64(len(a.A)), int64(len(b.A))), nil
		}
	}
	return func(a, b Datum) (int, error) { return strings.Compare(a.S, b.S), nil }
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders NaN above everything, as PostgreSQL does.
func cmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// castExpr converts between types.
type castExpr struct {
	arg      expr
	t        Type
	explicit bool
}

func (c *castExpr) typ() Type { return c.t }
func (c *castExpr) eval(ec *evalCtx, row []Datum) (Datum, error) {
	v, err := c.arg.eval(ec, row)
	if err != nil || v.Null {
		return v, err
	}
	return castDatum(ec.formatCtx(), v, c.arg.typ(), c.t, c.explicit)
}

func castDatum(fc *formatCtx, v Datum, from, to Type, explicit bool) (Datum, error) {
	if from.OID == to.OID && (to.Mod < 0 || from.Mod == to.Mod) {
		return v, nil
	}
	if fe, ok := elemOf(from); ok {
		if te, ok := elemOf(to); ok {
			out := Datum{A: make([]Datum, len(v.A))}
			for i, e := range v.A {
				if e.Null {
					out.A[i] = e
					continue
				}
				c, err := castDatum(fc, e, fe, te, explicit)
				if err != nil {
					return Datum{}, err
				}
				out.A[i] = c
			}
			return out, nil
		}
	}
	fromCat, toCat := categoryOf(from), categoryOf(to)
	switch {
	case toCat == catString || to.OID == OIDTextArray && from.OID != OIDTextArray:
		if fromCat == catString || fromCat == catUnknown {
			if to.OID == OIDBpchar || to.OID == OIDVarchar {
				return coerceString(to, v.S, explicit)
			}
			if from.OID == OIDBpchar {
				return textDatum(strings.TrimRight(v.S, " ")), nil
			}
			return v, nil
		}
		s := string(appendText(nil, from, v, fc))
		if from.OID == OIDBool {
			s = "false"
			if v.I != 0 {
				s = "true"
			}
		}
		if to.OID == OIDBpchar || to.OID == OIDVarchar {
			return coerceString(to, s, explicit)
		}
		return textDatum(s), nil
	case fromCat == catString || fromCat == catUnknown:
		return parseText(to, v.S, fc)
	case toCat == catInt:
		switch fromCat {
		case catInt:
			if err := checkIntRange(to, v.I); err != nil {
				return Datum{}, err
			}
			return v, nil
		case catFloat:
			f := math.RoundToEven(v.F)
			if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
				return Datum{}, outOfRange(to)
			}
			if err := checkIntRange(to, int64(f)); err != nil {
				return Datum{}, err
			}
			return intDatum(int64(f)), nil
		case catNumeric:
			i, err := mustNumeric(v.S).toInt64(to)
			return intDatum(i), err
		case catBool:
			if to.OID == OIDInt4 {
				return v, nil
			}
		}
	case toCat == catFloat:
		f := v.F
		switch fromCat {
		case catInt:
			f = float64(v.I)
		case catFloat:
		case catNumeric:
			f = mustNumeric(v.S).toFloat()
		default:
			return Datum{}, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from.Name, to.Name)
		}
		if to.OID == OIDFloat4 {
			if g := float32(f); math.IsInf(float64(g), 0) && !math.IsInf(f, 0) {
				return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
			} else {
				f = float64(g)
			}
		}
		return floatDatum(f), nil
	case toCat == catNumeric:
		var n *numeric
		switch fromCat {
		case catInt:
			n = numericFromInt(v.I)
		case catFloat:
			var err error
			if n, err = numericFromFloat(v.F); err != nil {
				return Datum{}, err
			}
		case catNumeric:
			if to.Mod < 4 {
				return v, nil
			}
			n = mustNumeric(v.S)
		}
		if n != nil {
			r, err := n.applyTypmod(to.Mod)
			if err != nil {
				return Datum{}, err
			}
			return textDatum(r.String()), nil
		}
	case toCat == catBool:
		if fromCat == catInt && from.OID == OIDInt4 {
			return boolDatum(v.I != 0), nil
		}
	case toCat == catDatetime && fromCat == catDatetime:
		return castDatetime(fc, v, from, to), nil
	}
	return Datum{}, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from.Name, to.Name)
}

func castDatetime(fc *formatCtx, v Datum, from, to Type) Datum {
	loc := fc.loc
	switch {
	case from.OID == OIDTimestamptz && to.OID == OIDTimestamp:
		_, off := unixMicroIn(v.I, loc)
		return intDatum(v.I + int64(off)*1000000)
	case from.OID == OIDTimestamp && to.OID == OIDTimestamptz:
		_, off := unixMicroIn(v.I, loc)
		return intDatum(v.I - int64(off)*1000000)
	case to.OID == OIDDate:
		us := v.I
		if from.OID == OIDTimestamptz {
			_, off := unixMicroIn(v.I, loc)
			us += int64(off) * 1000000
		}
		days := (us - pgEpochMicros)
		if days < 0 {
			days -= 86400000000 - 1
		}
		return intDatum(days / 86400000000)
	case from.OID == OIDDate:
		us := v.I*86400000000 + pgEpochMicros
		if to.OID == OIDTimestamptz {
			_, off := unixMicroIn(us, loc)
			us -= int64(off) * 1000000
		}
		return intDatum(us)
	}
	return v
}
