package pgtest

import "syscall"

// sysProcAttr runs the child with cred and makes the kernel kill it when the
// test binary dies without running its cleanups.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
