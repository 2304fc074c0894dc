package sql

import "lockd/guc"

// The settings read on every statement or transaction, by Key (see
// guc.Key).
var (
	gucPlanCacheMode               = guc.MustKey("plan_cache_mode")
	gucTransactionReadOnly         = guc.MustKey("transaction_read_only")
	gucDefaultTransactionReadOnly  = guc.MustKey("default_transaction_read_only")
	gucTransactionIsolation        = guc.MustKey("transaction_isolation")
	gucDefaultTransactionIsolation = guc.MustKey("default_transaction_isolation")
	gucSynchronousCommit           = guc.MustKey("synchronous_commit")
	gucCommitDelay                 = guc.MustKey("commit_delay")
	gucCommitSiblings              = guc.MustKey("commit_siblings")
	gucStatementTimeout            = guc.MustKey("statement_timeout")
	gucIdleInTransactionTimeout    = guc.MustKey("idle_in_transaction_session_timeout")
)
