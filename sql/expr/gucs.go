package expr

import "lockd/guc"

// The settings read on every statement or transaction, by Key (a name
// lookup per read was 2% of a select-only backend's CPU).
var (
	gucByteaOutput         = guc.MustKey("bytea_output")
	gucTimeZone            = guc.MustKey("TimeZone")
	gucTransactionReadOnly = guc.MustKey("transaction_read_only")
	gucLockTimeout         = guc.MustKey("lock_timeout")
	gucDeadlockTimeout     = guc.MustKey("deadlock_timeout")
	gucLogLockWaits        = guc.MustKey("log_lock_waits")
)
