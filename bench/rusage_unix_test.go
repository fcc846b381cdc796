//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is the user plus system CPU time of this whole process (every
// thread: lock clients, runtime, GC), from getrusage(RUSAGE_SELF). The
// redis-server child is not included.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
