package difftest

import (
	"fmt"
	"strings"
)

// A query is kept as a small tree of clauses, not only as text, so that
// the minimizer can drop clauses and the comparison knows its shape.

// selectQ is one SELECT.
type selectQ struct {
	distinct bool
	star     bool   // render the select list as *, which items expand
	items    []item // the output columns
	from     []fromItem
	where    []string // conjuncts
	groupBy  []string
	having   []string // conjuncts
	order    []orderKey
	limit    string
	offset   string
}

// item is an output column.
type item struct {
	sql   string
	t     typ
	alias string
	agg   bool // contains an aggregate
	// exact is false where equal values may print differently (avg), so
	// the column is kept out of DISTINCT, set operations and sort keys
	exact bool
}

// orderKey sorts by output column pos (0-based), written as the position,
// the item's expression or its alias.
type orderKey struct {
	pos   int
	desc  bool
	nulls string // "", "first" or "last"
	form  int    // 0 position, 1 expression, 2 alias
}

// fromItem is one comma-separated FROM entry: a relation and the joins
// chained onto it.
type fromItem struct {
	base  *rel
	joins []joinStep
}

type joinStep struct {
	kind string // "join", "left join", "right join", "full join", "cross join"
	rel  *rel
	on   []string
}

// setQ is a set operation of two or three SELECTs, left-associative.
type setQ struct {
	arms   []*selectQ
	ops    []string // "union", "union all", "intersect", ...
	order  []orderKey
	limit  string
	offset string
}

// query is a generated statement with what running and comparing it
// needs.
type query struct {
	num    int // its number in the run
	sel    *selectQ
	set    *setQ
	params []*param
}

// meta is what the comparison needs to know of a query's result.
type meta struct {
	keys    []int // output positions of the ORDER BY keys
	limited bool  // LIMIT or FETCH may cut the last run of equal keys
	offset  bool  // OFFSET may cut the first
}

func (q *query) meta() meta {
	var keys []orderKey
	var m meta
	if q.set != nil {
		keys, m.limited, m.offset = q.set.order, q.set.limit != "", q.set.offset != ""
	} else {
		keys, m.limited, m.offset = q.sel.order, q.sel.limit != "", q.sel.offset != ""
	}
	for _, k := range keys {
		m.keys = append(m.keys, k.pos)
	}
	return m
}

func (q *query) sql() string {
	if q.set != nil {
		return q.set.sql()
	}
	return q.sel.sql()
}

func (s *setQ) sql() string {
	var b strings.Builder
	if len(s.arms) == 3 {
		// left to right, whatever the operators (INTERSECT binds tighter
		// than UNION and EXCEPT)
		b.WriteString("(")
	}
	for i, a := range s.arms {
		if i > 0 {
			b.WriteString(" " + s.ops[i-1] + " ")
		}
		b.WriteString(a.sql())
		if i == 1 && len(s.arms) == 3 {
			b.WriteString(")")
		}
	}
	s.writeTail(&b, s.arms[0])
	return b.String()
}

func (s *setQ) writeTail(b *strings.Builder, first *selectQ) {
	writeOrder(b, s.order, first.items, true)
	writeLimit(b, s.limit, s.offset)
}

func (s *selectQ) sql() string {
	var b strings.Builder
	b.WriteString("select ")
	if s.distinct {
		b.WriteString("distinct ")
	}
	if s.star {
		b.WriteString("*")
	} else {
		for i, it := range s.items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(it.sql)
			if it.alias != "" {
				b.WriteString(" as " + it.alias)
			}
		}
	}
	if len(s.from) > 0 {
		b.WriteString(" from ")
		for i, f := range s.from {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.base.ref())
			for _, j := range f.joins {
				b.WriteString(" " + j.kind + " " + j.rel.ref())
				if j.kind != "cross join" {
					on := "true"
					if len(j.on) > 0 {
						on = strings.Join(j.on, " and ")
					}
					b.WriteString(" on " + on)
				}
			}
		}
	}
	if len(s.where) > 0 {
		b.WriteString(" where " + strings.Join(s.where, " and "))
	}
	if len(s.groupBy) > 0 {
		b.WriteString(" group by " + strings.Join(s.groupBy, ", "))
	}
	if len(s.having) > 0 {
		b.WriteString(" having " + strings.Join(s.having, " and "))
	}
	writeOrder(&b, s.order, s.items, s.star)
	writeLimit(&b, s.limit, s.offset)
	return b.String()
}

func writeOrder(b *strings.Builder, keys []orderKey, items []item, positional bool) {
	for i, k := range keys {
		if i == 0 {
			b.WriteString(" order by ")
		} else {
			b.WriteString(", ")
		}
		it := items[k.pos]
		switch {
		case k.form == 2 && it.alias != "":
			b.WriteString(it.alias)
		case k.form == 1 && !positional:
			b.WriteString(it.sql)
		default:
			fmt.Fprintf(b, "%d", k.pos+1)
		}
		if k.desc {
			b.WriteString(" desc")
		}
		if k.nulls != "" {
			b.WriteString(" nulls " + k.nulls)
		}
	}
}

func writeLimit(b *strings.Builder, limit, offset string) {
	if limit != "" {
		if strings.HasPrefix(limit, "fetch") {
			if offset != "" {
				b.WriteString(" offset " + offset + " rows")
			}
			b.WriteString(" " + limit)
			return
		}
		b.WriteString(" limit " + limit)
	}
	if offset != "" {
		b.WriteString(" offset " + offset)
	}
}

// rel is a FROM entry under an alias: a table or a derived table.
type rel struct {
	alias string
	from  string // a table name or a parenthesized SELECT
	cols  []*rcol
	rows  int // how many rows it has (or at most, for a derived table)
	tab   *table
}

func (r *rel) ref() string { return r.from + " " + r.alias }

// rcol is a column of a rel, with what the generator knows of its values.
type rcol struct {
	name   string
	t      typ
	dom    domain
	ndv    int
	unique bool
	vals   []value // the table's values, to pick literals that match rows
	src    *column // the table column it shows (nil for a count)
}

// cref is a column of a rel in scope.
type cref struct {
	r *rel
	c *rcol
}

func (c cref) sql() string { return c.r.alias + "." + c.c.name }

// param is a parameter of a prepared query, with the values to bind.
type param struct {
	t     typ
	array bool  // an array of t: "{...}"
	count bool  // a LIMIT or OFFSET count
	col   *rcol // where values come from (nil for counts)
}
