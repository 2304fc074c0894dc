package exec

import (
	"time"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// GroupAggregate: aggregation over input that arrives in group order
// (plan.SelectPlan.GroupSorted; the planner reads the table along an
// index in the GROUP BY order). A group ends when the group values
// change; it is finished, checked against HAVING and handed on before
// the next row is aggregated, so one group is held at a time and the
// first groups go out before the input has been read to its end
// (nodeAgg.c's AGG_SORTED). Rows are compared by the same key bytes the
// hashed strategy hashes, so both group the same rows together.

// runSortedGroups aggregates the scanned rows group by group and calls fn
// with each group's first row, with ec.AggVals and ec.GroupVals set for
// it. Per row it evaluates the group values and compares their key bytes
// with the group's; it allocates only when a group starts.
func (x *Executor) runSortedGroups(ec *expr.EvalCtx, p *plan.SelectPlan, scan func(func() error) error, buf []types.Datum, fn func(row []types.Datum) error) error {
	prevAggs, prevGroups := ec.AggVals, ec.GroupVals
	defer func() { ec.AggVals, ec.GroupVals = prevAggs, prevGroups }()
	if p.GroupSortInput {
		scan = x.sortGroupInput(ec, p, scan, buf)
	}
	var (
		key, groupKey []byte
		first         = make([]types.Datum, len(buf))
		vals          = make([]types.Datum, len(p.GroupBy))
		groupVals     []types.Datum
		states        []aggState
		open          bool
	)
	finish := func() error {
		av := make([]types.Datum, len(states))
		for i := range states {
			v, err := states[i].result()
			if err != nil {
				return err
			}
			av[i] = v
		}
		ec.AggVals, ec.GroupVals = av, groupVals
		if p.Having != nil {
			h, err := p.Having.Eval(ec, first)
			if err != nil {
				return err
			}
			if h.Null || h.I == 0 {
				return nil
			}
		}
		return fn(first)
	}
	err := scan(func() error {
		var err error
		if key, err = groupKeyOf(ec, p.GroupBy, buf, vals, key[:0]); err != nil {
			return err
		}
		if !open || string(key) != string(groupKey) {
			if open {
				// the group's row is handed on and may be kept: the next
				// group gets its own
				if err := finish(); err != nil {
					return err
				}
				first = make([]types.Datum, len(buf))
			}
			copy(first, buf)
			groupVals = append([]types.Datum(nil), vals...)
			groupKey = append(groupKey[:0], key...)
			states = make([]aggState, len(p.Aggs))
			for i, r := range p.Aggs {
				states[i].ref = r
			}
			open = true
		}
		for i := range states {
			if err := states[i].Add(ec, buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || !open {
		return err
	}
	return finish()
}

// sortGroupInput returns a scan that reads all of scan's rows, sorts them
// on p.GroupSortKeys (ascending with NULLs last, or descending with NULLs
// first) and hands them on in that order: the Sort under a GroupAggregate.
// The rows are held in one slab, each its level row then its keys.
func (x *Executor) sortGroupInput(ec *expr.EvalCtx, p *plan.SelectPlan, scan func(func() error) error, buf []types.Datum) func(func() error) error {
	return func(fn func() error) error {
		start := time.Now()
		keys := p.GroupSortKeys
		typs := make([]types.Type, len(keys))
		for i, k := range keys {
			typs[i] = k.Type()
		}
		cmp := newMergeCmp(typs)
		m := &mergeRows{width: len(buf), nkeys: len(keys)}
		if est := estRows(p.From); est > 0 {
			m.slab = make([]types.Datum, 0, int(min(est, 1<<20))*(m.width+m.nkeys))
		}
		err := scan(func() error {
			m.slab = append(m.slab, buf...)
			for _, k := range keys {
				v, err := k.Eval(ec, buf)
				if err != nil {
					return err
				}
				m.slab = append(m.slab, v)
			}
			m.n++
			return nil
		})
		if err != nil {
			return err
		}
		if err := m.sort(cmp, p.GroupSortDesc); err != nil {
			return err
		}
		if st := ec.Stats(plan.StatGroupSort{P: p}); st != nil {
			d := ms(time.Since(start))
			st.Loops, st.Rows, st.StartMs, st.TotalMs = st.Loops+1, st.Rows+float64(m.n), st.StartMs+d, st.TotalMs+d
		}
		for i := 0; i < m.n; i++ {
			copy(buf, m.vals(i))
			if err := fn(); err != nil {
				return err
			}
		}
		return nil
	}
}
