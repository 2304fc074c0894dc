package exec

import (
	"math/big"
	"math/bits"
	"sort"
	"strings"

	"lockd/sql/expr"
	"lockd/sql/types"
)

// aggState accumulates one aggregate over a group.
type aggState struct {
	ref   *expr.AggRef
	kind  aggKind // what Add does, decided at the first row
	cmp   func(a, b types.Datum) (int, error)
	count int64
	i     int64
	f     float64
	n     *types.Numeric
	wide  int128 // integer sums whose result is numeric
	best  types.Datum
	seen  map[string]bool
	items []aggItem // string_agg, array_agg
}

// aggKind is how an aggregate accumulates, so that Add does not look at
// the aggregate's name and types for every row.
type aggKind uint8

const (
	aggUnset    aggKind = iota
	aggSumInt           // sum of int2/int4 (an int8 result), of intervals
	aggSumWide          // sum/avg of integers with a numeric result
	aggSumNum           // sum/avg of numeric
	aggSumFloat         // sum/avg of floats
	aggMin
	aggMax
	aggBoolAnd
	aggBoolOr
	aggItems // string_agg, array_agg
	aggCount // count(x): the count alone
)

func (st *aggState) setKind() {
	r := st.ref
	at := r.Arg.Type()
	switch r.Name {
	case "sum", "avg":
		switch types.CategoryOf(at) {
		case types.CatInt:
			if r.T.OID == types.OIDInt8 {
				st.kind = aggSumInt
			} else {
				st.kind = aggSumWide
			}
		case types.CatNumeric:
			st.kind = aggSumNum
		case types.CatFloat:
			st.kind = aggSumFloat
		default:
			st.kind = aggSumInt
		}
	case "min", "max":
		st.kind, st.cmp = aggMin, types.Comparator(at)
		if r.Name == "max" {
			st.kind = aggMax
		}
	case "bool_and", "every":
		st.kind = aggBoolAnd
	case "bool_or":
		st.kind = aggBoolOr
	case "string_agg", "array_agg":
		st.kind = aggItems
	default:
		st.kind = aggCount
	}
}

// int128 is a two's complement 128-bit integer: sums of int8 values
// cannot overflow it before 2^64 rows.
type int128 struct {
	hi int64
	lo uint64
}

func (x *int128) add(v int64) {
	lo, carry := bits.Add64(x.lo, uint64(v), 0)
	x.lo = lo
	x.hi += v>>63 + int64(carry) // v>>63 is the sign extension (0 or -1)
}

func (x int128) numeric() *types.Numeric {
	n := &types.Numeric{}
	n.Coef.SetInt64(x.hi)
	n.Coef.Lsh(&n.Coef, 64)
	var lo big.Int
	lo.SetUint64(x.lo)
	n.Coef.Add(&n.Coef, &lo)
	return n
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
	var v types.Datum
	if c, ok := r.Arg.(*expr.ColExpr); ok {
		// the common case: a column, read in place for the integer
		// sums and counts of a column (no copy of the value)
		if d := &row[c.I]; !r.Distinct {
			switch {
			case d.Null && st.kind != aggUnset && st.kind != aggItems:
				return nil
			case st.kind == aggSumInt:
				st.count++
				st.i += d.I
				return nil
			case st.kind == aggSumWide:
				st.count++
				st.wide.add(d.I)
				return nil
			case st.kind == aggCount:
				st.count++
				return nil
			}
		}
		v = row[c.I]
	} else {
		var err error
		if v, err = r.Arg.Eval(ec, row); err != nil {
			return err
		}
	}
	if st.kind == aggUnset {
		st.setKind()
	}
	if v.Null && (st.kind != aggItems || r.Name != "array_agg") {
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
	switch st.kind {
	case aggSumInt:
		st.i += v.I // int8 sum of int4 cannot overflow in practice
	case aggSumWide:
		st.wide.add(v.I)
	case aggSumNum:
		if st.n == nil {
			st.n = types.NumericFromInt(0)
		}
		st.n = st.n.Add(types.MustNumeric(v.S))
	case aggSumFloat:
		st.f += v.F
	case aggMin, aggMax:
		if st.count == 1 {
			st.best = v
			return nil
		}
		c, err := st.cmp(v, st.best)
		if err != nil {
			return err
		}
		if (st.kind == aggMin && c < 0) || (st.kind == aggMax && c > 0) {
			st.best = v
		}
	case aggBoolAnd:
		if st.count == 1 || v.I == 0 {
			st.best = v
		}
	case aggBoolOr:
		if st.count == 1 || v.I != 0 {
			st.best = v
		}
	case aggItems:
		it := aggItem{v: v}
		if r.Arg2 != nil {
			var err error
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
	if st.kind == aggSumWide && st.count > 0 {
		st.n, st.kind = st.wide.numeric(), aggSumNum // once: result may be asked again
	}
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
