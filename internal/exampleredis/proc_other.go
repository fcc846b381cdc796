//go:build !linux

package exampleredis

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
