//go:build !linux

package redistest

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
