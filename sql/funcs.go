package sql

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

	"lockd/internal/buildinfo"
	"lockd/locks"
	"lockd/pgerr"
)

// builtin describes a callable function: argument types to coerce to
// (nil = keep the argument's own type), the result type, and the body.
type builtin struct {
	args      []Type
	variadic  bool // last arg type repeats
	minArgs   int  // -1: len(args)
	result    func(args []expr) Type
	nonStrict bool
	volatile  bool
	fn        func(ec *evalCtx, args []Datum) (Datum, error)
}

func fixed(t Type) func([]expr) Type { return func([]expr) Type { return t } }

var builtins map[string][]builtin

func init() {
	builtins = map[string][]builtin{
		"version": {{result: fixed(TypeText), fn: func(*evalCtx, []Datum) (Datum, error) {
			return textDatum("PostgreSQL 15.0 (lockd " + buildinfo.Version() + ") compatible lock-study server, written in Go"), nil
		}}},
		"current_setting": {
			{args: []Type{TypeText}, result: fixed(TypeText), volatile: true, fn: fnCurrentSetting},
			{args: []Type{TypeText, TypeBool}, result: fixed(TypeText), volatile: true, fn: fnCurrentSetting},
		},
		"set_config": {{args: []Type{TypeText, TypeText, TypeBool}, result: fixed(TypeText), volatile: true, nonStrict: true, fn: fnSetConfig}},
		"pg_reload_conf": {{result: fixed(TypeBool), volatile: true, fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return boolDatum(ec.s.eng.host().ReloadConfig()), nil
		}}},
		"pg_sleep": {{args: []Type{TypeFloat8}, result: fixed(TypeVoid), volatile: true, fn: fnSleep}},
		"pg_backend_pid": {{result: fixed(TypeInt4), fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return intDatum(int64(ec.s.pid)), nil
		}}},
		"pg_cancel_backend": {{args: []Type{TypeInt4}, result: fixed(TypeBool), volatile: true, fn: func(ec *evalCtx, a []Datum) (Datum, error) {
			return ec.s.signalBackend(int32(a[0].I), false)
		}}},
		"pg_terminate_backend": {
			{args: []Type{TypeInt4}, result: fixed(TypeBool), volatile: true, fn: func(ec *evalCtx, a []Datum) (Datum, error) {
				return ec.s.signalBackend(int32(a[0].I), true)
			}},
			{args: []Type{TypeInt4, TypeInt8}, result: fixed(TypeBool), volatile: true, fn: func(ec *evalCtx, a []Datum) (Datum, error) {
				return ec.s.signalBackend(int32(a[0].I), true)
			}},
		},
		"now":                   {{result: fixed(TypeTimestamptz), fn: fnNow}},
		"transaction_timestamp": {{result: fixed(TypeTimestamptz), fn: fnNow}},
		"statement_timestamp": {{result: fixed(TypeTimestamptz), fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return intDatum(ec.s.stmtStart.UnixMicro()), nil
		}}},
		"clock_timestamp": {{result: fixed(TypeTimestamptz), volatile: true, fn: func(*evalCtx, []Datum) (Datum, error) {
			return intDatum(time.Now().UnixMicro()), nil
		}}},
		"random": {{result: fixed(TypeFloat8), volatile: true, fn: func(*evalCtx, []Datum) (Datum, error) {
			return floatDatum(rand.Float64()), nil
		}}},
		"abs": {
			{args: []Type{TypeInt2}, result: fixed(TypeInt2), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				if a[0].I == math.MinInt16 {
					return Datum{}, outOfRange(TypeInt2)
				}
				return intDatum(absInt(a[0].I)), nil
			}},
			{args: []Type{TypeInt4}, result: fixed(TypeInt4), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				if a[0].I == math.MinInt32 {
					return Datum{}, outOfRange(TypeInt4)
				}
				return intDatum(absInt(a[0].I)), nil
			}},
			{args: []Type{TypeInt8}, result: fixed(TypeInt8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				if a[0].I == math.MinInt64 {
					return Datum{}, outOfRange(TypeInt8)
				}
				return intDatum(absInt(a[0].I)), nil
			}},
			{args: []Type{TypeNumeric}, result: fixed(TypeNumeric), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				return textDatum(strings.TrimPrefix(a[0].S, "-")), nil
			}},
			{args: []Type{TypeFloat8}, result: fixed(TypeFloat8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				return floatDatum(math.Abs(a[0].F)), nil
			}},
		},
		"length":      {{args: []Type{TypeText}, result: fixed(TypeInt4), fn: fnLength}},
		"char_length": {{args: []Type{TypeText}, result: fixed(TypeInt4), fn: fnLength}},
		"octet_length": {{args: []Type{TypeText}, result: fixed(TypeInt4), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return intDatum(int64(len(a[0].S))), nil
		}}},
		"upper": {{args: []Type{TypeText}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return textDatum(asciiCase(a[0].S, true)), nil
		}}},
		"lower": {{args: []Type{TypeText}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return textDatum(asciiCase(a[0].S, false)), nil
		}}},
		"md5": {{args: []Type{TypeText}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			sum := md5.Sum([]byte(a[0].S))
			return textDatum(hex.EncodeToString(sum[:])), nil
		}}},
		"repeat": {{args: []Type{TypeText, TypeInt4}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			if a[1].I <= 0 {
				return textDatum(""), nil
			}
			if int64(len(a[0].S))*a[1].I > 1<<30 {
				return Datum{}, pgerr.New(pgerr.ProgramLimitExceeded, "requested length too large")
			}
			return textDatum(strings.Repeat(a[0].S, int(a[1].I))), nil
		}}},
		"substr": {
			{args: []Type{TypeText, TypeInt4}, result: fixed(TypeText), fn: fnSubstr},
			{args: []Type{TypeText, TypeInt4, TypeInt4}, result: fixed(TypeText), fn: fnSubstr},
		},
		"substring": {
			{args: []Type{TypeText, TypeInt4}, result: fixed(TypeText), fn: fnSubstr},
			{args: []Type{TypeText, TypeInt4, TypeInt4}, result: fixed(TypeText), fn: fnSubstr},
			{args: []Type{TypeText, TypeText}, result: fixed(TypeText), fn: fnRegexSubstring},
		},
		"position":    {{args: []Type{TypeText, TypeText}, result: fixed(TypeInt4), fn: fnStrpos}},
		"like_escape": {{args: []Type{TypeText, TypeText}, result: fixed(TypeText), fn: fnLikeEscape}},
		"strpos":      {{args: []Type{TypeText, TypeText}, result: fixed(TypeInt4), fn: fnStrpos}},
		"replace": {{args: []Type{TypeText, TypeText, TypeText}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			if a[1].S == "" {
				return a[0], nil
			}
			return textDatum(strings.ReplaceAll(a[0].S, a[1].S, a[2].S)), nil
		}}},
		"split_part": {{args: []Type{TypeText, TypeText, TypeInt4}, result: fixed(TypeText), fn: fnSplitPart}},
		"btrim": {
			{args: []Type{TypeText}, result: fixed(TypeText), fn: fnTrim(true, true)},
			{args: []Type{TypeText, TypeText}, result: fixed(TypeText), fn: fnTrim(true, true)},
		},
		"ltrim": {
			{args: []Type{TypeText}, result: fixed(TypeText), fn: fnTrim(true, false)},
			{args: []Type{TypeText, TypeText}, result: fixed(TypeText), fn: fnTrim(true, false)},
		},
		"rtrim": {
			{args: []Type{TypeText}, result: fixed(TypeText), fn: fnTrim(false, true)},
			{args: []Type{TypeText, TypeText}, result: fixed(TypeText), fn: fnTrim(false, true)},
		},
		"left":    {{args: []Type{TypeText, TypeInt4}, result: fixed(TypeText), fn: fnLeftRight(true)}},
		"right":   {{args: []Type{TypeText, TypeInt4}, result: fixed(TypeText), fn: fnLeftRight(false)}},
		"reverse": {{args: []Type{TypeText}, result: fixed(TypeText), fn: fnReverse}},
		"initcap": {{args: []Type{TypeText}, result: fixed(TypeText), fn: fnInitcap}},
		"factorial": {{args: []Type{TypeInt8}, result: fixed(TypeNumeric), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			if a[0].I < 0 {
				return Datum{}, pgerr.New(pgerr.InvalidParameterValue, "factorial of a negative number is undefined")
			}
			if a[0].I > 32177 {
				return Datum{}, pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
			}
			var r big.Int
			r.MulRange(1, a[0].I)
			if a[0].I == 0 {
				r.SetInt64(1)
			}
			return textDatum(r.String()), nil
		}}},
		"to_hex": {
			{args: []Type{TypeInt4}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				return textDatum(strconv.FormatUint(uint64(uint32(a[0].I)), 16)), nil
			}},
			{args: []Type{TypeInt8}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				return textDatum(strconv.FormatUint(uint64(a[0].I), 16)), nil
			}},
		},
		"bit_length": {{args: []Type{TypeText}, result: fixed(TypeInt4), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return intDatum(int64(8 * len(a[0].S))), nil
		}}},
		"quote_literal": {{args: []Type{TypeText}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return textDatum(quoteLiteral(a[0].S)), nil
		}}},
		"quote_nullable": {{args: []Type{TypeText}, nonStrict: true, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			if a[0].Null {
				return textDatum("NULL"), nil
			}
			return textDatum(quoteLiteral(a[0].S)), nil
		}}},
		"quote_ident": {{args: []Type{TypeText}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return textDatum(quoteIdent(a[0].S)), nil
		}}},
		"chr": {{args: []Type{TypeInt4}, result: fixed(TypeText), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			if a[0].I <= 0 || a[0].I > 0x10ffff {
				return Datum{}, pgerr.New(pgerr.ProgramLimitExceeded, "requested character too large for encoding: %d", a[0].I)
			}
			return textDatum(string(rune(a[0].I))), nil
		}}},
		"ascii": {{args: []Type{TypeText}, result: fixed(TypeInt4), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			r := []rune(a[0].S)
			if len(r) == 0 {
				return intDatum(0), nil
			}
			return intDatum(int64(r[0])), nil
		}}},
		"mod": {
			{args: []Type{TypeInt4, TypeInt4}, result: fixed(TypeInt4), fn: fnMod(TypeInt4)},
			{args: []Type{TypeInt8, TypeInt8}, result: fixed(TypeInt8), fn: fnMod(TypeInt8)},
			{args: []Type{TypeNumeric, TypeNumeric}, result: fixed(TypeNumeric), fn: fnMod(TypeNumeric)},
		},
		"power": {{args: []Type{TypeFloat8, TypeFloat8}, result: fixed(TypeFloat8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return floatDatum(math.Pow(a[0].F, a[1].F)), nil
		}}},
		"trunc": {{args: []Type{TypeFloat8}, result: fixed(TypeFloat8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return floatDatum(math.Trunc(a[0].F)), nil
		}}},
		"lpad": {
			{args: []Type{TypeText, TypeInt4}, result: fixed(TypeText), fn: fnPad(true)},
			{args: []Type{TypeText, TypeInt4, TypeText}, result: fixed(TypeText), fn: fnPad(true)},
		},
		"rpad": {
			{args: []Type{TypeText, TypeInt4}, result: fixed(TypeText), fn: fnPad(false)},
			{args: []Type{TypeText, TypeInt4, TypeText}, result: fixed(TypeText), fn: fnPad(false)},
		},
		"round": {
			{args: []Type{TypeFloat8}, result: fixed(TypeFloat8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				return floatDatum(math.RoundToEven(a[0].F)), nil
			}},
			{args: []Type{TypeNumeric}, result: fixed(TypeNumeric), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				return textDatum(mustNumeric(a[0].S).round(0).String()), nil
			}},
			{args: []Type{TypeNumeric, TypeInt4}, result: fixed(TypeNumeric), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
				return textDatum(mustNumeric(a[0].S).round(int32(a[1].I)).String()), nil
			}},
		},
		"floor": {{args: []Type{TypeFloat8}, result: fixed(TypeFloat8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return floatDatum(math.Floor(a[0].F)), nil
		}}},
		"ceil": {{args: []Type{TypeFloat8}, result: fixed(TypeFloat8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			return floatDatum(math.Ceil(a[0].F)), nil
		}}},
		"sqrt": {{args: []Type{TypeFloat8}, result: fixed(TypeFloat8), fn: func(_ *evalCtx, a []Datum) (Datum, error) {
			if a[0].F < 0 {
				return Datum{}, pgerr.New("2201F", "cannot take square root of a negative number")
			}
			return floatDatum(math.Sqrt(a[0].F)), nil
		}}},
		"current_database": {{result: fixed(TypeName), fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return textDatum(ec.s.database), nil
		}}},
		"current_user": {{result: fixed(TypeName), fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return textDatum(ec.s.user), nil
		}}},
		"pg_postmaster_start_time": {{result: fixed(TypeTimestamptz), fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return intDatum(ec.s.eng.started.UnixMicro()), nil
		}}},
	}
}

