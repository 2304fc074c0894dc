//go:build !linux

package difftest

import "os/exec"

// setParentDeath does nothing where the kernel has no parent-death
// signal: a killed test may leave PostgreSQL running there.
func setParentDeath(*exec.Cmd) {}
