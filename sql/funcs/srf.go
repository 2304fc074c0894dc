package funcs

import (
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// srfOutputNames are the OUT parameter names of set-returning functions
// that have one.
var SrfOutputNames = map[string]string{"pg_partition_ancestors": "relid"}

func IsSRF(name string) bool {
	_, ls := LsDirs[name]
	return name == "generate_series" || name == "unnest" || name == "pg_partition_ancestors" || ls
}

func IntSeries(ec *expr.EvalCtx, start, stop, step int64, emit func(types.Datum) error) error {
	if step == 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	n := 0
	for i := start; (step > 0 && i <= stop) || (step < 0 && i >= stop); i += step {
		if n++; n&1023 == 0 {
			if err := expr.CheckCancel(ec); err != nil {
				return err
			}
		}
		if err := emit(types.IntDatum(i)); err != nil {
			return err
		}
		if (step > 0 && i > stop-step) || (step < 0 && i < stop-step) {
			break // the next step would overflow past stop
		}
	}
	return nil
}

func NumericSeries(ec *expr.EvalCtx, v []types.Datum, emit func(types.Datum) error) error {
	cur, stop := types.MustNumeric(v[0].S), types.MustNumeric(v[1].S)
	step := types.NumericFromInt(1)
	if len(v) == 3 {
		step = types.MustNumeric(v[2].S)
	}
	sign := step.Coef.Sign()
	if sign == 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	for n := 0; ; n++ {
		c := cur.Cmp(stop)
		if (sign > 0 && c > 0) || (sign < 0 && c < 0) {
			return nil
		}
		if n&1023 == 1023 {
			if err := expr.CheckCancel(ec); err != nil {
				return err
			}
		}
		if err := emit(types.TextDatum(cur.String())); err != nil {
			return err
		}
		cur = cur.Add(step)
	}
}
