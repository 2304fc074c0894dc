package exec

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

func (x *Executor) setopBranch(ec *expr.EvalCtx, u *plan.SetopSource, side int, fn func([]types.Datum) error) error {
	p := u.Left
	if side == 1 {
		p = u.Right
	}
	casts := u.Casts[side]
	conv := make([]types.Datum, len(u.Cols))
	return x.RunSelect(ec, p, func(row []types.Datum) error {
		for i := range conv {
			if casts[i] == nil {
				conv[i] = row[i]
				continue
			}
			v, err := casts[i].Eval(ec, row)
			if err != nil {
				return err
			}
			conv[i] = v
		}
		return fn(conv)
	})
}

func (x *Executor) scanSetop(ec *expr.EvalCtx, u *plan.SetopSource, fn func([]types.Datum) error) error {
	key := func(row []types.Datum) string { return plan.RowKey(row, u.Cols) }
	switch {
	case u.Op == pg.SetOperation_SETOP_UNION && u.All:
		if err := x.setopBranch(ec, u, 0, fn); err != nil {
			return err
		}
		return x.setopBranch(ec, u, 1, fn)
	case u.Op == pg.SetOperation_SETOP_UNION:
		seen := map[string]bool{}
		once := func(row []types.Datum) error {
			k := key(row)
			if seen[k] {
				return nil
			}
			seen[k] = true
			return fn(row)
		}
		if err := x.setopBranch(ec, u, 0, once); err != nil {
			return err
		}
		return x.setopBranch(ec, u, 1, once)
	}
	// INTERSECT / EXCEPT: count the right side, then stream the left.
	counts := map[string]int{}
	if err := x.setopBranch(ec, u, 1, func(row []types.Datum) error {
		counts[key(row)]++
		return nil
	}); err != nil {
		return err
	}
	emitted := map[string]bool{}
	return x.setopBranch(ec, u, 0, func(row []types.Datum) error {
		k := key(row)
		n := counts[k]
		if u.Op == pg.SetOperation_SETOP_INTERSECT {
			switch {
			case u.All && n > 0:
				counts[k] = n - 1
				return fn(row)
			case !u.All && n > 0 && !emitted[k]:
				emitted[k] = true
				return fn(row)
			}
			return nil
		}
		switch { // EXCEPT
		case u.All && n > 0:
			counts[k] = n - 1
			return nil
		case u.All:
			return fn(row)
		case n == 0 && !emitted[k]:
			emitted[k] = true
			return fn(row)
		}
		return nil
	})
}
func (x *Executor) scanValues(ec *expr.EvalCtx, v *plan.ValuesSource, fn func([]types.Datum) error) error {
	row := make([]types.Datum, len(v.Cols))
	for _, r := range v.Rows {
		for i, e := range r {
			d, err := e.Eval(ec, nil)
			if err != nil {
				return err
			}
			row[i] = d
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}
