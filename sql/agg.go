package sql

import (
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// Aggregates: count, sum, avg, min, max, bool_and, bool_or, every,
// string_agg and array_agg, with DISTINCT, FILTER and (for the two
// order-sensitive ones) ORDER BY inside the call.

func isAggregate(name string) bool {
	switch name {
	case "count", "sum", "min", "max", "avg", "bool_and", "bool_or", "every", "string_agg", "array_agg":
		return true
	}
	return false
}

// aggRef is one aggregate call; aggResult reads its value for the group.
type aggRef struct {
	name     string
	arg      expr
	arg2     expr // string_agg's delimiter
	filter   expr // FILTER (WHERE ...), or nil
	order    []sortKey
	star     bool
	distinct bool
	t        Type
}

type aggResult struct {
	idx int
	t   Type
}

func (r *aggResult) typ() Type { return r.t }
func (r *aggResult) eval(ec *evalCtx, _ []Datum) (Datum, error) {
	return ec.aggVals[r.idx], nil
}

// groupRef reads the value of a GROUP BY expression for the current group.
type groupRef struct {
	idx int
	t   Type
}

func (g *groupRef) typ() Type { return g.t }
func (g *groupRef) eval(ec *evalCtx, _ []Datum) (Datum, error) {
	return ec.groupVals[g.idx], nil
}

func (a *analyzer) aggregate(name string, fc *pg.FuncCall) (expr, error) {
	if a.aggs == nil {
		where := a.aggCtx
		if where == "" {
			where = "here"
		} else {
			where = "in " + where
		}
		if a.inAgg {
			return nil, posErr(pgerr.New(pgerr.GroupingError, "aggregate function calls cannot be nested"), fc.Location)
		}
		return nil, posErr(pgerr.New(pgerr.GroupingError, "aggregate functions are not allowed %s", where), fc.Location)
	}
	ref := &aggRef{name: name, star: fc.AggStar, distinct: fc.AggDistinct}
	saved := a.aggs
	a.aggs = nil // no nested aggregates
	a.inAgg = true
	defer func() { a.aggs, a.inAgg = saved, false }()
	if fc.AggFilter != nil {
		f, err := a.expr(fc.AggFilter)
		if err != nil {
			return nil, err
		}
		if ref.filter, err = a.asBool(f, "FILTER", fc.Location); err != nil {
			return nil, err
		}
	}
	if ref.star {
		if name != "count" {
			return nil, posErr(pgerr.New(pgerr.WrongObjectType, "%s(*) specified, but %s is not an aggregate function", name, name), fc.Location)
		}
		ref.t = TypeInt8
	} else {
		want := 1
		if name == "string_agg" {
			want = 2
		}
		if len(fc.Args) != want {
			args := make([]expr, 0, len(fc.Args))
			for _, n := range fc.Args {
				e, err := a.expr(n)
				if err != nil {
					return nil, err
				}
				args = append(args, e)
			}
			return nil, noFunction(name, args, fc.Location)
		}
		arg, err := a.expr(fc.Args[0])
		if err != nil {
			return nil, err
		}
		if isUnknown(arg) {
			switch name {
			case "sum", "avg":
				return nil, posErr(pgerr.New(pgerr.AmbiguousFunction, "function %s(unknown) is not unique", name).
					WithHint("Could not choose a best candidate function. You might need to add explicit type casts."), fc.Location)
			}
			if arg, err = a.coerceUnknown(arg, TypeText); err != nil {
				return nil, err
			}
		}
		at := arg.typ()
		cat := categoryOf(at)
		switch name {
		case "count":
			ref.t = TypeInt8
		case "sum":
			switch {
			case at.OID == OIDInt2 || at.OID == OIDInt4:
				ref.t = TypeInt8
			case at.OID == OIDInt8 || cat == catNumeric:
				ref.t = TypeNumeric
			case cat == catFloat:
				ref.t = at // sum(real) is real
			case at.OID == OIDInterval:
				ref.t = TypeInterval
			default:
				return nil, noFunction(name, []expr{arg}, fc.Location)
			}
		case "avg":
			switch {
			case cat == catInt || cat == catNumeric:
				ref.t = TypeNumeric
			case cat == catFloat:
				ref.t = TypeFloat8
			default:
				return nil, noFunction(name, []expr{arg}, fc.Location)
			}
		case "min", "max":
			if isArray(at) {
				return nil, noFunction(name, []expr{arg}, fc.Location)
			}
			ref.t = at
		case "bool_and", "bool_or", "every":
			if arg, err = a.asBool(arg, name, fc.Location); err != nil {
				return nil, err
			}
			ref.t = TypeBool
		case "string_agg":
			if arg, err = a.toText(arg); err != nil {
				return nil, err
			}
			d, err := a.expr(fc.Args[1])
			if err != nil {
				return nil, err
			}
			if ref.arg2, err = a.toText(d); err != nil {
				return nil, err
			}
			ref.t = TypeText
		case "array_agg":
			t, ok := arrayOf(at)
			if !ok {
				return nil, posErr(pgerr.NotSupported("array_agg over %s is not supported", at.Name), fc.Location)
			}
			ref.t = t
		}
		ref.arg = arg
	}
	for _, sb := range fc.AggOrder {
		by := sb.GetSortBy()
		e, err := a.expr(by.Node)
		if err != nil {
			return nil, err
		}
		if isUnknown(e) {
			if e, err = a.coerceUnknown(e, TypeText); err != nil {
				return nil, err
			}
		}
		ref.order = append(ref.order, newSortKey(e, by))
	}
	*saved = append(*saved, ref)
	return &aggResult{idx: len(*saved) - 1, t: ref.t}, nil
}

func newSortKey(e expr, by *pg.SortBy) sortKey {
	k := sortKey{e: e, desc: by.SortbyDir == pg.SortByDir_SORTBY_DESC, cmp: comparator(e.typ())}
	k.nullsFirst = k.desc
	switch by.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		k.nullsFirst = true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		k.nullsFirst = false
	}
	return k
}

