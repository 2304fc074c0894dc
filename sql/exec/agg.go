package exec

import (
	"sort"
	"strings"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// aggState accumulates one aggregate over a group.
type aggState struct {
	ref   *expr.AggRef
	count int64
	i     int64
	f     float64
	n     *types.Numeric
	best  types.Datum
	seen  map[string]bool
	items []aggItem // string_agg, array_agg
}

type aggItem struct {
	v, delim types.Datum
	keys     []types.Datum
}

func (st *aggState) Add(ec *expr.EvalCtx, row []types.Datum) error {
	r := st.ref
	if r.Filter != nil {
		v, err := r.Filter.Eval(ec, row)
		if err != nil || v.Null || v.I == 0 {
			return err
		}
	}
	if r.Star {
		st.count++
		return nil
	}
	v, err := r.Arg.Eval(ec, row)
	if err != nil {
		return err
	}
	if v.Null && r.Name != "array_agg" {
		return nil
	}
	if r.Distinct {
		key := string(types.AppendHashKey([]byte{expr.BoolByte(v.Null)}, r.Arg.Type(), v))
		if st.seen == nil {
			st.seen = map[string]bool{}
		}
		if st.seen[key] {
			return nil
		}
		st.seen[key] = true
	}
	st.count++
	at := r.Arg.Type()
	switch r.Name {
	case "sum", "avg":
		switch types.CategoryOf(at) {
		case types.CatInt:
			if r.T.OID == types.OIDInt8 {
				st.i += v.I // int8 sum of int4 cannot overflow in practice
			} else {
				if st.n == nil {
					st.n = types.NumericFromInt(0)
				}
				st.n = st.n.Add(types.NumericFromInt(v.I))
			}
		case types.CatNumeric:
			if st.n == nil {
				st.n = types.NumericFromInt(0)
			}
			st.n = st.n.Add(types.MustNumeric(v.S))
		case types.CatFloat:
			st.f += v.F
		default:
			st.i += v.I
		}
	case "min", "max":
		if st.count == 1 {
			st.best = v
			return nil
		}
		c, err := types.Comparator(at)(v, st.best)
		if err != nil {
			return err
		}
		if (r.Name == "min" && c < 0) || (r.Name == "max" && c > 0) {
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
		if r.Arg2 != nil {
			if it.delim, err = r.Arg2.Eval(ec, row); err != nil {
				return err
			}
		}
		for _, k := range r.Order {
			kv, err := k.E.Eval(ec, row)
			if err != nil {
				return err
			}
			it.keys = append(it.keys, kv)
		}
		st.items = append(st.items, it)
	}
	return nil
}

func (st *aggState) result() (types.Datum, error) {
	r := st.ref
	if r.Name == "count" {
		return types.IntDatum(st.count), nil
	}
	if st.count == 0 {
		return types.NullDatum, nil
	}
	switch r.Name {
	case "sum":
		switch r.T.OID {
		case types.OIDInt8, types.OIDInterval:
			return types.IntDatum(st.i), nil
		case types.OIDFloat8:
			return types.FloatDatum(st.f), nil
		case types.OIDFloat4:
			return types.FloatDatum(float64(float32(st.f))), nil
		}
		return types.TextDatum(st.n.String()), nil
	case "avg":
		if r.T.OID == types.OIDFloat8 {
			return types.FloatDatum(st.f / float64(st.count)), nil
		}
		if st.n == nil {
			st.n = types.NumericFromInt(st.i)
		}
		q, err := st.n.Div(types.NumericFromInt(st.count))
		if err != nil {
			return types.Datum{}, err
		}
		return types.TextDatum(q.String()), nil
	case "string_agg", "array_agg":
		if err := sortItems(st.items, r.Order); err != nil {
			return types.Datum{}, err
		}
		if r.Name == "array_agg" {
			out := types.Datum{A: make([]types.Datum, len(st.items))}
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
		return types.TextDatum(b.String()), nil
	}
	return st.best, nil
}

func sortItems(items []aggItem, order []expr.SortKey) error {
	if len(order) == 0 {
		return nil
	}
	var sortErr error
	sort.SliceStable(items, func(i, j int) bool {
		c, err := expr.CompareKeys(order, items[i].keys, items[j].keys)
		if err != nil {
			sortErr = err
		}
		return c < 0
	})
	return sortErr
}
