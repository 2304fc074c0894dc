package funcs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// Version is what version() reports; server_version stays 15.x so that
// clients take their PostgreSQL 15 paths.
var Version = "dev"

// builtin describes a callable function: argument types to coerce to
// (nil = keep the argument's own type), the result type, and the body.
type Builtin struct {
	args      []types.Type
	variadic  bool // last arg type repeats
	minArgs   int  // -1: len(args)
	Result    func(args []expr.Expr) types.Type
	NonStrict bool
	Volatile  bool
	Fn        func(ec *expr.EvalCtx, args []types.Datum) (types.Datum, error)
}

func fixed(t types.Type) func([]expr.Expr) types.Type {
	return func([]expr.Expr) types.Type { return t }
}

var Builtins map[string][]Builtin

func init() {
	Builtins = map[string][]Builtin{
		"version": {{Result: fixed(types.TypeText), Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.TextDatum("PostgreSQL 15.0 (lockd " + Version + ") compatible lock-study server, written in Go"), nil
		}}},
		"current_setting": {
			{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Volatile: true, Fn: fnCurrentSetting},
			{args: []types.Type{types.TypeText, types.TypeBool}, Result: fixed(types.TypeText), Volatile: true, Fn: fnCurrentSetting},
		},
		"set_config": {{args: []types.Type{types.TypeText, types.TypeText, types.TypeBool}, Result: fixed(types.TypeText), Volatile: true, NonStrict: true, Fn: fnSetConfig}},
		"pg_reload_conf": {{Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.BoolDatum(ec.S.Host.ReloadConfig()), nil
		}}},
		"pg_sleep": {{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeVoid), Volatile: true, Fn: fnSleep}},
		"pg_backend_pid": {{Result: fixed(types.TypeInt4), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.IntDatum(int64(ec.S.Pid)), nil
		}}},
		"pg_cancel_backend": {{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return ec.S.SignalBackend(int32(a[0].I), false)
		}}},
		"pg_terminate_backend": {
			{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
				return ec.S.SignalBackend(int32(a[0].I), true)
			}},
			{args: []types.Type{types.TypeInt4, types.TypeInt8}, Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
				return ec.S.SignalBackend(int32(a[0].I), true)
			}},
		},
		"now":                   {{Result: fixed(types.TypeTimestamptz), Fn: FnNow}},
		"transaction_timestamp": {{Result: fixed(types.TypeTimestamptz), Fn: FnNow}},
		"statement_timestamp": {{Result: fixed(types.TypeTimestamptz), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.IntDatum(ec.S.StmtStart.UnixMicro()), nil
		}}},
		"clock_timestamp": {{Result: fixed(types.TypeTimestamptz), Volatile: true, Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.IntDatum(time.Now().UnixMicro()), nil
		}}},
		"random": {{Result: fixed(types.TypeFloat8), Volatile: true, Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
			return types.FloatDatum(rand.Float64()), nil
		}}},
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
		"length":      {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnLength}},
		"char_length": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnLength}},
		"octet_length": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.IntDatum(int64(len(a[0].S))), nil
		}}},
		"upper": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(asciiCase(a[0].S, true)), nil
		}}},
		"lower": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(asciiCase(a[0].S, false)), nil
		}}},
		"md5": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			sum := md5.Sum([]byte(a[0].S))
			return types.TextDatum(hex.EncodeToString(sum[:])), nil
		}}},
		"repeat": {{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			if a[1].I <= 0 {
				return types.TextDatum(""), nil
			}
			if int64(len(a[0].S))*a[1].I > 1<<30 {
				return types.Datum{}, pgerr.New(pgerr.ProgramLimitExceeded, "requested length too large")
			}
			return types.TextDatum(strings.Repeat(a[0].S, int(a[1].I))), nil
		}}},
		"substr": {
			{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
			{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
		},
		"substring": {
			{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
			{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSubstr},
			{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnRegexSubstring},
		},
		"position":    {{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnStrpos}},
		"like_escape": {{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnLikeEscape}},
		"strpos":      {{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeInt4), Fn: fnStrpos}},
		"replace": {{args: []types.Type{types.TypeText, types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			if a[1].S == "" {
				return a[0], nil
			}
			return types.TextDatum(strings.ReplaceAll(a[0].S, a[1].S, a[2].S)), nil
		}}},
		"split_part": {{args: []types.Type{types.TypeText, types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnSplitPart}},
		"btrim": {
			{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, true)},
			{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, true)},
		},
		"ltrim": {
			{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, false)},
			{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(true, false)},
		},
		"rtrim": {
			{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(false, true)},
			{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeText), Fn: fnTrim(false, true)},
		},
		"left":    {{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnLeftRight(true)}},
		"right":   {{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnLeftRight(false)}},
		"reverse": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnReverse}},
		"initcap": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: fnInitcap}},
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
		"bit_length": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.IntDatum(int64(8 * len(a[0].S))), nil
		}}},
		"quote_literal": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(QuoteLiteral(a[0].S)), nil
		}}},
		"quote_nullable": {{args: []types.Type{types.TypeText}, NonStrict: true, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			if a[0].Null {
				return types.TextDatum("NULL"), nil
			}
			return types.TextDatum(QuoteLiteral(a[0].S)), nil
		}}},
		"quote_ident": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.TextDatum(types.QuoteIdent(a[0].S)), nil
		}}},
		"chr": {{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			if a[0].I <= 0 || a[0].I > 0x10ffff {
				return types.Datum{}, pgerr.New(pgerr.ProgramLimitExceeded, "requested character too large for encoding: %d", a[0].I)
			}
			return types.TextDatum(string(rune(a[0].I))), nil
		}}},
		"ascii": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeInt4), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			r := []rune(a[0].S)
			if len(r) == 0 {
				return types.IntDatum(0), nil
			}
			return types.IntDatum(int64(r[0])), nil
		}}},
		"mod": {
			{args: []types.Type{types.TypeInt4, types.TypeInt4}, Result: fixed(types.TypeInt4), Fn: fnMod(types.TypeInt4)},
			{args: []types.Type{types.TypeInt8, types.TypeInt8}, Result: fixed(types.TypeInt8), Fn: fnMod(types.TypeInt8)},
			{args: []types.Type{types.TypeNumeric, types.TypeNumeric}, Result: fixed(types.TypeNumeric), Fn: fnMod(types.TypeNumeric)},
		},
		"power": {{args: []types.Type{types.TypeFloat8, types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.FloatDatum(math.Pow(a[0].F, a[1].F)), nil
		}}},
		"trunc": {{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeFloat8), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return types.FloatDatum(math.Trunc(a[0].F)), nil
		}}},
		"lpad": {
			{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnPad(true)},
			{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeText}, Result: fixed(types.TypeText), Fn: fnPad(true)},
		},
		"rpad": {
			{args: []types.Type{types.TypeText, types.TypeInt4}, Result: fixed(types.TypeText), Fn: fnPad(false)},
			{args: []types.Type{types.TypeText, types.TypeInt4, types.TypeText}, Result: fixed(types.TypeText), Fn: fnPad(false)},
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
		"current_database": {{Result: fixed(types.TypeName), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.TextDatum(ec.S.Database), nil
		}}},
		"current_user": {{Result: fixed(types.TypeName), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.TextDatum(ec.S.User), nil
		}}},
		"pg_postmaster_start_time": {{Result: fixed(types.TypeTimestamptz), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
			return types.IntDatum(ec.S.Started.UnixMicro()), nil
		}}},
	}
}

