//go:build !linux

package pgtest

import "syscall"

// sysProcAttr runs the child with cred.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
