package exec

import (
	"errors"
	"sort"
	"time"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// Merge Join (nodeMergejoin.c's job, in lockd's push-style executor).
// Both sides arrive in the order of the join keys, ascending with NULLs
// last — as an index reads them, or sorted here when the plan says a Sort
// does it (JoinNode.SortLeft, SortRight). The inner (right) side is read
// once into a slab of values, which is what PostgreSQL's mark and restore
// (or the Materialize it puts over the inner side) give: the run of inner
// rows whose keys equal the current outer row's is read again for the next
// outer row with the same keys. The outer (left) side streams past it.
//
// Semantics as PostgreSQL's: a NULL key matches nothing; the join's other
// conditions (Join Filter) decide among rows whose keys are equal; a left
// or full join emits an outer row that matched nothing with NULLs, a right
// or full join an inner row that matched nothing, as the merge passes it
// or at the end. An inner or right join stops reading the outer side once
// the inner side is used up (the rows left cannot match), as
// nodeMergejoin.c does; mergejoinscansel prices that in.

// errMergeDone stops the outer side's scan early.
var errMergeDone = errors.New("exec: merge join done")

// mergeRows is one side of a merge join held in memory: per row its
// columns (the side's spans) then its key values, all in one slab.
type mergeRows struct {
	slab   []types.Datum
	width  int // columns per row
	nkeys  int
	n      int
	order  []int32 // rows in key order (nil: as read)
	sorted bool
}

func (m *mergeRows) row(i int) []types.Datum {
	if m.order != nil {
		i = int(m.order[i])
	}
	w := m.width + m.nkeys
	return m.slab[i*w : (i+1)*w]
}

func (m *mergeRows) vals(i int) []types.Datum { return m.row(i)[:m.width] }
func (m *mergeRows) keys(i int) []types.Datum { return m.row(i)[m.width:] }

// mergeCmp compares key vectors in the merge order: ascending, NULLs last.
type mergeCmp []func(a, b types.Datum) (int, error)

func newMergeCmp(typs []types.Type) mergeCmp {
	c := make(mergeCmp, len(typs))
	for i, t := range typs {
		c[i] = types.Comparator(t)
	}
	return c
}

// sort orders the rows by their keys (descending with desc), stably: the
// Sort under a merge join or a GroupAggregate.
func (m *mergeRows) sort(cmp mergeCmp, desc bool) error {
	m.order = make([]int32, m.n)
	for i := range m.order {
		m.order[i] = int32(i)
	}
	w := m.width + m.nkeys
	var sortErr error
	sort.SliceStable(m.order, func(a, b int) bool {
		ka := m.slab[int(m.order[a])*w+m.width : (int(m.order[a])+1)*w]
		kb := m.slab[int(m.order[b])*w+m.width : (int(m.order[b])+1)*w]
		r, err := cmp.compare(ka, kb)
		if err != nil && sortErr == nil {
			sortErr = err
		}
		if desc {
			return r > 0
		}
		return r < 0
	})
	return sortErr
}

func (c mergeCmp) compare(a, b []types.Datum) (int, error) {
	for i, cmp := range c {
		x, y := a[i], b[i]
		switch {
		case x.Null && y.Null:
			continue
		case x.Null:
			return 1, nil
		case y.Null:
			return -1, nil
		}
		r, err := cmp(x, y)
		if err != nil || r != 0 {
			return r, err
		}
	}
	return 0, nil
}

func anyNullKey(keys []types.Datum) bool {
	for _, k := range keys {
		if k.Null {
			return true
		}
	}
	return false
}

// readSorted reads side n of j into memory with its keys, in key order:
// sorted when sortIt (a Sort node), else checked to be in order as read
// (and sorted should it not be, which keeps the join right whatever the
// input's order).
func (x *Executor) readSorted(ec *expr.EvalCtx, j *plan.JoinNode, n plan.PlanNode, keys []expr.Expr, cmp mergeCmp, buf []types.Datum, sortIt bool, st *expr.NodeStats) (*mergeRows, error) {
	spans := n.Spans()
	m := &mergeRows{nkeys: len(keys)}
	for _, sp := range spans {
		m.width += sp.Hi - sp.Lo
	}
	// room for the rows the planner expects (up to a million), so the
	// slab is not copied as it grows
	if est := estRows(n); est > 0 {
		m.slab = make([]types.Datum, 0, int(min(est, 1<<20))*(m.width+m.nkeys))
	}
	start := time.Now()
	err := x.runSide(ec, j, n, buf, func() error {
		for _, sp := range spans {
			m.slab = append(m.slab, buf[sp.Lo:sp.Hi]...)
		}
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
		return nil, err
	}
	inOrder := true
	for i := 1; i < m.n && inOrder; i++ {
		r, err := cmp.compare(m.keys(i-1), m.keys(i))
		if err != nil {
			return nil, err
		}
		inOrder = r <= 0
	}
	if !inOrder {
		if err := m.sort(cmp, false); err != nil {
			return nil, err
		}
	}
	if st != nil {
		d := ms(time.Since(start))
		st.Loops, st.Rows, st.StartMs, st.TotalMs = st.Loops+1, st.Rows+float64(m.n), st.StartMs+d, st.TotalMs+d
	}
	return m, nil
}

// runMergeJoin runs merge join j (inner, left, right or full).
func (x *Executor) runMergeJoin(ec *expr.EvalCtx, j *plan.JoinNode, buf []types.Datum, fn func() error) error {
	cmp := newMergeCmp(j.KeyTypes)
	inner, err := x.readSorted(ec, j, j.Right, j.Rkeys, cmp, buf, j.SortRight, ec.Stats(plan.StatMergeInner{J: j}))
	if err != nil {
		return err
	}
	ispans, ospans := j.Right.Spans(), j.Left.Spans()
	keepOuter := j.Kind == plan.JoinLeft || j.Kind == plan.JoinFull
	keepInner := j.Kind == plan.JoinRight || j.Kind == plan.JoinFull
	var matched []bool
	if keepInner {
		matched = make([]bool, inner.n)
	}
	// the inner rows that can match: those before the first whose first
	// key is NULL (NULLs sort last)
	live := inner.n
	for live > 0 && inner.keys(live - 1)[0].Null {
		live--
	}
	okeys := make([]types.Datum, len(j.Lkeys))
	var saved []types.Datum // the outer row, while an inner row goes out alone
	pos := 0                // the first inner row whose keys may equal the outer row's
	emitInner := func(i int) error {
		saved = saved[:0]
		for _, sp := range ospans {
			saved = append(saved, buf[sp.Lo:sp.Hi]...)
		}
		setNulls(buf, ospans)
		restoreSpans(buf, ispans, inner.vals(i))
		if err := x.emitJoin(ec, j, buf, fn); err != nil {
			return err
		}
		restoreSpans(buf, ospans, saved)
		return nil
	}
	step := func() error {
		for i, k := range j.Lkeys {
			v, err := k.Eval(ec, buf)
			if err != nil {
				return err
			}
			okeys[i] = v
		}
		any := false
		if !anyNullKey(okeys) {
			for pos < live {
				r, err := cmp.compare(inner.keys(pos), okeys)
				if err != nil {
					return err
				}
				if r >= 0 {
					break
				}
				if keepInner && !matched[pos] {
					matched[pos] = true // out now, not again at the end
					if err := emitInner(pos); err != nil {
						return err
					}
				}
				pos++
			}
			for i := pos; i < live; i++ {
				r, err := cmp.compare(inner.keys(i), okeys)
				if err != nil {
					return err
				}
				if r != 0 {
					break
				}
				restoreSpans(buf, ispans, inner.vals(i))
				if ok, err := passes(ec, j.Cond, buf); err != nil {
					return err
				} else if !ok {
					if st := ec.Stats(j); st != nil {
						st.JoinFilter++
					}
					continue
				}
				any = true
				if keepInner {
					matched[i] = true
				}
				if err := x.emitJoin(ec, j, buf, fn); err != nil {
					return err
				}
			}
		}
		if !any && keepOuter {
			setNulls(buf, ispans)
			if err := x.emitJoin(ec, j, buf, fn); err != nil {
				return err
			}
		}
		if pos >= live && !keepOuter {
			return errMergeDone // no outer row left can match
		}
		return nil
	}
	if j.SortLeft {
		outer, err := x.readSorted(ec, j, j.Left, j.Lkeys, cmp, buf, true, ec.Stats(plan.StatMergeOuter{J: j}))
		if err != nil {
			return err
		}
		for i := 0; i < outer.n; i++ {
			restoreSpans(buf, ospans, outer.vals(i))
			if err = step(); err != nil {
				break
			}
		}
	} else {
		err = x.runSide(ec, j, j.Left, buf, step)
	}
	if err != nil && err != errMergeDone {
		return err
	}
	if !keepInner {
		return nil
	}
	setNulls(buf, ospans)
	for i := 0; i < inner.n; i++ {
		if matched[i] {
			continue
		}
		restoreSpans(buf, ispans, inner.vals(i))
		if err := x.emitJoin(ec, j, buf, fn); err != nil {
			return err
		}
	}
	return nil
}

// estRows is the planner's estimate of the rows plan node n gives.
func estRows(n plan.PlanNode) float64 {
	switch x := n.(type) {
	case *plan.LeafNode:
		return x.Est.Rows()
	case *plan.JoinNode:
		return x.Est.Rows()
	}
	return 0
}
