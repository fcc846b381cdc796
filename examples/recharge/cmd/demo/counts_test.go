package main

import (
	"strings"
	"testing"
)

// TestDemoCountsNotPositive: -orders and -duplicates below 1 are refused at
// start (exit 2, naming the flag), before any server is started, instead of
// a run of the default counts under a header announcing the ones given.
func TestDemoCountsNotPositive(t *testing.T) {
	for _, args := range [][]string{{"-orders", "0"}, {"-orders", "-3"}, {"-duplicates", "0"}, {"-duplicates", "-1", "-orders", "1"}} {
		out, errOut, code := runDemo(t, []string{"REDIS_URL="}, append([]string{"-embedded"}, args...)...)
		if code != 2 || !strings.Contains(errOut, args[0]) || out != "" {
			t.Errorf("demo %v: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2 naming %s, nothing run", args, code, out, errOut, args[0])
		}
	}
}
