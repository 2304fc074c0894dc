package funcs

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

func absInt(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

func fnMod(t types.Type) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	f := expr.ArithFn("%", t)
	return func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) { return f(ec, a[0], a[1]) }
}

// mathFuncs are the mathematical functions (PostgreSQL: utils/adt/int.c,
// float.c, numeric.c).
var mathFuncs = map[string][]Builtin{
	"abs": {
		{args: []types.Type{types.TypeInt2}, Result: fixed(types.TypeInt2), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			if a[0].I == math.MinInt16 {
				return types.Datum{}, types.OutOfRange(types.TypeInt2)
			}
			return types.IntDatum(absInt(a[0].I)), nil
		}},
		{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			if a[0].I == math.MinInt32 {
				return types.Datum{}, types.OutOfRange(types.TypeInt4)
			}
			return types.IntDatum(absInt(a[0].I)), nil
		}},
		{args: []types.Type{types.TypeInt8}, Result: fixed(types.TypeInt8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			if a[0].I == math.MinInt64 {
				return types.Datum{}, types.OutOfRange(types.TypeInt8)
			}
			return types.IntDatum(absInt(a[0].I)), nil
		}},
		{args: []types.Type{types.TypeNumeric}, Result: fixed(types.TypeNumeric), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(strings.TrimPrefix(a[0].S, "-")), nil
		}},
		{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.FloatDatum(math.Abs(a[0].F)), nil
		}},
	},
	"factorial": {{args: []types.Type{types.TypeInt8}, Result: fixed(types.TypeNumeric), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		if a[0].I < 0 {
			return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "factorial of a negative number is undefined")
		}
		if a[0].I > 32177 {
			return types.Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
		}
		var r big.Int
		r.MulRange(1, a[0].I)
		if a[0].I == 0 {
			r.SetInt64(1)
		}
		return types.TextDatum(r.String()), nil
	}}},
	"to_hex": {
		{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(strconv.FormatUint(uint64(uint32(a[0].I)), 16)), nil
		}},
		{args: []types.Type{types.TypeInt8}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(strconv.FormatUint(uint64(a[0].I), 16)), nil
		}},
	},
	"mod": {
		{args: []types.Type{types.TypeInt4, types.TypeInt4}, Result: fixed(types.TypeInt4), Fn: fnMod(types.TypeInt4)},
		{args: []types.Type{types.TypeInt8, types.TypeInt8}, Result: fixed(types.TypeInt8), Fn: fnMod(types.TypeInt8)},
		{args: []types.Type{types.TypeNumeric, types.TypeNumeric}, Result: fixed(types.TypeNumeric), Fn: fnMod(types.TypeNumeric)},
	},
	"power": {{args: []types.Type{types.TypeFloat8, types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.FloatDatum(math.Pow(a[0].F, a[1].F)), nil
	}}},
	"trunc": {
		{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.FloatDatum(math.Trunc(a[0].F)), nil
		}},
		{args: []types.Type{types.TypeNumeric}, Result: fixed(types.TypeNumeric), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(types.MustNumeric(a[0].S).Trunc(0).String()), nil
		}},
		{args: []types.Type{types.TypeNumeric, types.TypeInt4}, Result: fixed(types.TypeNumeric), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(types.MustNumeric(a[0].S).Trunc(int32(a[1].I)).String()), nil
		}},
	},
	"round": {
		{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.FloatDatum(math.RoundToEven(a[0].F)), nil
		}},
		{args: []types.Type{types.TypeNumeric}, Result: fixed(types.TypeNumeric), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(types.MustNumeric(a[0].S).Round(0).String()), nil
		}},
		{args: []types.Type{types.TypeNumeric, types.TypeInt4}, Result: fixed(types.TypeNumeric), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(types.MustNumeric(a[0].S).Round(int32(a[1].I)).String()), nil
		}},
	},
	"floor": {{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.FloatDatum(math.Floor(a[0].F)), nil
	}}},
	"ceil": {{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.FloatDatum(math.Ceil(a[0].F)), nil
	}}},
	"sqrt": {{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		if a[0].F < 0 {
			return types.Datum{}, pgerr.New("2201F", "cannot take square root of a negative number")
		}
		return types.FloatDatum(math.Sqrt(a[0].F)), nil
	}}},
}
