package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
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

// A bad value of a command's flag exits 2 with its own message before
// anything is dialled: also when Redis does not answer.
func TestBadCommandFlagsBeforeConnecting(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 30*time.Second)
	down := deployment{url: "redis://127.0.0.1:1"} // nothing listens on port 1
	for _, args := range [][]string{
		{"inspect", "--limit", "0", "x"},
		{"list", "--limit", "-1"},
		{"list", "--max-scans", "0"},
		{"list", "--cursor", "x"},
		{"watch", "--interval", "0", "x"},
		{"watch", "--interval", "-1s", "x"},
		// A read many times a millisecond would load the server, not
		// follow the lock any better.
		{"watch", "--interval", "1ns", "x"},
		{"watch", "--interval", "99ms", "x"},
		// No round trip fits in a nanosecond: every command failed with
		// an i/o timeout that blamed the network.
		{"--timeout", "1ns", "inspect", "x"},
		{"--timeout", "999us", "list"},
		{"--timeout", "-1s", "list"},
	} {
		r := cli(ctx, down, "", args...)
		if r.code != exitUsage || strings.Contains(r.errOut, "connect") {
			t.Errorf("%v: exit %d, want %d with the flag's message:\n%s", args, r.code, exitUsage, r.errOut)
		}
	}
}
