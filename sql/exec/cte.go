package exec

import (
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// rows computes the CTE's rows (or returns the kept ones).
func (x *Executor) cteRows(ec *expr.EvalCtx, d *analyze.CteDef) ([][]types.Datum, error) {
	sp, _ := d.Plan.(*plan.SelectPlan)
	anchor, _ := d.Anchor.(*plan.SelectPlan)
	step, _ := d.Step.(*plan.SelectPlan)
	correlated := (sp != nil && sp.Correlated) || (anchor != nil && (anchor.Correlated || step.Correlated))
	if !correlated {
		if r, ok := ec.CteCache[d]; ok {
			return r, nil
		}
	}
	var out [][]types.Datum
	collect := func(dst *[][]types.Datum) func([]types.Datum) error {
		return func(row []types.Datum) error {
			*dst = append(*dst, append([]types.Datum(nil), row...))
			return nil
		}
	}
	if !d.Recursive {
		if err := x.RunSelect(ec, sp, collect(&out)); err != nil {
			return nil, err
		}
	} else {
		var work [][]types.Datum
		if err := x.RunSelect(ec, anchor, collect(&work)); err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		dedupe := func(rows [][]types.Datum) [][]types.Datum {
			if d.All {
				return rows
			}
			kept := rows[:0]
			for _, r := range rows {
				k := plan.RowKey(r, d.Cols)
				if !seen[k] {
					seen[k] = true
					kept = append(kept, r)
				}
			}
			return kept
		}
		work = dedupe(work)
		saved := d.Work
		defer func() { d.Work = saved }()
		for n := 0; len(work) > 0; n++ {
			out = append(out, work...)
			if err := expr.CheckCancel(ec); err != nil {
				return nil, err
			}
			d.Work = work
			var next [][]types.Datum
			err := x.RunSelect(ec, step, func(row []types.Datum) error {
				r := append([]types.Datum(nil), row...)
				for i, c := range d.StepCasts {
					if c == nil {
						continue
					}
					v, err := c.Eval(ec, row)
					if err != nil {
						return err
					}
					r[i] = v
				}
				next = append(next, r)
				return nil
			})
			if err != nil {
				return nil, err
			}
			work = dedupe(next)
		}
	}
	if !correlated {
		if ec.CteCache == nil {
			ec.CteCache = map[any][][]types.Datum{}
		}
		ec.CteCache[d] = out
	}
	return out, nil
}
func (x *Executor) scanCTE(ec *expr.EvalCtx, c *plan.CteSource, fn func([]types.Datum) error) error {
	rows := c.Def.Work
	if !c.Self {
		var err error
		if rows, err = x.cteRows(ec, c.Def); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
