package expr

import (
	"errors"
	"time"

	"lockd/locks"
)

// lockTimeout is the session's lock_timeout.
func (s *Backend) lockTimeout() time.Duration {
	return time.Duration(s.Gucs.Int("lock_timeout")) * time.Millisecond
}

// lockOptions are the session's heavyweight-lock wait options: its
// lock_timeout and deadlock_timeout (both per session, as in PostgreSQL).
func (s *Backend) LockOptions(session, nowait bool) locks.LockOptions {
	return locks.LockOptions{
		NoWait: nowait, Session: session, LockTimeout: s.lockTimeout(),
		DeadlockTimeout: time.Duration(s.Gucs.Int("deadlock_timeout")) * time.Millisecond,
	}
}

// acquire takes a heavyweight lock for this session, waiting as
// PostgreSQL does (cancel, statement_timeout, lock_timeout, deadlock
// detection). With nowait it reports false instead of waiting.
func (s *Backend) Acquire(ec *EvalCtx, tag locks.LockTag, mode locks.LockMode, session, nowait bool) (bool, error) {
	err := s.Locks.Lock(ec.Ctx, s.Proc, tag, mode, s.LockOptions(session, nowait))
	if errors.Is(err, locks.ErrLockNotAvailable) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}