func absInt(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

func fnNow(ec *evalCtx, _ []Datum) (Datum, error) {
	return intDatum(ec.s.xactStart.UnixMicro()), nil
}

func fnLength(_ *evalCtx, a []Datum) (Datum, error) {
	return intDatum(int64(len([]rune(a[0].S)))), nil
}

func fnSubstr(_ *evalCtx, a []Datum) (Datum, error) {
	r := []rune(a[0].S)
	start := a[1].I // 1-based, may be <= 0
	end := int64(len(r)) + 1
	if len(a) == 3 {
		if a[2].I < 0 {
			return Datum{}, pgerr.New("22011", "negative substring length not allowed")
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
		return textDatum(""), nil
	}
	return textDatum(string(r[start-1 : end-1])), nil
}

func fnPad(left bool) func(*evalCtx, []Datum) (Datum, error) {
	return func(_ *evalCtx, a []Datum) (Datum, error) {
		fill := " "
		if len(a) == 3 {
			fill = a[2].S
		}
		r := []rune(a[0].S)
		n := int(a[1].I)
		if n <= 0 {
			return textDatum(""), nil
		}
		if len(r) >= n {
			return textDatum(string(r[:n])), nil
		}
		if fill == "" {
			return textDatum(string(r)), nil
		}
		fr := []rune(fill)
		pad := make([]rune, 0, n-len(r))
		for i := 0; len(pad) < n-len(r); i++ {
			pad = append(pad, fr[i%len(fr)])
		}
		if left {
			return textDatum(string(pad) + string(r)), nil
		}
		return textDatum(string(r) + string(pad)), nil
	}
}

func fnCurrentSetting(ec *evalCtx, a []Datum) (Datum, error) {
	v, _, err := ec.s.gucs.Show(a[0].S)
	if err != nil {
		if len(a) == 2 && a[1].I != 0 {
			return NullDatum, nil
		}
		return Datum{}, err
	}
	return textDatum(v), nil
}

func fnSetConfig(ec *evalCtx, a []Datum) (Datum, error) {
	if a[0].Null {
		return Datum{}, pgerr.New(pgerr.NullValueNotAllowed, "SET requires parameter name")
	}
	local := !a[2].Null && a[2].I != 0
	var err error
	if a[1].Null {
		err = ec.s.setDefault(a[0].S, local)
	} else {
		err = ec.s.set(a[0].S, a[1].S, local)
	}
	if err != nil {
		return Datum{}, err
	}
	v, _, err := ec.s.gucs.Show(a[0].S)
	if err != nil {
		return Datum{}, err
	}
	return textDatum(v), nil
}

func fnSleep(ec *evalCtx, a []Datum) (Datum, error) {
	secs := a[0].F
	if math.IsNaN(secs) || secs <= 0 {
		return Datum{}, nil
	}
	if secs > 1e7 {
		secs = 1e7
	}
	d := time.Duration(secs * float64(time.Second))
	ec.s.proc.SetWaitEvent(locks.WaitEventPgSleep)
	defer ec.s.proc.ClearWaitEvent()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return Datum{}, nil
	case <-ec.ctx.Done():
		return Datum{}, context.Cause(ec.ctx)
	}
}

// funcCall resolves and compiles a function call.
func (a *analyzer) funcCall(fc *pg.FuncCall) (expr, error) {
	schema, name := qualifiedName(fc.Funcname)
	name = strings.ToLower(name)
	if schema != "" && schema != "pg_catalog" {
		return nil, posErr(pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", schema), fc.Location)
	}
	if fc.Over != nil {
		return nil, posErr(pgerr.NotSupported("window functions are not supported"), fc.Location)
	}
	if isAggregate(name) {
		return a.aggregate(name, fc)
	}
	if isSRF(name) {
		return a.srfCall(name, fc)
	}
	var args []expr
	for _, n := range fc.Args {
		e, err := a.expr(n)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return nil, posErr(pgerr.New(pgerr.WrongObjectType, "%s is not an aggregate function", name), fc.Location)
	}
	switch name {
	case "concat", "concat_ws", "format":
		return a.textOfAny(name, args, fc.Location)
	}
	if name == "octet_length" && len(args) == 1 && args[0].typ().OID == OIDBpchar {
		// char(n) keeps its padding: octet_length counts it
		t := args[0].typ()
		return &funcExpr{name: name, t: TypeInt4, args: args, fn: func(_ *evalCtx, v []Datum) (Datum, error) {
			return intDatum(int64(len(appendText(nil, t, v[0], nil)))), nil
		}}, nil
	}
	if name == "pg_typeof" && len(args) == 1 {
		oid := args[0].typ().OID
		if oid == 0 {
			oid = OIDUnknown
		}
		return &constExpr{t: TypeRegtype, d: intDatum(int64(oid))}, nil
	}
	if fc.FuncVariadic {
		return nil, posErr(pgerr.NotSupported("VARIADIC arguments are not supported"), fc.Location)
	}
	cands, ok := builtins[name]
	if !ok {
		if e, ok, err := a.s.eng.lockFunc(a, name, args, fc.Location); ok || err != nil {
			return e, err
		}
		if e, ok, err := a.seqFunc(name, args, fc); ok || err != nil { // seqfuncs.go
			return e, err
		}
		if e, ok, err := a.arrayFunc(name, args, fc.Location); ok || err != nil {
			return e, err
		}
		if e, ok, err := a.catalogFunc(name, args, fc.Location); ok || err != nil {
			return e, err
		}
		if e, ok, err := a.s.eng.relSizeFunc(a, name, args, fc.Location); ok || err != nil {
			return e, err
		}
		return nil, noFunction(name, args, fc.Location)
	}
	b, err := pickBuiltin(cands, args)
	if err != nil {
		return nil, noFunction(name, args, fc.Location)
	}
	for i := range args {
		t := b.argType(i)
		if t.OID == 0 {
			continue
		}
		var cerr error
		if isUnknown(args[i]) {
			args[i], cerr = a.coerceUnknown(args[i], t)
		} else {
			args[i], cerr = a.castTo(args[i], t, false)
		}
		if cerr != nil {
			return nil, posErr(pgerr.From(cerr), fc.Location)
		}
	}
	return &funcExpr{name: name, t: b.result(args), args: args, nonStrict: b.nonStrict, volatile: b.volatile, fn: b.fn}, nil
}

func (b *builtin) argType(i int) Type {
	if i < len(b.args) {
		return b.args[i]
	}
	if b.variadic && len(b.args) > 0 {
		return b.args[len(b.args)-1]
	}
	return Type{}
}

func (b *builtin) accepts(n int) bool {
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
func implicitly(from, to Type) bool {
	if from.OID == to.OID || from.OID == OIDUnknown || from.OID == 0 {
		return true
	}
	fc, tc := categoryOf(from), categoryOf(to)
	switch {
	case fc == catString && tc == catString:
		return true
	case fc == catInt && (tc == catInt || tc == catNumeric || tc == catFloat):
		if tc == catInt {
			return widerInt(from, to).OID == to.OID
		}
		return true
	case fc == catNumeric && tc == catFloat:
		return true
	case from.OID == OIDFloat4 && to.OID == OIDFloat8:
		return true
	}
	return false
}

// pickBuiltin chooses the first candidate whose arguments match exactly
// (an unknown literal matching a string parameter, as unknown resolves to
// text), else the first that accepts them by implicit casts.
func pickBuiltin(cands []builtin, args []expr) (*builtin, error) {
	var fallback *builtin
	for i := range cands {
		b := &cands[i]
		if !b.accepts(len(args)) {
			continue
		}
		exact, ok := true, true
		for j, e := range args {
			t := b.argType(j)
			if t.OID == 0 {
				continue
			}
			if e.typ().OID != t.OID && !(isUnknown(e) && categoryOf(t) == catString) {
				exact = false
			}
			if !implicitly(e.typ(), t) {
				ok = false
			}
		}
		if exact && ok {
			return b, nil
		}
		if ok && fallback == nil {
			fallback = b
		}
	}
	if fallback != nil {
		return fallback, nil
	}
	return nil, errNoFunction
}

var errNoFunction = pgerr.New(pgerr.UndefinedFunction, "function does not exist")

func noFunction(name string, args []expr, loc int32) *pgerr.Error {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.typ().Name
	}
	return posErr(pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(names, ", ")).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts."), loc)
}

func sqlValueFunctionName(op pg.SQLValueFunctionOp) string {
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

func (a *analyzer) sqlValueFunction(f *pg.SQLValueFunction) (expr, error) {
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return &funcExpr{name: "current_timestamp", t: TypeTimestamptz, fn: fnNow}, nil
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return &castExpr{arg: &funcExpr{name: "now", t: TypeTimestamptz, fn: fnNow}, t: TypeTimestamp}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return &castExpr{arg: &funcExpr{name: "now", t: TypeTimestamptz, fn: fnNow}, t: TypeDate}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE,
		pg.SQLValueFunctionOp_SVFOP_USER, pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return &funcExpr{name: "current_user", t: TypeName, fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return textDatum(ec.s.user), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return &funcExpr{name: "current_catalog", t: TypeName, fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			return textDatum(ec.s.database), nil
		}}, nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return &constExpr{t: TypeName, d: textDatum("public")}, nil
	}
	return nil, posErr(pgerr.NotSupported("%s is not supported", sqlValueFunctionName(f.Op)), f.Location)
}

func fnStrpos(_ *evalCtx, a []Datum) (Datum, error) {
	i := strings.Index(a[0].S, a[1].S)
	if i < 0 {
		return intDatum(0), nil
	}
	return intDatum(int64(len([]rune(a[0].S[:i])) + 1)), nil
}

func fnSplitPart(_ *evalCtx, a []Datum) (Datum, error) {
	n := a[2].I
	if n == 0 {
		return Datum{}, pgerr.New(pgerr.InvalidParameterValue, "field position must not be zero")
	}
	if a[1].S == "" {
		if n == 1 || n == -1 {
			return a[0], nil
		}
		return textDatum(""), nil
	}
	parts := strings.Split(a[0].S, a[1].S)
	if n < 0 {
		n = int64(len(parts)) + n + 1
	}
	if n < 1 || n > int64(len(parts)) {
		return textDatum(""), nil
	}
	return textDatum(parts[n-1]), nil
}

func fnTrim(left, right bool) func(*evalCtx, []Datum) (Datum, error) {
	return func(_ *evalCtx, a []Datum) (Datum, error) {
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
		return textDatum(v), nil
	}
}

func fnLeftRight(left bool) func(*evalCtx, []Datum) (Datum, error) {
	return func(_ *evalCtx, a []Datum) (Datum, error) {
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
			return textDatum(string(r[:n])), nil
		}
		return textDatum(string(r[len(r)-n:])), nil
	}
}

func fnReverse(_ *evalCtx, a []Datum) (Datum, error) {
	r := []rune(a[0].S)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return textDatum(string(r)), nil
}

func fnInitcap(_ *evalCtx, a []Datum) (Datum, error) {
	b := []byte(asciiCase(a[0].S, false))
	start := true
	for i, c := range b {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c > 127
		if start && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		start = !alnum
	}
	return textDatum(string(b)), nil
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

func fnMod(t Type) func(*evalCtx, []Datum) (Datum, error) {
	f := arithFn("%", t)
	return func(ec *evalCtx, a []Datum) (Datum, error) { return f(ec, a[0], a[1]) }
}

// fnLikeEscape rewrites a LIKE pattern with a custom escape character
// into one with backslash escapes (ESCAPE ” means no escape at all).
func fnLikeEscape(_ *evalCtx, a []Datum) (Datum, error) {
	esc := []rune(a[1].S)
	if len(esc) > 1 {
		return Datum{}, pgerr.New("22019", "invalid escape string").WithHint("Escape string must be empty or one character.")
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
				return Datum{}, pgerr.New("22025", "LIKE pattern must not end with escape character")
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
	return textDatum(b.String()), nil
}

// quoteLiteral is quote_literal: the string in single quotes, quotes
// doubled, and an E prefix with doubled backslashes if it has any.
func quoteLiteral(v string) string {
	q := "'" + strings.ReplaceAll(v, "'", "''") + "'"
	if strings.Contains(v, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// textOfAny compiles concat, concat_ws and format, which take arguments
// of any type and use their text output (true prints as t).
func (a *analyzer) textOfAny(name string, args []expr, loc int32) (expr, error) {
	min := map[string]int{"concat": 1, "concat_ws": 2, "format": 1}[name]
	if len(args) < min {
		return nil, noFunction(name, args, loc)
	}
	for i := range args {
		if isUnknown(args[i]) {
			var err error
			if args[i], err = a.coerceUnknown(args[i], TypeText); err != nil {
				return nil, err
			}
		}
	}
	types := make([]Type, len(args))
	for i, e := range args {
		types[i] = e.typ()
	}
	text := func(ec *evalCtx, i int, d Datum) string {
		return string(appendText(nil, types[i], d, ec.formatCtx()))
	}
	var fn func(ec *evalCtx, v []Datum) (Datum, error)
	switch name {
	case "concat":
		fn = func(ec *evalCtx, v []Datum) (Datum, error) {
			var b strings.Builder
			for i, d := range v {
				if !d.Null {
					b.WriteString(text(ec, i, d))
				}
			}
			return textDatum(b.String()), nil
		}
	case "concat_ws":
		fn = func(ec *evalCtx, v []Datum) (Datum, error) {
			if v[0].Null {
				return NullDatum, nil
			}
			var parts []string
			for i, d := range v[1:] {
				if !d.Null {
					parts = append(parts, text(ec, i+1, d))
				}
			}
			return textDatum(strings.Join(parts, text(ec, 0, v[0]))), nil
		}
	default:
		fn = func(ec *evalCtx, v []Datum) (Datum, error) { return formatFn(ec, v, text) }
	}
	return &funcExpr{name: name, t: TypeText, args: args, nonStrict: true, fn: fn}, nil
}

// formatFn is format(fmt, args...) with %s, %I, %L and %%.
func formatFn(ec *evalCtx, v []Datum, text func(*evalCtx, int, Datum) string) (Datum, error) {
	if v[0].Null {
		return NullDatum, nil
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
			return Datum{}, pgerr.New(pgerr.InvalidParameterValue, "unterminated format() type specifier").
				WithHint("For a single \"%\" use \"%%\".")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if next >= len(v) {
			return Datum{}, pgerr.New(pgerr.InvalidParameterValue, "too few arguments for format()")
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
				return Datum{}, pgerr.New(pgerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			b.WriteString(quoteIdent(text(ec, next-1, d)))
		case 'L':
			if d.Null {
				b.WriteString("NULL")
			} else {
				b.WriteString(quoteLiteral(text(ec, next-1, d)))
			}
		default:
			return Datum{}, pgerr.New(pgerr.InvalidParameterValue, "unrecognized format() type specifier \"%c\"", f[i]).
				WithHint("For a single \"%\" use \"%%\".")
		}
	}
	return textDatum(b.String()), nil
}

// fnRegexSubstring is substring(string from pattern): the part matching
// the first parenthesised subexpression, or the whole match.
func fnRegexSubstring(_ *evalCtx, a []Datum) (Datum, error) {
	re, err := compileRegex(a[1].S, false)
	if err != nil {
		return Datum{}, err
	}
	m := re.FindStringSubmatch(a[0].S)
	switch {
	case m == nil:
		return NullDatum, nil
	case len(m) > 1:
		return textDatum(m[1]), nil
	}
	return textDatum(m[0]), nil
}
