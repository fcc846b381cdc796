package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

const installHint = "run `make test` (installs it with apt-get as root) or `sudo apt-get install -y redis-server`"

// Option changes how the harness configures the redis-server processes it starts.
type Option func(*config)

type config struct {
	aof         bool
	args        []string
	proxiedRepl bool   // Sentinel: replicas replicate through a netproxy
	cpus        string // taskset CPU list the servers run on; "": any
	tls         bool   // a TLS port beside the plain one (WithTLS)
	sentinelPW  string // requirepass of the sentinels (WithSentinelPassword)
	replicas    int    // Cluster: replicas per primary (WithClusterReplicas)
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	c.args = append([]string(nil), c.args...)
	return c
}

// WithAOF turns on the append-only file with appendfsync always, so that every
// acknowledged write survives Kill followed by Restart.
func WithAOF() Option {
	return func(c *config) { c.aof = true }
}

// WithProxiedReplication makes the replicas of a Sentinel deployment
// replicate from the first primary through a TCP proxy each
// (SentinelT.ReplicationProxies), so a test can hold back replication
// without stopping any server. Bytes a frozen proxy holds are discarded by
// DropAll; a stopped process's socket, by contrast, still receives them.
// Other constructors ignore it.
func WithProxiedReplication() Option {
	return func(c *config) { c.proxiedRepl = true }
}

// WithArgs appends raw redis-server command-line arguments, for example
// WithArgs("--maxmemory", "10mb"). They are given after the generated config
// file, so they override it.
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// WithSentinelPassword makes a Sentinel deployment's sentinels require
// password (requirepass, and sentinel-pass between them); SentinelT.Client,
// Node.Do and the harness's own probes send it. Other constructors ignore it.
func WithSentinelPassword(password string) Option {
	return func(c *config) { c.sentinelPW = password }
}

// WithClusterReplicas gives every primary of a Cluster n replicas, so that a
// primary that fails is replaced by one of them (automatic failover). Other
// constructors ignore it.
func WithClusterReplicas(n int) Option {
	return func(c *config) { c.replicas = n }
}

// WithCPUs runs the servers on the CPUs of list (taskset's -c syntax, "1" or
// "2-3"), for benchmarks that keep the server off the client's CPUs.
func WithCPUs(list string) Option {
	return func(c *config) { c.cpus = list }
}

// CPUList is the list of CPUs process pid may run on (taskset's syntax, as
// Linux's /proc/<pid>/status gives it).
func CPUList(pid int) (string, error) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no Cpus_allowed_list in /proc/%d/status", pid)
}

// RequireBinaries fails the test with the install command when redis-server
// or redis-cli is not in PATH. It never skips.
func RequireBinaries(t testing.TB) {
	t.Helper()
	for _, name := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Fatalf("%s not found in PATH: %s", name, installHint)
		}
	}
}

// Prefix returns a key prefix unique to this test and call, of the form
// "<sanitized test name>-<8 hex digits>:". It holds no hash tag braces.
func Prefix(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 48 {
			break
		}
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatalf("redistest: random prefix: %v", err)
	}
	return b.String() + "-" + hex.EncodeToString(rnd[:]) + ":"
}