func absInt(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

func FnNow(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
	return types.IntDatum(ec.S.XactStart.UnixMicro()), nil
}

func fnLength(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	return types.IntDatum(int64(len([]rune(a[0].S)))), nil
}

func fnSubstr(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	r := []rune(a[0].S)
	start := a[1].I // 1-based, may be <= 0
	end := int64(len(r)) + 1
	if len(a) == 3 {
		if a[2].I < 0 {
			return types.Datum{}, pgerr.New("22011", "negative substring length not allowed")
		}
		end = start + a[2].I
	}
	if start < 1 {
		start = 1
	}
	if end > int64(len(r))+1 {
		end = int64(len(r)) + 1
	}
	if start >= end {
		return types.TextDatum(""), nil
	}
	return types.TextDatum(string(r[start-1 : end-1])), nil
}

func fnPad(left bool) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		fill := " "
		if len(a) == 3 {
			fill = a[2].S
		}
		r := []rune(a[0].S)
		n := int(a[1].I)
		if n <= 0 {
			return types.TextDatum(""), nil
		}
		if len(r) >= n {
			return types.TextDatum(string(r[:n])), nil
		}
		if fill == "" {
			return types.TextDatum(string(r)), nil
		}
		fr := []rune(fill)
		pad := make([]rune, 0, n-len(r))
		for i := 0; len(pad) < n-len(r); i++ {
			pad = append(pad, fr[i%len(fr)])
		}
		if left {
			return types.TextDatum(string(pad) + string(r)), nil
		}
		return types.TextDatum(string(r) + string(pad)), nil
	}
}

