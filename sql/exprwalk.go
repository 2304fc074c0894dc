package sql

import (
	"strconv"
	"strings"
)

// Walking compiled expressions: the planner needs to know which FROM
// items an expression reads (to push filters down and pick join keys),
// to recognise GROUP BY expressions inside the select list, and to find
// the columns an aggregated query reads outside its aggregates.

// exprChildren returns pointers to e's sub-expressions of the same query
// level (an outerExpr's inner expression and a subquery's plan belong to
// other levels and are not returned).
func exprChildren(e expr) []*expr {
	switch x := e.(type) {
	case *funcExpr:
		return ptrs(x.args)
	case *boolExpr:
		return ptrs(x.args)
	case *coalesceExpr:
		return ptrs(x.args)
	case *nullTestExpr:
		return []*expr{&x.arg}
	case *boolTestExpr:
		return []*expr{&x.arg}
	case *castExpr:
		return []*expr{&x.arg}
	case *negExpr:
		return []*expr{&x.arg}
	case *binopExpr:
		return []*expr{&x.l, &x.r}
	case *anyExpr:
		return []*expr{&x.arg, &x.arr}
	case *inExpr:
		out := []*expr{&x.arg}
		return append(out, ptrs(x.list)...)
	case *caseExpr:
		out := ptrs(x.whens)
		out = append(out, ptrs(x.results)...)
		if x.def != nil {
			out = append(out, &x.def)
		}
		return out
	case *sublinkExpr:
		if x.test != nil {
			return []*expr{&x.test}
		}
	case *srfExpr:
		return ptrs(x.args)
	}
	return nil
}

func ptrs(es []expr) []*expr {
	out := make([]*expr, len(es))
	for i := range es {
		out[i] = &es[i]
	}
	return out
}

// walkExpr calls fn for e and every same-level sub-expression, parents
// first; fn returns false to skip a node's children.
func walkExpr(e expr, fn func(expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, c := range exprChildren(e) {
		walkExpr(*c, fn)
	}
}

// rewriteExpr replaces sub-expressions bottom-up where fn returns a
// replacement (fn returns nil to keep a node). It returns the new root.
func rewriteExpr(e expr, fn func(expr) expr) expr {
	if r := fn(e); r != nil {
		return r
	}
	for _, c := range exprChildren(e) {
		*c = rewriteExpr(*c, fn)
	}
	return e
}

// exprRefs reports which FROM items e reads at its own level, given the
// item owning each level-row position. opaque is true when e depends on
// the level row in a way the mask cannot describe (a correlated
// subquery): it must then be evaluated once the whole row is available.
func exprRefs(e expr, itemOf []int) (mask uint64, opaque bool) {
	walkExpr(e, func(x expr) bool {
		switch c := x.(type) {
		case *colExpr:
			if c.i < len(itemOf) && itemOf[c.i] >= 0 {
				mask |= 1 << uint(itemOf[c.i])
			}
		case *sublinkExpr:
			if c.correlated {
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
func isVolatile(e expr) bool {
	v := false
	walkExpr(e, func(x expr) bool {
		if f, ok := x.(*funcExpr); ok && f.volatile {
			v = true
		}
		return !v
	})
	return v
}

// exprKey is a structural fingerprint of e: two expressions with the same
// non-empty key compute the same value for the same row. "" means e
// cannot be matched (GROUP BY recognition then falls back to columns).
func exprKey(e expr) string {
	var b strings.Builder
	if !appendExprKey(&b, e) {
		return ""
	}
	return b.String()
}

func appendExprKey(b *strings.Builder, e expr) bool {
	list := func(tag string, es []expr) bool {
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
	case *colExpr:
		b.WriteString("c" + strconv.Itoa(x.i))
	case *outerExpr:
		b.WriteString("o" + strconv.Itoa(x.depth) + ":")
		return appendExprKey(b, x.e)
	case *constExpr:
		b.WriteString("k" + strconv.Itoa(int(x.t.OID)) + ":")
		if x.d.Null {
			b.WriteString("null")
		} else {
			b.Write(appendText(nil, x.t, x.d, nil))
		}
	case *paramExpr:
		b.WriteString("p" + strconv.Itoa(x.n))
	case *funcExpr:
		if x.volatile {
			return false
		}
		return list("f"+x.name, x.args)
	case *binopExpr:
		return list("b"+x.op+strconv.Itoa(int(x.t.OID)), []expr{x.l, x.r})
	case *castExpr:
		return list("t"+strconv.Itoa(int(x.t.OID))+"."+strconv.Itoa(int(x.t.Mod)), []expr{x.arg})
	case *negExpr:
		return list("neg", []expr{x.arg})
	case *boolExpr:
		return list("bool"+strconv.Itoa(int(x.op)), x.args)
	case *coalesceExpr:
		return list("coalesce", x.args)
	case *nullTestExpr:
		return list("isnull"+strconv.FormatBool(x.isNull), []expr{x.arg})
	case *caseExpr:
		args := append(append([]expr(nil), x.whens...), x.results...)
		if x.def != nil {
			args = append(args, x.def)
		}
		return list("case"+strconv.Itoa(len(x.whens)), args)
	default:
		return false
	}
	return true
}
