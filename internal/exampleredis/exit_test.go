//go:build linux

package exampleredis

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const helperEnv = "EXAMPLEREDIS_HELPER_ADDR_FILE"

// TestHelperExits is the child of TestServerEndsWithBinary: it starts a
// server and exits without cleanup, as a binary killed by its timeout does.
func TestHelperExits(t *testing.T) {
	file := os.Getenv(helperEnv)
	if file == "" {
		return
	}
	addr, _, err := start()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(addr), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Exit(3)
}

// TestServerEndsWithBinary: a test binary that ends without its cleanup
// (killed by -timeout's panic) left its examples' servers running for good.
func TestServerEndsWithBinary(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not found in PATH: run `make test` (installs it with apt-get as root) or `sudo apt-get install -y redis-server`")
	}
	file := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperExits$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+file, "TMPDIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("helper exited 0: %s", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(string(b))
	deadline := time.Now().Add(5 * time.Second)
	for ping(addr) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the server at %s still answers 5 s after its test binary exited", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
