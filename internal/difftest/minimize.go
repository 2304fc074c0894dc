package difftest

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// maxMinimizeRuns bounds the candidate queries minimize tries.
const maxMinimizeRuns = 300

// minimize shrinks a query that differs: it drops clauses (WHERE and
// HAVING conjuncts, ON conditions, joined relations nothing else names,
// output columns, ORDER BY keys, LIMIT, OFFSET, DISTINCT, set operation
// arms) one at a time, keeping each drop after which the servers still
// differ, until none is left to drop. It returns the smallest query's
// text.
func (r *runner) minimize(ctx context.Context, q *query, extended bool) string {
	cur := q
	runs := 0
	for runs < maxMinimizeRuns {
		improved := false
		for _, cand := range reductions(cur) {
			if runs++; runs > maxMinimizeRuns {
				break
			}
			var l, p *result
			if extended {
				l, p = r.execParams(ctx, cand.sql())
			} else {
				l, p = r.exec(ctx, cand.sql())
			}
			if l.other != nil || p.other != nil {
				return cand.sql() + " (a connection failed on this one)"
			}
			if o, _ := compare(cand.meta(), l, p); o == different {
				cur, improved = cand, true
				break
			}
		}
		if !improved {
			break
		}
	}
	return cur.sql()
}

// reductions are the queries one step smaller than q.
func reductions(q *query) []*query {
	var out []*query
	if q.set != nil {
		for _, a := range q.set.arms {
			out = append(out, &query{num: q.num, sel: cloneSelect(a)})
		}
		if len(q.set.arms) == 3 {
			s := cloneSet(q.set)
			s.arms, s.ops = s.arms[:2], s.ops[:1]
			out = append(out, &query{num: q.num, set: s})
		}
		for _, f := range tailReductions(q.set.order, q.set.limit, q.set.offset) {
			s := cloneSet(q.set)
			f(&s.order, &s.limit, &s.offset)
			out = append(out, &query{num: q.num, set: s})
		}
		return out
	}
	for _, s := range selectReductions(q.sel) {
		out = append(out, &query{num: q.num, sel: s})
	}
	return out
}

func selectReductions(q *selectQ) []*selectQ {
	var out []*selectQ
	add := func(f func(c *selectQ) bool) {
		c := cloneSelect(q)
		if f(c) {
			out = append(out, c)
		}
	}
	for i := range q.where {
		add(func(c *selectQ) bool { c.where = slices.Delete(c.where, i, i+1); return true })
	}
	for i := range q.having {
		add(func(c *selectQ) bool { c.having = slices.Delete(c.having, i, i+1); return true })
	}
	for _, f := range tailReductions(q.order, q.limit, q.offset) {
		add(func(c *selectQ) bool { f(&c.order, &c.limit, &c.offset); return true })
	}
	if q.distinct {
		add(func(c *selectQ) bool { c.distinct = false; return true })
	}
	if q.star {
		add(func(c *selectQ) bool { c.star = false; return true })
	}
	positional := slices.ContainsFunc(q.groupBy, func(k string) bool { _, err := strconv.Atoi(k); return err == nil })
	if !q.star && !positional && len(q.items) > 1 {
		for i := range q.items {
			add(func(c *selectQ) bool {
				c.items = slices.Delete(c.items, i, i+1)
				var keys []orderKey
				for _, k := range c.order {
					switch {
					case k.pos == i:
						continue
					case k.pos > i:
						k.pos--
					}
					keys = append(keys, k)
				}
				c.order = keys
				if len(keys) == 0 {
					c.limit, c.offset = "", ""
				}
				return true
			})
		}
	}
	for fi, f := range q.from {
		for ji, j := range f.joins {
			for oi := range j.on {
				add(func(c *selectQ) bool {
					on := &c.from[fi].joins[ji].on
					*on = slices.Delete(*on, oi, oi+1)
					return true
				})
			}
			if j.kind != "join" && j.kind != "cross join" {
				add(func(c *selectQ) bool { c.from[fi].joins[ji].kind = "join"; return true })
			}
			add(func(c *selectQ) bool {
				c.from[fi].joins = slices.Delete(c.from[fi].joins, ji, ji+1)
				return !c.names(j.rel.alias)
			})
		}
		if len(q.from) > 1 {
			add(func(c *selectQ) bool {
				c.from = slices.Delete(c.from, fi, fi+1)
				for _, r := range append([]*rel{f.base}, joinedRels(f)...) {
					if c.names(r.alias) {
						return false
					}
				}
				return true
			})
		}
	}
	return out
}

// tailReductions drop the ORDER BY (with LIMIT and OFFSET), one of its
// keys, the LIMIT or the OFFSET.
func tailReductions(order []orderKey, limit, offset string) []func(*[]orderKey, *string, *string) {
	var out []func(*[]orderKey, *string, *string)
	if len(order) > 0 {
		out = append(out, func(o *[]orderKey, l, off *string) { *o, *l, *off = nil, "", "" })
	}
	if len(order) > 1 {
		for i := range order {
			out = append(out, func(o *[]orderKey, _, _ *string) { *o = slices.Delete(slices.Clone(*o), i, i+1) })
		}
	}
	if limit != "" {
		out = append(out, func(_ *[]orderKey, l, _ *string) { *l = "" })
	}
	if offset != "" {
		out = append(out, func(_ *[]orderKey, _, off *string) { *off = "" })
	}
	return out
}

// names reports whether any clause of q (but FROM entries' own text)
// names a column of alias.
func (q *selectQ) names(alias string) bool {
	ref := alias + "."
	var texts []string
	texts = append(texts, q.where...)
	texts = append(texts, q.having...)
	texts = append(texts, q.groupBy...)
	for _, it := range q.items {
		texts = append(texts, it.sql)
	}
	for _, f := range q.from {
		for _, j := range f.joins {
			texts = append(texts, j.on...)
		}
	}
	return slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, ref) })
}

func cloneSelect(q *selectQ) *selectQ {
	c := *q
	c.items = slices.Clone(q.items)
	c.where = slices.Clone(q.where)
	c.groupBy = slices.Clone(q.groupBy)
	c.having = slices.Clone(q.having)
	c.order = slices.Clone(q.order)
	c.from = slices.Clone(q.from)
	for i := range c.from {
		c.from[i].joins = slices.Clone(c.from[i].joins)
		for j := range c.from[i].joins {
			c.from[i].joins[j].on = slices.Clone(c.from[i].joins[j].on)
		}
	}
	return &c
}

func cloneSet(s *setQ) *setQ {
	c := *s
	c.arms = slices.Clone(s.arms)
	c.ops = slices.Clone(s.ops)
	c.order = slices.Clone(s.order)
	return &c
}
