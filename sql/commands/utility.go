package commands

import (
	"lockd/sql/exec"
)

// utility runs one session's utility statements (DDL, LOCK, VACUUM, ...).
type Utility struct {
	exec.Executor
}
