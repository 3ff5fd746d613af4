//go:build unix

package submit

import (
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd in a process group of its own and makes its
// cancellation kill the whole group: spark-submit is a shell script that
// starts a JVM, and the JVM must not outlive the timeout.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
