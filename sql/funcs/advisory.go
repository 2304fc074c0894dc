package funcs

type advisoryFn struct {
	Shared, Session, Try, Unlock bool
}

var AdvisoryFns = map[string]advisoryFn{
	"pg_advisory_lock":                 {Session: true},
	"pg_advisory_lock_shared":          {Session: true, Shared: true},
	"pg_try_advisory_lock":             {Session: true, Try: true},
	"pg_try_advisory_lock_shared":      {Session: true, Try: true, Shared: true},
	"pg_advisory_unlock":               {Session: true, Unlock: true},
	"pg_advisory_unlock_shared":        {Session: true, Unlock: true, Shared: true},
	"pg_advisory_xact_lock":            {},
	"pg_advisory_xact_lock_shared":     {Shared: true},
	"pg_try_advisory_xact_lock":        {Try: true},
	"pg_try_advisory_xact_lock_shared": {Try: true, Shared: true},
}