// aggState accumulates one aggregate over a group.
type aggState struct {
	ref   *aggRef
	count int64
	i     int64
	f     float64
	n     *numeric
	best  Datum
	seen  map[string]bool
	items []aggItem // string_agg, array_agg
}

type aggItem struct {
	v, delim Datum
	keys     []Datum
}

func (st *aggState) add(ec *evalCtx, row []Datum) error {
	r := st.ref
	if r.filter != nil {
		v, err := r.filter.eval(ec, row)
		if err != nil || v.Null || v.I == 0 {
			return err
		}
	}
	if r.star {
		st.count++
		return nil
	}
	v, err := r.arg.eval(ec, row)
	if err != nil {
		return err
	}
	if v.Null && r.name != "array_agg" {
		return nil
	}
	if r.distinct {
		key := string(appendHashKey([]byte{boolByte(v.Null)}, r.arg.typ(), v))
		if st.seen == nil {
			st.seen = map[string]bool{}
		}
		if st.seen[key] {
			return nil
		}
		st.seen[key] = true
	}
	st.count++
	at := r.arg.typ()
	switch r.name {
	case "sum", "avg":
		switch categoryOf(at) {
		case catInt:
			if r.t.OID == OIDInt8 {
				st.i += v.I // int8 sum of int4 cannot overflow in practice
			} else {
				if st.n == nil {
					st.n = numericFromInt(0)
				}
				st.n = st.n.add(numericFromInt(v.I))
			}
		case catNumeric:
			if st.n == nil {
				st.n = numericFromInt(0)
			}
			st.n = st.n.add(mustNumeric(v.S))
		case catFloat:
			st.f += v.F
		default:
			st.i += v.I
		}
	case "min", "max":
		if st.count == 1 {
			st.best = v
			return nil
		}
		c, err := comparator(at)(v, st.best)
		if err != nil {
			return err
		}
		if (r.name == "min" && c < 0) || (r.name == "max" && c > 0) {
			st.best = v
		}
	case "bool_and", "every":
		if st.count == 1 || v.I == 0 {
			st.best = v
		}
	case "bool_or":
		if st.count == 1 || v.I != 0 {
			st.best = v
		}
	case "string_agg", "array_agg":
		it := aggItem{v: v}
		if r.arg2 != nil {
			if it.delim, err = r.arg2.eval(ec, row); err != nil {
				return err
			}
		}
		for _, k := range r.order {
			kv, err := k.e.eval(ec, row)
			if err != nil {
				return err
			}
			it.keys = append(it.keys, kv)
		}
		st.items = append(st.items, it)
	}
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func (st *aggState) result() (Datum, error) {
	r := st.ref
	if r.name == "count" {
		return intDatum(st.count), nil
	}
	if st.count == 0 {
		return NullDatum, nil
	}
	switch r.name {
	case "sum":
		switch r.t.OID {
		case OIDInt8, OIDInterval:
			return intDatum(st.i), nil
		case OIDFloat8:
			return floatDatum(st.f), nil
		case OIDFloat4:
			return floatDatum(float64(float32(st.f))), nil
		}
		return textDatum(st.n.String()), nil
	case "avg":
		if r.t.OID == OIDFloat8 {
			return floatDatum(st.f / float64(st.count)), nil
		}
		if st.n == nil {
			st.n = numericFromInt(st.i)
		}
		q, err := st.n.div(numericFromInt(st.count))
		if err != nil {
			return Datum{}, err
		}
		return textDatum(q.String()), nil
	case "string_agg", "array_agg":
		if err := sortItems(st.items, r.order); err != nil {
			return Datum{}, err
		}
		if r.name == "array_agg" {
			out := Datum{A: make([]Datum, len(st.items))}
			for i, it := range st.items {
				out.A[i] = it.v
			}
			return out, nil
		}
		var b strings.Builder
		for i, it := range st.items {
			if i > 0 && !it.delim.Null {
				b.WriteString(it.delim.S)
			}
			b.WriteString(it.v.S)
		}
		return textDatum(b.String()), nil
	}
	return st.best, nil
}

func sortItems(items []aggItem, order []sortKey) error {
	if len(order) == 0 {
		return nil
	}
	var sortErr error
	sort.SliceStable(items, func(i, j int) bool {
		c, err := compareKeys(order, items[i].keys, items[j].keys)
		if err != nil {
			sortErr = err
		}
		return c < 0
	})
	return sortErr
}

// compareKeys orders two rows of sort-key values by the keys' directions
// and NULLS FIRST/LAST rules.
func compareKeys(order []sortKey, a, b []Datum) (int, error) {
	for k, key := range order {
		x, y := a[k], b[k]
		switch {
		case x.Null && y.Null:
			continue
		case x.Null:
			if key.nullsFirst {
				return -1, nil
			}
			return 1, nil
		case y.Null:
			if key.nullsFirst {
				return 1, nil
			}
			return -1, nil
		}
		c, err := key.cmp(x, y)
		if err != nil {
			return 0, err
		}
		if c == 0 {
			continue
		}
		if key.desc {
			return -c, nil
		}
		return c, nil
	}
	return 0, nil
}
