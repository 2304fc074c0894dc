package plan

import (
	"strconv"
	"strings"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// Expressions as EXPLAIN prints them: PostgreSQL's ruleutils in its
// non-pretty form — every operator parenthesised, constants with a type
// label unless they read as their type on their own, columns qualified
// by their relation's name when the plan reads more than one relation.

// colName names a level-row position: the relation's name in the plan
// and the column's.
type colName struct{ rel, col string }

// deparser prints the expressions of one query level.
type deparser struct {
	cols    []colName
	prefix  bool           // qualify columns
	force   bool           // qualify them anyway (a reference to another relation's row)
	outer   []*deparser    // enclosing levels, innermost last
	aggs    []*expr.AggRef // for AggResult
	groups  []expr.Expr    // for GroupRef
	targets []expr.Expr    // for output references
	subplan func(*expr.SublinkExpr) string
	fc      *types.FormatCtx
}

func (d *deparser) col(i int, bare bool) string {
	if i < 0 || i >= len(d.cols) {
		return "?column?"
	}
	c := d.cols[i]
	if (d.prefix || d.force) && !bare && c.rel != "" {
		return quoteIdent(c.rel) + "." + quoteIdent(c.col)
	}
	return quoteIdent(c.col)
}

// quoteIdent quotes a name that does not read as itself (quote_identifier).
func quoteIdent(s string) string {
	ok := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// print deparses e.
func (d *deparser) print(e expr.Expr) string {
	var b strings.Builder
	d.write(&b, e)
	return b.String()
}

func (d *deparser) write(b *strings.Builder, e expr.Expr) {
	switch x := e.(type) {
	case *expr.ColExpr:
		b.WriteString(d.col(x.I, false))
	case *expr.LevelExpr:
		// the outer row of a nested loop: PostgreSQL prints the
		// parameter's referent qualified
		saved := d.force
		d.force = true
		d.write(b, x.E)
		d.force = saved
	case *expr.OuterExpr:
		if n := len(d.outer) - x.Depth; n >= 0 && n < len(d.outer) {
			o := d.outer[n]
			saved := o.force
			o.force = true
			o.write(b, x.E)
			o.force = saved
			return
		}
		b.WriteString("?outer?")
	case *expr.ParamExpr:
		b.WriteString("$" + strconv.Itoa(x.N+1))
	case *expr.ConstExpr:
		b.WriteString(d.constant(x.T, x.D))
	case *NullKey:
		b.WriteString("NULL")
	case *expr.BinopExpr:
		b.WriteByte('(')
		d.write(b, x.L)
		b.WriteString(" " + x.Op + " ")
		d.write(b, x.R)
		b.WriteByte(')')
	case *expr.NegExpr:
		b.WriteString("(- ")
		d.write(b, x.Arg)
		b.WriteByte(')')
	case *expr.BoolExpr:
		if x.Op == expr.BoolNot && len(x.Args) == 1 {
			b.WriteString("(NOT ")
			d.write(b, x.Args[0])
			b.WriteByte(')')
			return
		}
		op := " AND "
		if x.Op == expr.BoolOr {
			op = " OR "
		}
		b.WriteByte('(')
		for i, a := range x.Args {
			if i > 0 {
				b.WriteString(op)
			}
			d.write(b, a)
		}
		b.WriteByte(')')
	case *expr.NullTestExpr:
		b.WriteByte('(')
		d.write(b, x.Arg)
		if x.IsNull {
			b.WriteString(" IS NULL)")
		} else {
			b.WriteString(" IS NOT NULL)")
		}
	case *expr.InExpr:
		// an IN list is = ANY of an array: of constants, one array
		// constant
		b.WriteByte('(')
		d.write(b, x.Arg)
		if x.Not {
			b.WriteString(" <> ALL (")
		} else {
			b.WriteString(" = ANY (")
		}
		d.writeArray(b, x.Arg.Type(), x.List)
		b.WriteString("))")
	case *expr.AnyExpr:
		b.WriteByte('(')
		d.write(b, x.Arg)
		q := " ANY ("
		if x.All {
			q = " ALL ("
		}
		b.WriteString(" " + x.Op + q)
		d.write(b, x.Arr)
		b.WriteString("))")
	case *expr.CastExpr:
		b.WriteByte('(')
		d.write(b, x.Arg)
		b.WriteString(")::" + types.FormatType(x.T.OID, x.T.Mod))
	case *expr.FuncExpr:
		d.writeCall(b, x.Name, x.Args)
	case *expr.CoalesceExpr:
		d.writeCall(b, "COALESCE", x.Args)
	case *expr.AggResult:
		if x.Idx < len(d.aggs) {
			d.writeAgg(b, d.aggs[x.Idx])
			return
		}
		b.WriteString("?agg?")
	case *expr.GroupRef:
		if x.Idx < len(d.groups) {
			d.write(b, d.groups[x.Idx])
			return
		}
		b.WriteString("?group?")
	case *outputRef:
		if x.i < len(d.targets) {
			d.write(b, d.targets[x.i])
			return
		}
		b.WriteString("?column?")
	case *expr.SublinkExpr:
		if d.subplan != nil {
			b.WriteString(d.subplan(x))
			return
		}
		b.WriteString("(SubPlan)")
	case *expr.RowExpr:
		d.writeCall(b, "ROW", x.Args)
	default:
		b.WriteString("?expr?")
	}
}

func (d *deparser) writeAgg(b *strings.Builder, a *expr.AggRef) {
	b.WriteString(a.Name + "(")
	switch {
	case a.Star:
		b.WriteByte('*')
	default:
		if a.Distinct {
			b.WriteString("DISTINCT ")
		}
		d.write(b, a.Arg)
		if a.Arg2 != nil {
			b.WriteString(", ")
			d.write(b, a.Arg2)
		}
	}
	b.WriteByte(')')
	if a.Filter != nil {
		b.WriteString(" FILTER (WHERE ")
		d.write(b, a.Filter)
		b.WriteByte(')')
	}
}

// writeArray prints the elements of an IN list as PostgreSQL's analyser
// turns them into an array: an array constant when all are constants,
// ARRAY[...] otherwise.
func (d *deparser) writeArray(b *strings.Builder, elem types.Type, list []expr.Expr) {
	at, _ := types.ArrayOf(elem)
	consts := true
	for _, e := range list {
		if _, ok := e.(*expr.ConstExpr); !ok {
			consts = false
		}
	}
	if consts {
		a := types.Datum{A: make([]types.Datum, len(list))}
		for i, e := range list {
			a.A[i] = e.(*expr.ConstExpr).D
		}
		b.WriteString(quoteLiteral(string(types.AppendText(nil, at, a, d.fc))) + "::" + types.FormatType(at.OID, -1))
		return
	}
	b.WriteString("ARRAY[")
	for i, e := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		d.write(b, e)
	}
	b.WriteByte(']')
}

// constant prints a constant as get_const_expr does: integers and
// decimal numerics that read as their type bare, booleans as true and
// false, everything else quoted with its type.
func (d *deparser) constant(t types.Type, v types.Datum) string {
	tname := types.FormatType(t.OID, -1)
	if v.Null {
		return "NULL::" + tname
	}
	text := string(types.AppendText(nil, t, v, d.fc))
	switch t.OID {
	case types.OIDInt4:
		if !strings.HasPrefix(text, "-") {
			return text
		}
	case types.OIDNumeric:
		if !strings.HasPrefix(text, "-") && strings.ContainsAny(text, ".") {
			return text
		}
	case types.OIDBool:
		if v.I != 0 {
			return "true"
		}
		return "false"
	}
	return quoteLiteral(text) + "::" + tname
}

func quoteLiteral(s string) string {
	if strings.Contains(s, `\`) {
		return "E'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// writeCall prints name(arg, arg, ...).
func (d *deparser) writeCall(b *strings.Builder, name string, args []expr.Expr) {
	b.WriteString(name + "(")
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		d.write(b, a)
	}
	b.WriteByte(')')
}
