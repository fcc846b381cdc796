package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The usage text shows where defaults come from, never the secrets the
// environment holds.
func TestUsageHidesSecrets(t *testing.T) {
	t.Setenv("SCRIPTLOCK_URL", "redis://ops:hunter2@redis.internal:6379")
	t.Setenv("SCRIPTLOCK_SENTINEL_PASSWORD", "s3ntinel-secret")
	for _, args := range [][]string{{}, {"-h"}, {"inspect", "-h"}, {"--url", "redis://ops:hunter2@other:6379", "-h"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
		all := out.String() + errOut.String()
		if strings.Contains(all, "hunter2") || strings.Contains(all, "s3ntinel-secret") {
			t.Errorf("scriptlock %v (exit %d) prints a password:\n%s", args, code, all)
		}
		if !strings.Contains(all, "-url") {
			t.Errorf("scriptlock %v: no usage\n%s", args, all)
		}
	}
}
