package locks

import (
	"errors"
	"fmt"
)

// SQLSTATE codes of the errors this package returns.
const (
	CodeDeadlockDetected = "40P01" // deadlock_detected
	CodeLockNotAvailable = "55P03" // lock_not_available
	CodeOutOfMemory      = "53200" // out_of_memory
)

// Error is an error meant for a client: it carries PostgreSQL's SQLSTATE,
// message, detail and hint. Only server/ turns it into an ErrorResponse.
type Error struct {
	Code    string
	Message string
	Detail  string
	Hint    string
}

func (e *Error) Error() string { return e.Message }

// SQLState returns the five-character SQLSTATE.
func (e *Error) SQLState() string { return e.Code }

// ErrDetail returns the DETAIL text (may be empty).
func (e *Error) ErrDetail() string { return e.Detail }

// ErrHint returns the HINT text (may be empty).
func (e *Error) ErrHint() string { return e.Hint }

// ErrLockNotAvailable is returned by Lock with NoWait when the lock is not
// immediately grantable. The caller words the client message itself
// ("could not obtain lock on relation ...", SQLSTATE 55P03).
var ErrLockNotAvailable = errors.New("locks: lock not available")

// ErrTooManyProcs is returned by NewProc when every proc number is in use;
// the server maps it to 53300 "sorry, too many clients already".
var ErrTooManyProcs = errors.New("locks: no free proc slot")

func errLockTimeout() *Error {
	return &Error{Code: CodeLockNotAvailable, Message: "canceling statement due to lock timeout"}
}

func errOutOfSharedMemory() *Error {
	return &Error{Code: CodeOutOfMemory, Message: "out of shared memory",
		Hint: "You might need to increase max_locks_per_transaction."}
}

// deadlockInfo is one member of a reported cycle: pid waits for mode on tag.
type deadlockInfo struct {
	tag  LockTag
	mode LockMode
	pid  int32
}

// errDeadlock builds 40P01 with PostgreSQL's DeadLockReport detail: one line
// per member, each blocked by the next member (the last by the first).
func errDeadlock(info []deadlockInfo) *Error {
	var b []byte
	for i, d := range info {
		next := info[0].pid
		if i+1 < len(info) {
			next = info[i+1].pid
		}
		if i > 0 {
			b = append(b, '\n')
		}
		b = fmt.Appendf(b, "Process %d waits for %s on %s; blocked by process %d.",
			d.pid, d.mode, d.tag.Describe(), next)
	}
	return &Error{Code: CodeDeadlockDetected, Message: "deadlock detected", Detail: string(b),
		Hint: "See server log for query details."}
}
