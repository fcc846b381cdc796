//go:build linux

package exampleredis

import "syscall"

// sysProcAttr ties a server to the test binary: one killed by its timeout
// runs no cleanup, and the kernel then kills the server (as redistest's).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
