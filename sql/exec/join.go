package exec

import (
	"fmt"
	"math"
	"time"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// runNode calls fn once per row combination of plan node n, with n's
// columns filled in buf. fn must not keep buf.
func (x *Executor) runNode(ec *expr.EvalCtx, n plan.PlanNode, buf []types.Datum, fn func() error) error {
	if st := ec.Stats(n); st != nil {
		return timed(st, func(emit func(func() error) error) error {
			return x.runNodeOnce(ec, n, buf, func() error { return emit(fn) })
		})
	}
	return x.runNodeOnce(ec, n, buf, fn)
}

func (x *Executor) runNodeOnce(ec *expr.EvalCtx, n plan.PlanNode, buf []types.Datum, fn func() error) error {
	switch n := n.(type) {
	case *plan.LeafNode:
		return x.runLeaf(ec, n, buf, fn)
	case *plan.JoinNode:
		return x.runJoin(ec, n, buf, fn)
	}
	panic(fmt.Sprintf("sql: runNode of %T", n))
}

func setNulls(buf []types.Datum, spans []plan.Span) {
	for _, sp := range spans {
		for i := sp.Lo; i < sp.Hi; i++ {
			buf[i] = types.NullDatum
		}
	}
}

// saveSpans copies the columns of spans out of the level row.
func saveSpans(buf []types.Datum, spans []plan.Span) []types.Datum {
	n := 0
	for _, sp := range spans {
		n += sp.Hi - sp.Lo
	}
	out := make([]types.Datum, 0, n)
	for _, sp := range spans {
		out = append(out, buf[sp.Lo:sp.Hi]...)
	}
	return out
}

// restoreSpans puts columns saveSpans saved back in the level row.
func restoreSpans(buf []types.Datum, spans []plan.Span, vals []types.Datum) {
	for _, sp := range spans {
		vals = vals[copy(buf[sp.Lo:sp.Hi], vals):]
	}
}

func (x *Executor) emitJoin(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum, fn func() error) error {
	if ok, err := passes(ec, j.Filters, buf); err != nil || !ok {
		return err
	}
	return fn()
}

func (x *Executor) runJoin(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum, fn func() error) error {
	if j.Kind == plan.JoinSemi || j.Kind == plan.JoinAnti {
		return x.runSemiJoin(ec, j, buf, fn) // semijoin.go
	}
	if j.Rescan {
		return x.runNestedLoop(ec, j, buf, fn)
	}
	if j.Merge {
		return x.runMergeJoin(ec, j, buf, fn) // mergejoin.go
	}
	return x.runMaterialized(ec, j, buf, fn)
}

// runNested re-runs the right side for each left row (inner and left
// joins only; the planner never builds a rescanned right or full join).
func (x *Executor) runNestedLoop(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum, fn func() error) error {
	rspans := j.Right.Spans()
	return x.runSide(ec, j, j.Left, buf, func() error {
		matched := false
		err := x.runNode(ec, j.Right, buf, func() error {
			// the keys first: the other conditions may be costly
			if ok, err := x.joinKeysEqual(ec, j, buf); err != nil || !ok {
				return err
			}
			if ok, err := passes(ec, j.Cond, buf); err != nil || !ok {
				return err
			}
			matched = true
			return x.emitJoin(ec, j, buf, fn)
		})
		if err != nil {
			return err
		}
		if !matched && j.Kind == plan.JoinLeft {
			setNulls(buf, rspans)
			return x.emitJoin(ec, j, buf, fn)
		}
		return nil
	})
}

func (x *Executor) joinKeysEqual(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum) (bool, error) {
	for i := range j.Lkeys {
		l, err := j.Lkeys[i].Eval(ec, buf)
		if err != nil {
			return false, err
		}
		r, err := j.Rkeys[i].Eval(ec, buf)
		if err != nil {
			return false, err
		}
		if l.Null || r.Null {
			return false, nil
		}
		c, err := types.Comparator(j.KeyTypes[i])(l, r)
		if err != nil || c != 0 {
			return false, err
		}
	}
	return true, nil
}

// matRow is one materialised row of a join's inner side.
type matRow struct {
	vals    []types.Datum
	matched bool
}

// runMaterialized reads the inner side once (into a hash table when the
// join has equality keys) and streams the outer side past it. The outer
// side is the left for inner, left and full joins, the right for right
// joins.
func (x *Executor) runMaterialized(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum, fn func() error) error {
	outer, inner := j.Left, j.Right
	outerKeys, innerKeys := j.Lkeys, j.Rkeys
	if j.Kind == plan.JoinRight || j.HashLeft {
		outer, inner = j.Right, j.Left
		outerKeys, innerKeys = j.Rkeys, j.Lkeys
	}
	ispans, ospans := inner.Spans(), outer.Spans()
	var rows []*matRow
	var table map[string][]*matRow
	hashed := len(innerKeys) > 0
	// one integer key (the common case: a key column joined to another
	// table's key) is hashed as a number, and a probe outside the range
	// of the hashed keys misses without a lookup
	var ints map[int64][]*matRow
	intKey := len(innerKeys) == 1 && types.CategoryOf(j.KeyTypes[0]) == types.CatInt
	lowKey, highKey := int64(math.MaxInt64), int64(math.MinInt64)
	switch {
	case intKey:
		ints = map[int64][]*matRow{}
	case hashed:
		table = map[string][]*matRow{}
	}
	var key []byte
	var hashStart time.Time
	hst := ec.Stats(plan.StatHash{J: j})
	if hst != nil {
		hashStart = time.Now()
	}
	err := x.runSide(ec, j, inner, buf, func() error {
		r := &matRow{vals: saveSpans(buf, ispans)}
		if intKey {
			v, err := innerKeys[0].Eval(ec, buf)
			if err != nil {
				return err
			}
			if !v.Null {
				ints[v.I] = append(ints[v.I], r)
				lowKey, highKey = min(lowKey, v.I), max(highKey, v.I)
			}
			rows = append(rows, r)
			return nil
		}
		if hashed {
			var ok bool
			var err error
			key, ok, err = x.joinHashKey(ec, j, key[:0], innerKeys, buf)
			if err != nil {
				return err
			}
			if !ok {
				// a NULL key matches nothing, but outer joins still
				// emit the row unmatched
				rows = append(rows, r)
				return nil
			}
			table[string(key)] = append(table[string(key)], r)
		}
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return err
	}
	if hst != nil {
		d := ms(time.Since(hashStart))
		hst.Loops, hst.Rows, hst.StartMs, hst.TotalMs = hst.Loops+1, hst.Rows+float64(len(rows)), hst.StartMs+d, hst.TotalMs+d
	}
	err = x.runSide(ec, j, outer, buf, func() error {
		candidates := rows
		switch {
		case intKey:
			v, err := outerKeys[0].Eval(ec, buf)
			if err != nil {
				return err
			}
			candidates = nil
			if !v.Null && v.I >= lowKey && v.I <= highKey {
				candidates = ints[v.I]
			}
		case hashed:
			var ok bool
			var err error
			key, ok, err = x.joinHashKey(ec, j, key[:0], outerKeys, buf)
			if err != nil {
				return err
			}
			candidates = nil
			if ok {
				candidates = table[string(key)]
			}
		}
		matched := false
		for _, r := range candidates {
			restoreSpans(buf, ispans, r.vals)
			if ok, err := passes(ec, j.Cond, buf); err != nil {
				return err
			} else if !ok {
				continue
			}
			matched = true
			r.matched = true
			if err := x.emitJoin(ec, j, buf, fn); err != nil {
				return err
			}
		}
		if !matched && j.Kind != plan.JoinInner {
			setNulls(buf, ispans)
			return x.emitJoin(ec, j, buf, fn)
		}
		return nil
	})
	if err != nil || j.Kind != plan.JoinFull {
		return err
	}
	setNulls(buf, ospans)
	for _, r := range rows {
		if r.matched {
			continue
		}
		restoreSpans(buf, ispans, r.vals)
		if err := x.emitJoin(ec, j, buf, fn); err != nil {
			return err
		}
	}
	return nil
}

// hashKey encodes the key values of the current row; ok is false when a
// key is NULL (it can equal nothing).
func (x *Executor) joinHashKey(ec *expr.EvalCtx, j *plan.JoinNode, dst []byte, keys []expr.Expr, buf []types.Datum) ([]byte, bool, error) {
	for i, k := range keys {
		v, err := k.Eval(ec, buf)
		if err != nil {
			return nil, false, err
		}
		if v.Null {
			return dst, false, nil
		}
		dst = types.AppendHashKey(dst, j.KeyTypes[i], v)
	}
	return dst, true, nil
}
