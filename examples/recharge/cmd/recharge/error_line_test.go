package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestErrorLine: the command's name prefixes an error once, also when the
// recharge package's error already starts with it.
func TestErrorLine(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{"recharge: create schema: failed to connect", "recharge: create schema: failed to connect"},
		{"-redis: bad scheme", "recharge: -redis: bad scheme"},
		{"recharger: x", "recharge: recharger: x"},
	} {
		if got := errorLine(errors.New(tc.err)); got != tc.want {
			t.Errorf("errorLine(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestRechargeUnreachablePostgres: a PostgreSQL server that cannot be
// reached (nothing listens on loopback port 1) stops the command with exit
// status 1 and one "recharge:" prefix, the DSN's password not printed.
func TestRechargeUnreachablePostgres(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-postgres", "postgres://u:pgsecret@127.0.0.1:1/shop?sslmode=disable&connect_timeout=5",
		"-redis", "redis://127.0.0.1:1", "-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("recharge with an unreachable PostgreSQL: %v, want exit status 1\n%s", err, out)
	}
	msg := string(out)
	if !strings.HasPrefix(msg, "recharge: create schema: ") || strings.Contains(msg, "recharge: recharge:") {
		t.Errorf("want one prefix, then create schema:\n%s", msg)
	}
	if strings.Contains(msg, "pgsecret") {
		t.Errorf("the DSN's password is printed:\n%s", msg)
	}
}
