package sql

import (
	"errors"
	"time"

	"lockd/locks"
	"lockd/pgerr"
)

// DatabaseOID is the OID lockd gives its one database, as the "postgres"
// database has in a fresh PostgreSQL cluster. Lock tags carry it.
const DatabaseOID = 5

// lockTimeout is the session's lock_timeout.
func (s *Backend) lockTimeout() time.Duration {
	return time.Duration(s.gucs.Int("lock_timeout")) * time.Millisecond
}

// lockOptions are the session's heavyweight-lock wait options: its
// lock_timeout and deadlock_timeout (both per session, as in PostgreSQL).
func (s *Backend) lockOptions(session, nowait bool) locks.LockOptions {
	return locks.LockOptions{
		NoWait: nowait, Session: session, LockTimeout: s.lockTimeout(),
		DeadlockTimeout: time.Duration(s.gucs.Int("deadlock_timeout")) * time.Millisecond,
	}
}

// acquire takes a heavyweight lock for this session, waiting as
// PostgreSQL does (cancel, statement_timeout, lock_timeout, deadlock
// detection). With nowait it reports false instead of waiting.
func (s *Backend) acquire(ec *evalCtx, tag locks.LockTag, mode locks.LockMode, session, nowait bool) (bool, error) {
	err := s.locks.Lock(ec.ctx, s.proc, tag, mode, s.lockOptions(session, nowait))
	if errors.Is(err, locks.ErrLockNotAvailable) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

type advisoryFn struct {
	shared, session, try, unlock bool
}

var advisoryFns = map[string]advisoryFn{
	"pg_advisory_lock":                 {session: true},
	"pg_advisory_lock_shared":          {session: true, shared: true},
	"pg_try_advisory_lock":             {session: true, try: true},
	"pg_try_advisory_lock_shared":      {session: true, try: true, shared: true},
	"pg_advisory_unlock":               {session: true, unlock: true},
	"pg_advisory_unlock_shared":        {session: true, unlock: true, shared: true},
	"pg_advisory_xact_lock":            {},
	"pg_advisory_xact_lock_shared":     {shared: true},
	"pg_try_advisory_xact_lock":        {try: true},
	"pg_try_advisory_xact_lock_shared": {try: true, shared: true},
}

// lockFunc resolves the lock-related SQL functions: the advisory-lock
// family (bigint and (int, int) keys) and pg_blocking_pids.
func lockFunc(a *analyzer, name string, args []expr, loc int32) (expr, bool, error) {
	switch name {
	case "pg_advisory_unlock_all":
		if len(args) != 0 {
			return nil, true, noFunction(name, args, loc)
		}
		return &funcExpr{name: name, t: TypeVoid, volatile: true, fn: func(ec *evalCtx, _ []Datum) (Datum, error) {
			ec.s.locks.ReleaseSessionLocks(ec.s.proc, true)
			return Datum{}, nil
		}}, true, nil
	case "pg_blocking_pids":
		if len(args) != 1 {
			return nil, true, noFunction(name, args, loc)
		}
		arg, err := a.coerceArg(args[0], TypeInt4, name, loc)
		if err != nil {
			return nil, true, err
		}
		return &funcExpr{name: name, t: TypeInt4Array, args: []expr{arg}, volatile: true, fn: func(ec *evalCtx, v []Datum) (Datum, error) {
			pids := ec.s.locks.BlockingPIDs(int32(v[0].I))
			out := Datum{A: make([]Datum, len(pids))}
			for i, p := range pids {
				out.A[i] = intDatum(int64(p))
			}
			return out, nil
		}}, true, nil
	}
	fn, ok := advisoryFns[name]
	if !ok {
		return nil, false, nil
	}
	var keyTypes []Type
	switch len(args) {
	case 1:
		keyTypes = []Type{TypeInt8}
	case 2:
		keyTypes = []Type{TypeInt4, TypeInt4}
	default:
		return nil, true, noFunction(name, args, loc)
	}
	for i := range args {
		if !implicitly(args[i].typ(), keyTypes[i]) {
			return nil, true, noFunction(name, args, loc)
		}
		var err error
		if args[i], err = a.coerceArg(args[i], keyTypes[i], name, loc); err != nil {
			return nil, true, err
		}
	}
	mode := locks.ExclusiveLock
	if fn.shared {
		mode = locks.ShareLock
	}
	result := TypeVoid
	if fn.try || fn.unlock {
		result = TypeBool
	}
	tagOf := func(v []Datum) locks.LockTag {
		if len(v) == 1 {
			return locks.AdvisoryTag64(DatabaseOID, v[0].I)
		}
		return locks.AdvisoryTag32(DatabaseOID, int32(v[0].I), int32(v[1].I))
	}
	return &funcExpr{name: name, t: result, args: args, volatile: true, fn: func(ec *evalCtx, v []Datum) (Datum, error) {
		s := ec.s
		tag := tagOf(v)
		if fn.unlock {
			if !s.locks.Unlock(s.proc, tag, mode, true) {
				s.notice(pgerr.SeverityWarning, pgerr.Warning, "you don't own a lock of type "+mode.String())
				return boolDatum(false), nil
			}
			return boolDatum(true), nil
		}
		got, err := s.acquire(ec, tag, mode, fn.session, fn.try)
		if err != nil {
			return Datum{}, err
		}
		if fn.try {
			return boolDatum(got), nil
		}
		return Datum{}, nil
	}}, true, nil
}

// coerceArg converts a function argument to its declared type.
func (a *analyzer) coerceArg(e expr, t Type, fname string, loc int32) (expr, error) {
	var err error
	if isUnknown(e) {
		e, err = a.coerceUnknown(e, t)
	} else {
		e, err = a.castTo(e, t, false)
	}
	if err != nil {
		return nil, posErr(pgerr.From(err), loc)
	}
	return e, nil
}