func fnCurrentSetting(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	v, _, err := ec.S.Gucs.Show(a[0].S)
	if err != nil {
		if len(a) == 2 && a[1].I != 0 {
			return types.NullDatum, nil
		}
		return types.Datum{}, err
	}
	return types.TextDatum(v), nil
}

func fnSetConfig(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	if a[0].Null {
		return types.Datum{}, pgerr.New(pgerr.NullValueNotAllowed, "SET requires parameter name")
	}
	local := !a[2].Null && a[2].I != 0
	var err error
	if a[1].Null {
		err = ec.S.SetDefault(a[0].S, local)
	} else {
		err = ec.S.Set(a[0].S, a[1].S, local)
	}
	if err != nil {
		return types.Datum{}, err
	}
	v, _, err := ec.S.Gucs.Show(a[0].S)
	if err != nil {
		return types.Datum{}, err
	}
	return types.TextDatum(v), nil
}

func fnSleep(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	secs := a[0].F
	if math.IsNaN(secs) || secs <= 0 {
		return types.Datum{}, nil
	}
	if secs > 1e7 {
		secs = 1e7
	}
	d := time.Duration(secs * float64(time.Second))
	ec.S.Proc.SetWaitEvent(locks.WaitEventPgSleep)
	defer ec.S.Proc.ClearWaitEvent()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return types.Datum{}, nil
	case <-ec.Ctx.Done():
		return types.Datum{}, context.Cause(ec.Ctx)
	}
}

func (b *Builtin) ArgType(i int) types.Type {
	if i < len(b.args) {
		return b.args[i]
	}
	if b.variadic && len(b.args) > 0 {
		return b.args[len(b.args)-1]
	}
	return types.Type{}
}

func (b *Builtin) Accepts(n int) bool {
	min := len(b.args)
	if b.minArgs >= 0 && b.variadic {
		min = b.minArgs
	}
	if b.variadic {
		return n >= min
	}
	return n == len(b.args)
}

// implicitly reports whether a value of type from can be passed where to
// is declared, without an explicit cast.
func Implicitly(from, to types.Type) bool {
	if from.OID == to.OID || from.OID == types.OIDUnknown || from.OID == 0 {
		return true
	}
	fc, tc := types.CategoryOf(from), types.CategoryOf(to)
	switch {
	case fc == types.CatString && tc == types.CatString:
		return true
	case fc == types.CatInt && (tc == types.CatInt || tc == types.CatNumeric || tc == types.CatFloat):
		if tc == types.CatInt {
			return expr.WiderInt(from, to).OID == to.OID
		}
		return true
	case fc == types.CatNumeric && tc == types.CatFloat:
		return true
	case from.OID == types.OIDFloat4 && to.OID == types.OIDFloat8:
		return true
	}
	return false
}

var ErrNoFunction = pgerr.New(pgerr.UndefinedFunction, "function does not exist")

func SqlValueFunctionName(op pg.SQLValueFunctionOp) string {
	switch op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return "current_date"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return "current_timestamp"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return "localtimestamp"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return "current_user"
	case pg.SQLValueFunctionOp_SVFOP_USER:
		return "user"
	case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return "session_user"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return "current_catalog"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return "current_schema"
	}
	return "?column?"
}

func fnStrpos(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	i := strings.Index(a[0].S, a[1].S)
	if i < 0 {
		return types.IntDatum(0), nil
	}
	return types.IntDatum(int64(len([]rune(a[0].S[:i])) + 1)), nil
}

func fnSplitPart(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	n := a[2].I
	if n == 0 {
		return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "field position must not be zero")
	}
	if a[1].S == "" {
		if n == 1 || n == -1 {
			return a[0], nil
		}
		return types.TextDatum(""), nil
	}
	parts := strings.Split(a[0].S, a[1].S)
	if n < 0 {
		n = int64(len(parts)) + n + 1
	}
	if n < 1 || n > int64(len(parts)) {
		return types.TextDatum(""), nil
	}
	return types.TextDatum(parts[n-1]), nil
}

