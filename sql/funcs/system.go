package funcs

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"lockd/internal/buildinfo"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
)

func TsDatum(t time.Time) types.Datum {
	if t.IsZero() {
		return types.NullDatum
	}
	return types.IntDatum(t.UnixMicro())
}

func TextOrNull(s string) types.Datum {
	if s == "" {
		return types.NullDatum
	}
	return types.TextDatum(s)
}

func FnNow(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
	return types.IntDatum(ec.B.XactStart.UnixMicro()), nil
}

func fnCurrentSetting(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	v, _, err := ec.B.Settings.Show(a[0].S)
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
		err = ec.B.SetDefault(a[0].S, local)
	} else {
		err = ec.B.Set(a[0].S, a[1].S, local)
	}
	if err != nil {
		return types.Datum{}, err
	}
	v, _, err := ec.B.Settings.Show(a[0].S)
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
	ec.B.Proc.SetWaitEvent(locks.WaitEventPgSleep)
	defer ec.B.Proc.ClearWaitEvent()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return types.Datum{}, nil
	case <-ec.Ctx.Done():
		return types.Datum{}, context.Cause(ec.Ctx)
	}
}

// systemFuncs are the session and system information functions, settings
// functions and clocks (PostgreSQL: utils/adt/misc.c, timestamp.c, guc.c).
var systemFuncs = map[string][]Builtin{
	"version": {{Result: fixed(types.TypeText), Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
		return types.TextDatum("PostgreSQL 15.0 (lockd " + buildinfo.Version() + ") compatible lock-study server, written in Go"), nil
	}}},
	"current_setting": {
		{args: []types.Type{types.TypeText}, Result: fixed(types.TypeText), Volatile: true, Fn: fnCurrentSetting},
		{args: []types.Type{types.TypeText, types.TypeBool}, Result: fixed(types.TypeText), Volatile: true, Fn: fnCurrentSetting},
	},
	"set_config": {{args: []types.Type{types.TypeText, types.TypeText, types.TypeBool}, Result: fixed(types.TypeText), Volatile: true, NonStrict: true, Fn: fnSetConfig}},
	"pg_reload_conf": {{Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		if !ec.B.Superuser() { // EXECUTE is revoked from PUBLIC in PostgreSQL
			return types.Datum{}, pgerr.New(pgerr.InsufficientPrivilege, "permission denied for function pg_reload_conf")
		}
		return types.BoolDatum(ec.B.Host.ReloadConfig()), nil
	}}},
	"pg_sleep": {{args: []types.Type{types.TypeFloat8}, Result: fixed(types.TypeVoid), Volatile: true, Fn: fnSleep}},
	// lockd's table activity counts are current at every commit
	// (sql/stats): there is nothing to flush, and no snapshot to clear.
	"pg_stat_force_next_flush": {{Result: fixed(types.TypeVoid), Volatile: true, Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
		return types.Datum{}, nil
	}}},
	// pg_stat_reset restarts the database's counters: pg_stat_database's
	// and every table's cumulative counts (sql/dbstats.go)
	"pg_stat_reset": {{Result: fixed(types.TypeVoid), Volatile: true, Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		ec.B.ResetStats()
		return types.Datum{}, nil
	}}},
	// pg_stat_reset_shared restarts a server-wide view's counters
	// (sql/sysviews/resets.go)
	"pg_stat_reset_shared": {{args: []types.Type{types.TypeText}, Result: fixed(types.TypeVoid), Volatile: true, Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return types.Datum{}, ec.B.ResetShared(a[0].S)
	}}},
	"pg_stat_clear_snapshot": {{Result: fixed(types.TypeVoid), Volatile: true, Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
		return types.Datum{}, nil
	}}},
	"pg_backend_pid": {{Result: fixed(types.TypeInt4), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return types.IntDatum(int64(ec.B.PID)), nil
	}}},
	"pg_cancel_backend": {{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		return ec.B.SignalBackend(int32(a[0].I), false)
	}}},
	"pg_terminate_backend": {
		{args: []types.Type{types.TypeInt4}, Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return ec.B.SignalBackend(int32(a[0].I), true)
		}},
		{args: []types.Type{types.TypeInt4, types.TypeInt8}, Result: fixed(types.TypeBool), Volatile: true, Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
			return ec.B.SignalBackend(int32(a[0].I), true)
		}},
	},
	"now":                   {{Result: fixed(types.TypeTimestamptz), Fn: FnNow}},
	"transaction_timestamp": {{Result: fixed(types.TypeTimestamptz), Fn: FnNow}},
	"statement_timestamp": {{Result: fixed(types.TypeTimestamptz), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return types.IntDatum(ec.B.StmtStart.UnixMicro()), nil
	}}},
	"clock_timestamp": {{Result: fixed(types.TypeTimestamptz), Volatile: true, Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
		return types.IntDatum(time.Now().UnixMicro()), nil
	}}},
	"random": {{Result: fixed(types.TypeFloat8), Volatile: true, Fn: func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
		return types.FloatDatum(rand.Float64()), nil
	}}},
	"current_database": {{Result: fixed(types.TypeName), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return types.TextDatum(ec.B.Database), nil
	}}},
	"current_user": {{Result: fixed(types.TypeName), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return types.TextDatum(ec.B.User), nil
	}}},
	"pg_postmaster_start_time": {{Result: fixed(types.TypeTimestamptz), Fn: func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		return types.IntDatum(ec.B.Started.UnixMicro()), nil
	}}},
}
