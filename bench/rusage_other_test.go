//go:build !unix

package bench

import "time"

// processCPU is not measured where getrusage is missing: the client CPU
// column is left out rather than reported as zero.
func processCPU() (time.Duration, bool) { return 0, false }
