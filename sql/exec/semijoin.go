package exec

import (
	"math"
	"time"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// Semi and anti joins (PostgreSQL's JOIN_SEMI, JOIN_ANTI: the planner's
// pulled-up EXISTS, IN and NOT EXISTS, sql/plan/semijoin.go). A semi
// join emits each left row that has a match on the right once, however
// many matches it has; an anti join each left row that has none. Both
// stop looking at the first match. A NULL key matches nothing: a semi
// join drops the row, an anti join keeps it, as NOT EXISTS does (the
// planner never makes NOT IN an anti join). Nothing above the join reads
// the right side's columns.
//
// The planner may also do a semi join as an inner join over the
// subquery's rows made unique on the join keys (JoinNode.UniqueLeft,
// UniqueRight): runSide drops the repeated keys of that side.

// semiStop ends the scan of semi join j's right side at a match. It is
// pointer-shaped, so returning it allocates nothing.
type semiStop struct{ j *plan.JoinNode }

func (semiStop) Error() string { return "sql: semi join matched" }

func (x *Executor) runSemiJoin(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum, fn func() error) error {
	if !j.Rescan {
		return x.runSemiHash(ec, j, buf, fn)
	}
	// nested loop: the right side runs for each left row until its first
	// match
	rspans := j.Right.Spans()
	semi := j.Kind == plan.JoinSemi
	return x.runNode(ec, j.Left, buf, func() error {
		matched := false
		err := x.runNode(ec, j.Right, buf, func() error {
			if ok, err := x.joinKeysEqual(ec, j, buf); err != nil || !ok {
				return err
			}
			if ok, err := passes(ec, j.Cond, buf); err != nil || !ok {
				return err
			}
			matched = true
			return semiStop{j}
		})
		if err != nil {
			if s, ok := err.(semiStop); !ok || s.j != j {
				return err
			}
		}
		if matched != semi {
			return nil
		}
		if !semi {
			setNulls(buf, rspans)
		}
		return x.emitJoin(ec, j, buf, fn)
	})
}

// runSemiHash reads the right side once — into a hash table on the join
// keys, or, without keys, kept in a list (a Materialize) — and streams
// the left side past it. Without other conditions only the right side's
// keys are kept.
func (x *Executor) runSemiHash(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum, fn func() error) error {
	ispans := j.Right.Spans()
	semi := j.Kind == plan.JoinSemi
	keysOnly := len(j.Cond) == 0 && len(j.Rkeys) > 0
	intKey := len(j.Rkeys) == 1 && types.CategoryOf(j.KeyTypes[0]) == types.CatInt
	var (
		rows    [][]types.Datum
		table   map[string][][]types.Datum
		ints    map[int64][][]types.Datum
		set     map[string]struct{}
		intSet  map[int64]struct{}
		key     []byte
		lo, hi  = int64(math.MaxInt64), int64(math.MinInt64)
		nrows   int
		hashing time.Time
	)
	switch {
	case keysOnly && intKey:
		intSet = map[int64]struct{}{}
	case keysOnly:
		set = map[string]struct{}{}
	case intKey:
		ints = map[int64][][]types.Datum{}
	case len(j.Rkeys) > 0:
		table = map[string][][]types.Datum{}
	}
	hst := ec.Stats(plan.StatHash{J: j})
	if hst != nil {
		hashing = time.Now()
	}
	err := x.runNode(ec, j.Right, buf, func() error {
		nrows++
		if intKey {
			v, err := j.Rkeys[0].Eval(ec, buf)
			if err != nil || v.Null {
				return err // a NULL key matches nothing
			}
			lo, hi = min(lo, v.I), max(hi, v.I)
			if keysOnly {
				intSet[v.I] = struct{}{}
			} else {
				ints[v.I] = append(ints[v.I], saveSpans(buf, ispans))
			}
			return nil
		}
		if len(j.Rkeys) == 0 {
			rows = append(rows, saveSpans(buf, ispans))
			return nil
		}
		var ok bool
		var err error
		if key, ok, err = x.joinHashKey(ec, j, key[:0], j.Rkeys, buf); err != nil || !ok {
			return err
		}
		if keysOnly {
			set[string(key)] = struct{}{}
		} else {
			table[string(key)] = append(table[string(key)], saveSpans(buf, ispans))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if hst != nil {
		d := ms(time.Since(hashing))
		hst.Loops, hst.Rows, hst.StartMs, hst.TotalMs = hst.Loops+1, hst.Rows+float64(nrows), hst.StartMs+d, hst.TotalMs+d
	}
	return x.runNode(ec, j.Left, buf, func() error {
		candidates := rows
		matched := false
		switch {
		case intKey:
			v, err := j.Lkeys[0].Eval(ec, buf)
			if err != nil {
				return err
			}
			candidates = nil
			if !v.Null && v.I >= lo && v.I <= hi {
				if keysOnly {
					_, matched = intSet[v.I]
				} else {
					candidates = ints[v.I]
				}
			}
		case len(j.Lkeys) > 0:
			var ok bool
			var err error
			if key, ok, err = x.joinHashKey(ec, j, key[:0], j.Lkeys, buf); err != nil {
				return err
			}
			candidates = nil
			if ok {
				if keysOnly {
					_, matched = set[string(key)]
				} else {
					candidates = table[string(key)]
				}
			}
		}
		for _, r := range candidates {
			restoreSpans(buf, ispans, r)
			ok, err := passes(ec, j.Cond, buf)
			if err != nil {
				return err
			}
			if ok {
				matched = true
				break
			}
		}
		if matched != semi {
			return nil
		}
		if !semi || keysOnly {
			setNulls(buf, ispans)
		}
		return x.emitJoin(ec, j, buf, fn)
	})
}

// runSide runs side n of join j, made unique on j.UniqKeys when it is
// the side of a semi join done as an inner join (PostgreSQL's
// HashAggregate under it): a key seen before is skipped (NULL keys form
// one group).
func (x *Executor) runSide(ec *expr.EvalCtx, j *plan.JoinNode, n plan.PlanNode, buf []types.Datum, fn func() error) error {
	if !(j.UniqueLeft && n == j.Left || j.UniqueRight && n == j.Right) {
		return x.runNode(ec, n, buf, fn)
	}
	seen := map[string]struct{}{}
	var key []byte
	unique := func(emit func() error) error {
		return x.runNode(ec, n, buf, func() error {
			key = key[:0]
			for i, k := range j.UniqKeys {
				v, err := k.Eval(ec, buf)
				if err != nil {
					return err
				}
				if v.Null {
					key = append(key, 0)
					continue
				}
				key = types.AppendHashKey(append(key, 1), j.UniqTypes[i], v)
			}
			if _, dup := seen[string(key)]; dup {
				return nil
			}
			seen[string(key)] = struct{}{}
			return emit()
		})
	}
	if st := ec.Stats(plan.StatUnique{J: j}); st != nil {
		return timed(st, func(count func(func() error) error) error {
			return unique(func() error { return count(fn) })
		})
	}
	return unique(fn)
}
