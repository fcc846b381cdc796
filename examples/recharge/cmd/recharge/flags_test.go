package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRechargeNegativeFlags: a negative -seed or -work is refused at start
// with exit status 1 naming the flag, instead of being ignored (no orders
// created, no error) or taken as no work.
func TestRechargeNegativeFlags(t *testing.T) {
	srv := redistest.Server(t)
	for _, args := range [][]string{{"-seed", "-1"}, {"-work", "-1ms"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-redis", "redis://" + srv.Addr,
			"-sqlite", filepath.Join(t.TempDir(), "r.db"), "-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0"}, args...)...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		out, err := cmd.CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "recharge: "+args[0]) {
			t.Errorf("recharge %v: %v, want exit status 1 naming %s\n%s", args, err, args[0], out)
		}
	}
}
