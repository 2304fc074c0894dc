package difftest

import (
	"os/exec"
	"syscall"
)

// setParentDeath has the kernel send cmd a SIGTERM when this process
// dies, so a killed test leaves no PostgreSQL running.
func setParentDeath(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
