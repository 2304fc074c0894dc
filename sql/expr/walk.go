package expr

import (
	"strconv"
	"strings"

	"lockd/sql/types"
)

// Walking compiled expressions: the planner needs to know which FROM
// items an expression reads (to push filters down and pick join keys),
// to recognise GROUP BY expressions inside the select list, and to find
// the columns an aggregated query reads outside its aggregates.

// exprChildren returns pointers to e's sub-expressions of the same query
// level (an outerExpr's inner expression and a subquery's plan belong to
// other levels and are not returned).
func ExprChildren(e Expr) []*Expr {
	switch x := e.(type) {
	case *FuncExpr:
		return ptrs(x.Args)
	case *BoolExpr:
		return ptrs(x.Args)
	case *CoalesceExpr:
		return ptrs(x.Args)
	case *NullTestExpr:
		return []*Expr{&x.Arg}
	case *BoolTestExpr:
		return []*Expr{&x.Arg}
	case *CastExpr:
		return []*Expr{&x.Arg}
	case *NegExpr:
		return []*Expr{&x.Arg}
	case *BinopExpr:
		return []*Expr{&x.L, &x.R}
	case *AnyExpr:
		return []*Expr{&x.Arg, &x.Arr}
	case *InExpr:
		out := []*Expr{&x.Arg}
		return append(out, ptrs(x.List)...)
	case *CaseExpr:
		out := ptrs(x.Whens)
		out = append(out, ptrs(x.Results)...)
		if x.Def != nil {
			out = append(out, &x.Def)
		}
		return out
	case *SublinkExpr:
		if x.Test != nil {
			return []*Expr{&x.Test}
		}
	case *SrfExpr:
		return ptrs(x.Args)
	case *RowExpr:
		return ptrs(x.Args)
	}
	return nil
}

func ptrs(es []Expr) []*Expr {
	out := make([]*Expr, len(es))
	for i := range es {
		out[i] = &es[i]
	}
	return out
}

// walkExpr calls fn for e and every same-level sub-expression, parents
// first; fn returns false to skip a node's children.
func WalkExpr(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, c := range ExprChildren(e) {
		WalkExpr(*c, fn)
	}
}

// rewriteExpr replaces sub-expressions bottom-up where fn returns a
// replacement (fn returns nil to keep a node). It returns the new root.
func RewriteExpr(e Expr, fn func(Expr) Expr) Expr {
	if r := fn(e); r != nil {
		return r
	}
	for _, c := range ExprChildren(e) {
		*c = RewriteExpr(*c, fn)
	}
	return e
}

// exprRefs reports which FROM items e reads at its own level, given the
// item owning each level-row position — for a correlated subquery, the
// items its references to this level read. opaque is true when e depends
// on the level row in a way the mask cannot describe (a subquery whose
// references are not known): it must then be evaluated once the whole
// row is available.
func ExprRefs(e Expr, itemOf []int) (mask uint64, opaque bool) {
	WalkExpr(e, func(x Expr) bool {
		switch c := x.(type) {
		case *ColExpr:
			if c.I < len(itemOf) && itemOf[c.I] >= 0 {
				mask |= 1 << uint(itemOf[c.I])
			}
		case *SublinkExpr:
			// a correlated subquery depends on the items its parameters
			// at this level read (those further out are fixed while this
			// level runs); with none here, or not known, on the whole row
			if !c.Correlated {
				break
			}
			here := 0
			for _, p := range c.Params {
				if _, out := p.(*OuterExpr); out {
					continue
				}
				here++
				m, op := ExprRefs(p, itemOf)
				if m == 0 || op {
					opaque = true
				}
				mask |= m
			}
			if !c.ParamsKnown || here == 0 {
				opaque = true
			}
		}
		return true
	})
	return mask, opaque
}

// isVolatile reports whether e calls a volatile function (random(),
// clock_timestamp(), ...), so it may not be evaluated fewer times than
// the query asks.
func IsVolatile(e Expr) bool {
	v := false
	WalkExpr(e, func(x Expr) bool {
		if f, ok := x.(*FuncExpr); ok && f.Volatile {
			v = true
		}
		return !v
	})
	return v
}

// exprKey is a structural fingerprint of e: two expressions with the same
// non-empty key compute the same value for the same row. "" means e
// cannot be matched (GROUP BY recognition then falls back to columns).
func ExprKey(e Expr) string {
	var b strings.Builder
	if !appendExprKey(&b, e) {
		return ""
	}
	return b.String()
}

func appendExprKey(b *strings.Builder, e Expr) bool {
	list := func(tag string, es []Expr) bool {
		b.WriteString(tag)
		b.WriteByte('(')
		for i, x := range es {
			if i > 0 {
				b.WriteByte(',')
			}
			if !appendExprKey(b, x) {
				return false
			}
		}
		b.WriteByte(')')
		return true
	}
	switch x := e.(type) {
	case *ColExpr:
		b.WriteString("c" + strconv.Itoa(x.I))
	case *OuterExpr:
		b.WriteString("o" + strconv.Itoa(x.Depth) + ":")
		return appendExprKey(b, x.E)
	case *ConstExpr:
		b.WriteString("k" + strconv.Itoa(int(x.T.OID)) + ":")
		if x.D.Null {
			b.WriteString("null")
		} else {
			b.Write(types.AppendText(nil, x.T, x.D, nil))
		}
	case *ParamExpr:
		b.WriteString("p" + strconv.Itoa(x.N))
	case *FuncExpr:
		if x.Volatile {
			return false
		}
		return list("f"+x.Name, x.Args)
	case *BinopExpr:
		return list("b"+x.Op+strconv.Itoa(int(x.T.OID)), []Expr{x.L, x.R})
	case *CastExpr:
		return list("t"+strconv.Itoa(int(x.T.OID))+"."+strconv.Itoa(int(x.T.Mod)), []Expr{x.Arg})
	case *NegExpr:
		return list("neg", []Expr{x.Arg})
	case *BoolExpr:
		return list("bool"+strconv.Itoa(int(x.Op)), x.Args)
	case *CoalesceExpr:
		return list("coalesce", x.Args)
	case *NullTestExpr:
		return list("isnull"+strconv.FormatBool(x.IsNull), []Expr{x.Arg})
	case *CaseExpr:
		args := append(append([]Expr(nil), x.Whens...), x.Results...)
		if x.Def != nil {
			args = append(args, x.Def)
		}
		return list("case"+strconv.Itoa(len(x.Whens)), args)
	case *BoolTestExpr:
		return list("btest"+strconv.Itoa(int(x.Kind)), []Expr{x.Arg})
	case *InExpr:
		return list("in"+strconv.FormatBool(x.Not), append([]Expr{x.Arg}, x.List...))
	case *AnyExpr:
		return list("any"+x.Op+strconv.FormatBool(x.All), []Expr{x.Arg, x.Arr})
	case *RowExpr:
		return list("row", x.Args)
	case *SublinkExpr:
		if x.Key == "" {
			return false
		}
		args := []Expr{}
		if x.Test != nil {
			args = append(args, x.Test)
		}
		return list("sub"+strconv.Itoa(int(x.Kind))+":"+strconv.Quote(x.Key), args)
	default:
		return false
	}
	return true
}
