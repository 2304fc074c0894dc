package sql

// lockFunc resolves the lock-related SQL functions (advisory locks,
// pg_blocking_pids). It is filled in when the lock manager is wired.
func (e *Engine) lockFunc(a *analyzer, name string, args []expr, loc int32) (expr, bool, error) {
	return nil, false, nil
}