func fnTrim(left, right bool) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		set := " "
		if len(a) == 2 {
			set = a[1].S
		}
		v := a[0].S
		if left {
			v = strings.TrimLeft(v, set)
		}
		if right {
			v = strings.TrimRight(v, set)
		}
		return types.TextDatum(v), nil
	}
}

func fnLeftRight(left bool) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		r := []rune(a[0].S)
		n := int(a[1].I)
		if n < 0 {
			n = len(r) + n
			if n < 0 {
				n = 0
			}
		}
		if n > len(r) {
			n = len(r)
		}
		if left {
			return types.TextDatum(string(r[:n])), nil
		}
		return types.TextDatum(string(r[len(r)-n:])), nil
	}
}

func fnReverse(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	r := []rune(a[0].S)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return types.TextDatum(string(r)), nil
}

func fnInitcap(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	b := []byte(asciiCase(a[0].S, false))
	start := true
	for i, c := range b {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c > 127
		if start && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		start = !alnum
	}
	return types.TextDatum(string(b)), nil
}

// asciiCase maps ASCII letters only, as PostgreSQL does under the C
// collation lockd compares with.
func asciiCase(s string, upper bool) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case upper && c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

func fnMod(t types.Type) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	f := expr.ArithFn("%", t)
	return func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) { return f(ec, a[0], a[1]) }
}

// fnLikeEscape rewrites a LIKE pattern with a custom escape character
// into one with backslash escapes (ESCAPE ” means no escape at all).
func fnLikeEscape(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	esc := []rune(a[1].S)
	if len(esc) > 1 {
		return types.Datum{}, pgerr.New("22019", "invalid escape string").WithHint("Escape string must be empty or one character.")
	}
	var b strings.Builder
	r := []rune(a[0].S)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case len(esc) == 0:
			if c == '\\' {
				b.WriteString(`\\`)
			} else {
				b.WriteRune(c)
			}
		case c == esc[0]:
			if i+1 >= len(r) {
				return types.Datum{}, pgerr.New("22025", "LIKE pattern must not end with escape character")
			}
			i++
			b.WriteByte('\\')
			b.WriteRune(r[i])
		case c == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(c)
		}
	}
	return types.TextDatum(b.String()), nil
}

// quoteLiteral is quote_literal: the string in single quotes, quotes
// doubled, and an E prefix with doubled backslashes if it has any.
func QuoteLiteral(v string) string {
	q := "'" + strings.ReplaceAll(v, "'", "''") + "'"
	if strings.Contains(v, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// formatFn is format(fmt, args...) with %s, %I, %L and %%.
func FormatFn(ec *expr.EvalCtx, v []types.Datum, text func(*expr.EvalCtx, int, types.Datum) string) (types.Datum, error) {
	if v[0].Null {
		return types.NullDatum, nil
	}
	f := v[0].S
	var b strings.Builder
	next := 1
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "unterminated format() type specifier").
				WithHint("For a single \"%\" use \"%%\".")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if next >= len(v) {
			return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "too few arguments for format()")
		}
		d := v[next]
		next++
		switch f[i] {
		case 's':
			if !d.Null {
				b.WriteString(text(ec, next-1, d))
			}
		case 'I':
			if d.Null {
				return types.Datum{}, pgerr.New(pgerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			b.WriteString(types.QuoteIdent(text(ec, next-1, d)))
		case 'L':
			if d.Null {
				b.WriteString("NULL")
			} else {
				b.WriteString(QuoteLiteral(text(ec, next-1, d)))
			}
		default:
			return types.Datum{}, pgerr.New(pgerr.InvalidParameterValue, "unrecognized format() type specifier \"%c\"", f[i]).
				WithHint("For a single \"%\" use \"%%\".")
		}
	}
	return types.TextDatum(b.String()), nil
}

// fnRegexSubstring is substring(string from pattern): the part matching
// the first parenthesised subexpression, or the whole match.
func fnRegexSubstring(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	re, err := expr.CompileRegex(a[1].S, false)
	if err != nil {
		return types.Datum{}, err
	}
	m := re.FindStringSubmatch(a[0].S)
	switch {
	case m == nil:
		return types.NullDatum, nil
	case len(m) > 1:
		return types.TextDatum(m[1]), nil
	}
	return types.TextDatum(m[0]), nil
}
