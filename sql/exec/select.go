package exec

import (
	"sort"
	"time"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// run executes the plan, calling emit for each output row. The row
// passed to emit is valid only during the call.
func (x *Executor) RunSelect(ec *expr.EvalCtx, p *plan.SelectPlan, emit func(row []types.Datum) error) error {
	_, err := x.runQuery(ec, p, emit)
	return err
}

// runQuery is RunSelect that also returns how many rows went to emit.
func (x *Executor) runQuery(ec *expr.EvalCtx, p *plan.SelectPlan, emit func(row []types.Datum) error) (int64, error) {
	if ec.Instr != nil {
		// the query's top node: its Limit, else its Sort or Aggregate
		// (which count themselves as well), else its FROM tree's root
		var key any = plan.StatQuery{P: p}
		if p.Limit != nil || p.Offset != nil {
			key = plan.StatLimit{P: p}
		}
		var n int64
		err := timed(ec.Stats(key), func(count func(func() error) error) error {
			var err error
			n, err = x.runSelect(ec, p, func(row []types.Datum) error {
				return count(func() error { return emit(row) })
			})
			return err
		})
		return n, err
	}
	return x.runSelect(ec, p, emit)
}

// runSelect runs the query and returns the number of rows it emitted
// (every row goes out through its limiter).
func (x *Executor) runSelect(ec *expr.EvalCtx, p *plan.SelectPlan, emit func(row []types.Datum) error) (int64, error) {
	ok, err := passes(ec, p.OneTime, nil)
	if err != nil || !ok && !p.Grouped {
		return 0, err
	}
	noRows := !ok // an aggregate over no rows still yields its one row
	lim, err := evalLimits(ec, p, emit)
	if err != nil {
		return 0, err
	}
	if lim.limit == 0 && p.RowLocks == nil {
		return 0, nil
	}
	// the scan's row and the output row share one allocation
	rows := make([]types.Datum, p.Width+len(p.Targets))
	buf, out := rows[:p.Width:p.Width], rows[p.Width:]
	if !(p.Grouped || len(p.Sort) > 0 || p.Distinct || len(p.DistinctOn) > 0 || p.RowLocks != nil) {
		// streamed: each row goes out as the scan produces it
		if noRows {
			return 0, nil
		}
		r := &streamRun{x: x, ec: ec, p: p, buf: buf, out: out, lim: lim}
		if p.From == nil {
			err = r.row()
		} else {
			err = x.runNode(ec, p.From, buf, r.row)
		}
		if err == plan.ErrLimitReached {
			err = nil
		}
		return r.lim.emitted, err
	}
	scan := func(fn func() error) error {
		if noRows {
			return nil
		}
		if p.From == nil {
			return fn()
		}
		return x.runNode(ec, p.From, buf, func() error {
			if err := tick(ec); err != nil {
				return err
			}
			return fn()
		})
	}
	deferred := p.PostponedTargets()
	start := time.Now()
	// ORDER BY ... LIMIT keeps only the rows that can still make the
	// limit while it reads (PostgreSQL's top-N heapsort)
	topN := int64(-1)
	if lim.limit >= 0 && len(p.Sort) > 0 && !p.Grouped && !p.Distinct && len(p.DistinctOn) == 0 && p.RowLocks == nil {
		topN = lim.limit + lim.offset
	}
	results, err := x.collectRows(ec, p, scan, buf, out, deferred, topN)
	if err != nil {
		return 0, err
	}
	if results, err = orderRows(p, results); err != nil {
		return 0, err
	}
	if st := ec.Stats(plan.StatSort{P: p}); st != nil && len(p.Sort) > 0 {
		// a sort gives its first row when it has read and sorted all
		d := ms(time.Since(start))
		st.Loops, st.Rows, st.StartMs, st.TotalMs = st.Loops+1, st.Rows+float64(len(results)), st.StartMs+d, st.TotalMs+d
	}
	err = x.emitRows(ec, p, results, deferred, &lim)
	return lim.emitted, err
}

// tick counts a row the scan produced, checking for a cancel every
// 1024.
func tick(ec *expr.EvalCtx) error {
	if ec.Tick++; ec.Tick&1023 == 0 {
		return expr.CheckCancel(ec)
	}
	return nil
}

// streamRun is a streamed query's run: its rows are projected and sent
// out as the scan produces them. One allocation with row as the scan's
// callback.
type streamRun struct {
	x        *Executor
	ec       *expr.EvalCtx
	p        *plan.SelectPlan
	buf, out []types.Datum
	lim      limiter
}

// row projects the scan's current row and sends it on; it ends the scan
// with plan.ErrLimitReached once LIMIT is reached.
func (r *streamRun) row() error {
	if r.p.From != nil {
		if err := tick(r.ec); err != nil {
			return err
		}
	}
	return r.x.project(r.ec, r.p, r.buf, r.out, r.lim.emit)
}

// limiter applies OFFSET and LIMIT to the rows a query emits.
type limiter struct {
	limit, offset    int64 // limit -1: none
	emitted, skipped int64
	next             func(row []types.Datum) error
}

// evalLimits evaluates the query's LIMIT and OFFSET for this execution.
func evalLimits(ec *expr.EvalCtx, p *plan.SelectPlan, emit func([]types.Datum) error) (limiter, error) {
	lim := limiter{limit: -1, next: emit}
	if p.Limit != nil {
		v, err := p.Limit.Eval(ec, nil)
		if err != nil {
			return limiter{}, err
		}
		if !v.Null {
			if v.I < 0 {
				return limiter{}, pgerr.New(pgerr.InvalidRowCountLimit, "LIMIT must not be negative")
			}
			lim.limit = v.I
		}
	}
	if p.Offset != nil {
		v, err := p.Offset.Eval(ec, nil)
		if err != nil {
			return limiter{}, err
		}
		if !v.Null {
			if v.I < 0 {
				return limiter{}, pgerr.New(pgerr.InvalidOffsetLimit, "OFFSET must not be negative")
			}
			lim.offset = v.I
		}
	}
	return lim, nil
}

// skip reports whether the next row is one OFFSET skips (and counts it).
func (l *limiter) skip() bool {
	if l.skipped < l.offset {
		l.skipped++
		return true
	}
	return false
}

// full reports whether LIMIT rows have gone out.
func (l *limiter) full() bool { return l.limit >= 0 && l.emitted >= l.limit }

// emit sends a streamed row on, or ends the scan once LIMIT is reached.
func (l *limiter) emit(out []types.Datum) error {
	if l.skip() {
		return nil
	}
	if l.full() {
		return plan.ErrLimitReached
	}
	l.emitted++
	return l.next(out)
}

// outRow is a row of a query whose rows are gathered before they go out
// (grouped, sorted, distinct or row-locking queries).
type outRow struct {
	out   []types.Datum
	keys  []types.Datum // ORDER BY keys, then DISTINCT ON keys
	level []types.Datum // the level row, for FOR UPDATE and postponed targets
}

// collectRows runs the scan (grouped when the query is) and gathers the
// projected rows with their sort keys.
func (x *Executor) collectRows(ec *expr.EvalCtx, p *plan.SelectPlan, scan func(func() error) error, buf, out []types.Datum, deferred []bool, topN int64) ([]outRow, error) {
	var results []outRow
	var sortErr error
	// with topN >= 0 only the first topN rows in sort order are wanted:
	// whenever twice as many are held, the others are dropped
	trim := func() {
		if topN < 0 || int64(len(results)) < 2*topN+64 {
			return
		}
		sortOut(p, results, &sortErr)
		clear(results[topN:])
		results = results[:topN]
	}
	collect := func(row []types.Datum) error {
		project := func(ec *expr.EvalCtx, row, out []types.Datum, fn func([]types.Datum) error) error {
			return x.project(ec, p, row, out, fn)
		}
		if deferred != nil {
			project = func(ec *expr.EvalCtx, row, out []types.Datum, fn func([]types.Datum) error) error {
				return x.projectSome(ec, p, row, out, deferred, false, fn)
			}
		}
		return project(ec, row, out, func(o []types.Datum) error {
			r := outRow{out: append([]types.Datum(nil), o...)}
			if deferred != nil {
				r.level = append([]types.Datum(nil), row...)
			}
			if len(p.Sort) > 0 || len(p.DistinctOn) > 0 {
				prevOut := ec.OutVals
				ec.OutVals = r.out
				for _, k := range p.Sort {
					v, err := k.E.Eval(ec, row)
					if err != nil {
						return err
					}
					r.keys = append(r.keys, v)
				}
				for _, d := range p.DistinctOn {
					v, err := d.Eval(ec, row)
					if err != nil {
						return err
					}
					r.keys = append(r.keys, v)
				}
				ec.OutVals = prevOut
			}
			if p.RowLocks != nil {
				r.level = append([]types.Datum(nil), row...)
			}
			results = append(results, r)
			trim()
			return sortErr
		})
	}
	if p.Grouped {
		run := func(collect func([]types.Datum) error) error { return x.runGroups(ec, p, scan, buf, collect) }
		if p.GroupSorted {
			run = func(collect func([]types.Datum) error) error { return x.runSortedGroups(ec, p, scan, buf, collect) } // groupagg.go
		}
		if st := ec.Stats(plan.StatGroup{P: p}); st != nil {
			inner := run
			run = func(collect func([]types.Datum) error) error {
				return timed(st, func(count func(func() error) error) error {
					return inner(func(row []types.Datum) error { return count(func() error { return collect(row) }) })
				})
			}
		}
		if err := run(collect); err != nil {
			return nil, err
		}
	} else if err := scan(func() error { return collect(buf) }); err != nil {
		return nil, err
	}
	return results, nil
}

// sortOut sorts rows by p's ORDER BY keys, stably (rows that compare
// equal keep the order they were read in).
func sortOut(p *plan.SelectPlan, rows []outRow, sortErr *error) {
	sort.SliceStable(rows, func(i, j int) bool {
		c, err := expr.CompareKeys(p.Sort, rows[i].keys, rows[j].keys)
		if err != nil && *sortErr == nil {
			*sortErr = err
		}
		return c < 0
	})
}

// orderRows applies DISTINCT, ORDER BY and DISTINCT ON to gathered rows.
func orderRows(p *plan.SelectPlan, results []outRow) ([]outRow, error) {
	if p.Distinct {
		seen := map[string]bool{}
		kept := results[:0]
		for _, r := range results {
			key := plan.RowKey(r.out, p.Cols)
			if !seen[key] {
				seen[key] = true
				kept = append(kept, r)
			}
		}
		results = kept
	}
	if len(p.Sort) > 0 {
		var sortErr error
		if sortOut(p, results, &sortErr); sortErr != nil {
			return nil, sortErr
		}
	}
	if len(p.DistinctOn) > 0 {
		n := len(p.Sort)
		keyCols := make([]types.Column, len(p.DistinctOn))
		for i, d := range p.DistinctOn {
			keyCols[i] = types.Column{Type: d.Type()}
		}
		kept := results[:0]
		prev := ""
		for i, r := range results {
			key := plan.RowKey(r.keys[n:], keyCols)
			if i == 0 || key != prev {
				kept = append(kept, r)
			}
			prev = key
		}
		results = kept
	}
	return results, nil
}

// emitRows sends gathered rows out through OFFSET and LIMIT, locking
// each first under FOR UPDATE.
func (x *Executor) emitRows(ec *expr.EvalCtx, p *plan.SelectPlan, results []outRow, deferred []bool, lim *limiter) error {
	for _, r := range results {
		if lim.full() {
			break
		}
		if p.RowLocks != nil {
			// as PostgreSQL's LockRows sits below Limit: rows OFFSET skips
			// are locked too, rows past LIMIT are not
			ok, changed, err := x.lockRows(ec, p.RowLocks, r.level)
			if err != nil {
				return err
			}
			if !ok {
				continue // SKIP LOCKED, or the row is gone or no longer qualifies
			}
			if changed {
				if err := x.project(ec, p, r.level, r.out, func([]types.Datum) error { return nil }); err != nil {
					return err
				}
			}
		}
		if deferred != nil { // computed as the rows leave the sort (and OFFSET skips them after)
			if err := x.projectSome(ec, p, r.level, r.out, deferred, true, func([]types.Datum) error { return nil }); err != nil {
				return err
			}
		}
		if lim.skip() {
			continue
		}
		lim.emitted++
		if err := lim.next(r.out); err != nil {
			return err
		}
	}
	return nil
}

// projectSome computes the targets marked in which (or, with which
// false, the others), leaving the rest of out alone.
func (x *Executor) projectSome(ec *expr.EvalCtx, p *plan.SelectPlan, row, out []types.Datum, which []bool, marked bool, fn func([]types.Datum) error) error {
	for i, t := range p.Targets {
		if which[i] != marked {
			continue
		}
		v, err := t.Eval(ec, row)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return fn(out)
}

// project computes the output row(s) for one input row: one row, or,
// when the select list calls set-returning functions, one per value of
// the longest set, the shorter ones padded with NULLs (ProjectSet).
func (x *Executor) project(ec *expr.EvalCtx, p *plan.SelectPlan, row, out []types.Datum, fn func([]types.Datum) error) error {
	if !p.Srf {
		for i, t := range p.Targets {
			v, err := t.Eval(ec, row)
			if err != nil {
				return err
			}
			out[i] = v
		}
		return fn(out)
	}
	var srfs []*expr.SrfExpr
	for _, t := range p.Targets {
		srfs = append(srfs, expr.SrfsIn(t)...)
	}
	sets := make([][]types.Datum, len(srfs))
	longest := 0
	for i, f := range srfs {
		if err := f.Each(ec, row, func(d types.Datum) error {
			sets[i] = append(sets[i], d)
			return nil
		}); err != nil {
			return err
		}
		if len(sets[i]) > longest {
			longest = len(sets[i])
		}
	}
	defer func() {
		for _, f := range srfs {
			f.Active = false
		}
	}()
	for k := 0; k < longest; k++ {
		for i, f := range srfs {
			f.Active = true
			f.Cur = types.NullDatum
			if k < len(sets[i]) {
				f.Cur = sets[i][k]
			}
		}
		for i, t := range p.Targets {
			v, err := t.Eval(ec, row)
			if err != nil {
				return err
			}
			out[i] = v
		}
		if err := fn(out); err != nil {
			return err
		}
	}
	return nil
}

// runGroups aggregates the scanned rows by the GROUP BY values and calls
// fn with each group's representative row, with ec.aggVals and
// ec.groupVals set for it.
func (x *Executor) runGroups(ec *expr.EvalCtx, p *plan.SelectPlan, scan func(func() error) error, buf []types.Datum, fn func(row []types.Datum) error) error {
	type group struct {
		first  []types.Datum
		vals   []types.Datum
		states []aggState
	}
	var order []*group
	groups := map[string]*group{}
	vals := make([]types.Datum, len(p.GroupBy))
	var key, lastKey []byte
	var last *group // the group of the previous row: input is often in group order
	err := scan(func() error {
		if last != nil && len(p.GroupBy) == 0 {
			for i := range last.states {
				if err := last.states[i].Add(ec, buf); err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		if key, err = groupKeyOf(ec, p.GroupBy, buf, vals, key[:0]); err != nil {
			return err
		}
		gr := last
		if gr == nil || string(key) != string(lastKey) {
			gr = groups[string(key)]
		}
		if gr == nil {
			gr = &group{first: append([]types.Datum(nil), buf...), vals: append([]types.Datum(nil), vals...), states: make([]aggState, len(p.Aggs))}
			for i, r := range p.Aggs {
				gr.states[i].ref = r
			}
			groups[string(key)] = gr
			order = append(order, gr)
		}
		if gr != last {
			last, lastKey = gr, append(lastKey[:0], key...)
		}
		for i := range gr.states {
			if err := gr.states[i].Add(ec, buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(p.GroupBy) == 0 && len(order) == 0 {
		gr := &group{first: make([]types.Datum, len(buf)), states: make([]aggState, len(p.Aggs))}
		for i := range gr.first {
			gr.first[i] = types.NullDatum
		}
		for i, r := range p.Aggs {
			gr.states[i].ref = r
		}
		order = append(order, gr)
	}
	// A subquery evaluated inside this query's projection runs on the
	// same evalCtx: put back what the enclosing level had.
	prevAggs, prevGroups := ec.AggVals, ec.GroupVals
	defer func() { ec.AggVals, ec.GroupVals = prevAggs, prevGroups }()
	for _, gr := range order {
		av := make([]types.Datum, len(gr.states))
		for i := range gr.states {
			v, err := gr.states[i].result()
			if err != nil {
				return err
			}
			av[i] = v
		}
		ec.AggVals, ec.GroupVals = av, gr.vals
		if p.Having != nil {
			h, err := p.Having.Eval(ec, gr.first)
			if err != nil {
				return err
			}
			if h.Null || h.I == 0 {
				continue
			}
		}
		if err := fn(gr.first); err != nil {
			return err
		}
	}
	return nil
}

// groupKeyOf evaluates the GROUP BY expressions over row into vals and
// appends their grouping key to key: per value a NULL marker, else the
// value's hash-key encoding (equal keys, equal groups).
func groupKeyOf(ec *expr.EvalCtx, groupBy []expr.Expr, row, vals []types.Datum, key []byte) ([]byte, error) {
	for i, g := range groupBy {
		v, err := g.Eval(ec, row)
		if err != nil {
			return key, err
		}
		vals[i] = v
		if v.Null {
			key = append(key, 0)
		} else {
			key = types.AppendHashKey(append(key, 1), g.Type(), v)
		}
	}
	return key, nil
}
