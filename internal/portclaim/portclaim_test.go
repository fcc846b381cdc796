package portclaim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// childEnv names the port a child process of this test binary tries to take.
const childEnv = "PORTCLAIM_TAKE"

// TestMain runs the child's part of TestClaimAcrossProcesses when asked
// to: it exits 0 having taken the port, 3 finding it claimed.
func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		os.Exit(childTake(v))
	}
	os.Exit(m.Run())
}

func childTake(v string) int {
	p, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := Take(p)
	if errors.Is(err, ErrClaimed) {
		return 3
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c.Release()
	return 0
}

func takeInChild(t *testing.T, p int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(p))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ee.ExitCode() != 3 {
			t.Fatalf("child: exit %d\n%s", ee.ExitCode(), out)
		}
		return 3
	default:
		t.Fatalf("child: %v", err)
	}
	return -1
}

// A port claimed here is refused to another process until released: a
// killed server's port stays out of other test processes' reach.
func TestClaimAcrossProcesses(t *testing.T) {
	c, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	if code := takeInChild(t, c.Port); code != 3 {
		t.Fatalf("another process took port %d while it was claimed here", c.Port)
	}
	c.Release()
	if code := takeInChild(t, c.Port); code != 0 {
		t.Fatalf("another process could not take port %d once released here", c.Port)
	}
}

// In one process a port is handed out once, released or not: a client of
// the test that had it may still be dialing it.
func TestClaimOncePerProcess(t *testing.T) {
	c, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Take(c.Port); !errors.Is(err, ErrClaimed) {
		t.Fatalf("Take of port %d claimed here: %v, want ErrClaimed", c.Port, err)
	}
	c.Release()
	c.Release() // a second release does nothing
	if _, err := Take(c.Port); !errors.Is(err, ErrClaimed) {
		t.Fatalf("Take of port %d released here: %v, want ErrClaimed", c.Port, err)
	}
	seen := map[int]bool{c.Port: true}
	for range 20 {
		c, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if seen[c.Port] {
			t.Fatalf("Free handed out port %d twice", c.Port)
		}
		seen[c.Port] = true
		c.Release()
	}
}
