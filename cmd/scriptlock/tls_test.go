package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The CLI reaches a server that requires TLS with a client certificate
// (tls-auth-clients yes) through rediss:// and the --tls-* flags or their
// environment variables. A connection the server or the CLI refuses, and
// flags that cannot be used, fail with a clear error and change nothing.
func TestTLS(t *testing.T) {
	node := redistest.Server(t, redistest.WithTLS())
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	m := heldMutex(t, ctx, c, "order:1", "over-tls")
	d := deployment{url: "rediss://" + node.TLSAddr}
	f := node.TLS
	withTLS := func(args ...string) []string {
		return append([]string{"--tls-ca", f.CA, "--tls-cert", f.Client, "--tls-key", f.ClientKey}, args...)
	}
	held := func(when string) {
		t.Helper()
		if ok, err := m.IsLocked(ctx); err != nil || !ok {
			t.Fatalf("%s: the lock is no longer held (%v)", when, err)
		}
	}

	r := inspectJSON(t, ctx, d, prefix, "order:1", withTLS()...)
	if len(r.Holders) != 1 || r.Holders[0].Owner != "over-tls" {
		t.Fatalf("inspect over TLS: %+v", r)
	}
	if res := cli(ctx, d, "", withTLS("list", "--key-prefix", prefix)...); res.code != exitOK || !strings.Contains(res.out, "order:1") {
		t.Fatalf("list over TLS: exit %d\n%s%s", res.code, res.out, res.errOut)
	}

	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url string
		args      []string
		code      int
		want      string // in the error output
	}{
		{"CA not trusted", d.url, []string{"--tls-cert", f.Client, "--tls-key", f.ClientKey}, exitFailure, "certificate"},
		{"no client certificate", d.url, []string{"--tls-ca", f.CA}, exitFailure, "give one with --tls-cert and --tls-key"},
		{"wrong server name", d.url, withTLS("--tls-server-name", "db.example"), exitFailure, "db.example"},
		{"certificate without key", d.url, []string{"--tls-ca", f.CA, "--tls-cert", f.Client}, exitUsage, "--tls-cert and --tls-key go together"},
		{"CA file without a certificate", d.url, withTLS("--tls-ca", notPEM), exitUsage, "no PEM certificate in " + notPEM},
		{"missing CA file", d.url, withTLS("--tls-ca", notPEM+".missing"), exitUsage, "--tls-ca:"},
		{"key of another certificate", d.url, withTLS("--tls-key", f.ServerKey), exitUsage, "--tls-cert/--tls-key:"},
		{"TLS flags on redis://", "redis://" + node.Addr, withTLS(), exitUsage, "need a rediss:// URL"},
	} {
		res := cli(ctx, deployment{url: tc.url}, "", append(tc.args, "force-unlock", "--yes", "--key-prefix", prefix, "order:1")...)
		if res.code != tc.code || !strings.Contains(res.errOut, tc.want) {
			t.Errorf("%s: exit %d, want %d with %q in:\n%s", tc.name, res.code, tc.code, tc.want, res.errOut)
		}
		held("after " + tc.name)
	}

	// The environment variables stand in for the flags.
	t.Setenv("SCRIPTLOCK_TLS_CA", f.CA)
	t.Setenv("SCRIPTLOCK_TLS_CERT", f.Client)
	t.Setenv("SCRIPTLOCK_TLS_KEY", f.ClientKey)
	if res := cli(ctx, deployment{url: "redis://" + node.Addr}, "", "inspect", "order:1"); res.code != exitUsage || !strings.Contains(res.errOut, "$SCRIPTLOCK_TLS_*) need a rediss:// URL") {
		t.Errorf("TLS settings from the environment on redis://: exit %d, want %d\n%s", res.code, exitUsage, res.errOut)
	}
	if res := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "order:1"); res.code != exitOK {
		t.Fatalf("force-unlock over TLS (settings from the environment): exit %d\n%s", res.code, res.errOut)
	}
	if ok, err := m.IsLocked(ctx); err != nil || ok {
		t.Fatalf("force-unlock over TLS left the lock held (%v)", err)
	}
}

// On a Cluster that runs on TLS (tls-cluster yes), one rediss:// seed is
// enough: list scans every primary over TLS, and force-unlock reaches the
// lock's primary.
func TestTLSCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithTLS())
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, cl.Client(t), prefix)
	// Two locks on each primary.
	var ms []*scriptlock.Mutex
	per := map[*redistest.Node]int{}
	for i := 0; len(ms) < 2*len(cl.Nodes); i++ {
		name := "order:" + strconv.Itoa(i)
		if n := cl.NodeFor(t, mustMutex(t, c, name).Key()); per[n] < 2 {
			per[n]++
			ms = append(ms, heldMutex(t, ctx, c, name, "over-tls"))
		}
	}
	f := cl.Nodes[0].TLS
	tlsFlags := []string{"--tls-ca", f.CA, "--tls-cert", f.Client, "--tls-key", f.ClientKey}
	d := deployment{url: "rediss://" + cl.TLSAddrs[0]}
	res := cli(ctx, d, "", append(tlsFlags, "list", "--json", "--key-prefix", prefix)...)
	var l listing
	if res.code != exitOK || json.Unmarshal([]byte(res.out), &l) != nil || len(l.Locks) != len(ms) {
		t.Fatalf("list over TLS: exit %d, want %d locks\n%s%s", res.code, len(ms), res.out, res.errOut)
	}
	// Several seeds are dialled as one is, on TLS with the flags' settings.
	seeds := deployment{url: "rediss://" + cl.TLSAddrs[0] + "?addr=" + strings.Join(cl.TLSAddrs[1:], "&addr=")}
	res = cli(ctx, seeds, "", append(tlsFlags, "list", "--json", "--key-prefix", prefix)...)
	if res.code != exitOK || json.Unmarshal([]byte(res.out), &l) != nil || len(l.Locks) != len(ms) {
		t.Fatalf("list over TLS from several seeds: exit %d, want %d locks\n%s%s", res.code, len(ms), res.out, res.errOut)
	}
	for i, m := range ms {
		if r := inspectJSON(t, ctx, d, prefix, m.Name(), tlsFlags...); len(r.Holders) != 1 || r.Holders[0].Owner != "over-tls" {
			t.Fatalf("inspect %s over TLS: %+v", m.Name(), r)
		}
		if i%2 == 1 {
			continue // half stay held: force-unlock takes only the one named
		}
		if res := cli(ctx, d, "", append(tlsFlags, "force-unlock", "--yes", "--key-prefix", prefix, m.Name())...); res.code != exitOK {
			t.Fatalf("force-unlock %s over TLS: exit %d\n%s", m.Name(), res.code, res.errOut)
		}
		if ok, err := m.IsLocked(ctx); err != nil || ok {
			t.Fatalf("force-unlock %s over TLS left it held (%v)", m.Name(), err)
		}
	}
	for i := 1; i < len(ms); i += 2 {
		if ok, err := ms[i].IsLocked(ctx); err != nil || !ok {
			t.Fatalf("%s, never force-unlocked, is no longer held (%v)", ms[i].Name(), err)
		}
	}
}

// A rediss:// Sentinel URL reaches the sentinels on TLS and the primary they
// give on TLS, with the same CA and client certificate.
func TestTLSSentinel(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t, redistest.WithTLS())
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, s.Client(t), prefix)
	m := heldMutex(t, ctx, c, "order:1", "via-sentinel-tls")
	f := s.Data[0].TLS
	tlsFlags := []string{"--tls-ca", f.CA, "--tls-cert", f.Client, "--tls-key", f.ClientKey}
	d := deployment{url: "rediss://" + s.TLSAddrs[0] + "?addr=" + strings.Join(s.TLSAddrs[1:], "&addr=") + "&master_set=" + redistest.SentinelMaster}
	if r := inspectJSON(t, ctx, d, prefix, "order:1", tlsFlags...); len(r.Holders) != 1 || r.Holders[0].Owner != "via-sentinel-tls" {
		t.Fatalf("inspect through Sentinel over TLS: %+v", r)
	}
	// Without the CA the sentinels' certificates are not trusted.
	if res := cli(ctx, d, "", "--tls-cert", f.Client, "--tls-key", f.ClientKey, "force-unlock", "--yes", "--key-prefix", prefix, "order:1"); res.code != exitFailure {
		t.Fatalf("force-unlock through Sentinel without the CA: exit %d, want %d\n%s", res.code, exitFailure, res.errOut)
	}
	if ok, err := m.IsLocked(ctx); err != nil || !ok {
		t.Fatalf("a refused connection changed the lock (%v)", err)
	}
	if res := cli(ctx, d, "", append(tlsFlags, "force-unlock", "--yes", "--key-prefix", prefix, "order:1")...); res.code != exitOK {
		t.Fatalf("force-unlock through Sentinel over TLS: exit %d\n%s", res.code, res.errOut)
	}
	if ok, err := m.IsLocked(ctx); err != nil || ok {
		t.Fatalf("force-unlock through Sentinel over TLS left the lock held (%v)", err)
	}
}

// The hint for a missing client certificate covers each way the refusal
// reaches the client: which one a run sees depends on timing.
func TestTLSHint(t *testing.T) {
	noCert := tlsFlags{ca: "ca.pem"}
	for _, tc := range []struct {
		name string
		url  string
		f    tlsFlags
		err  error
		hint bool
	}{
		{"reset", "rediss://h:6380", noCert, &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.ECONNRESET)}, true},
		{"broken pipe", "rediss://h:6380", noCert, &net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, true},
		{"EOF", "rediss://h:6380", noCert, fmt.Errorf("read: %w", io.EOF), true},
		{"alert", "rediss://h:6380", noCert, &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, true},
		{"certificate given", "rediss://h:6380", tlsFlags{cert: "c.pem", key: "k.pem"}, fmt.Errorf("read: %w", io.EOF), false},
		{"no TLS", "redis://h:6379", noCert, fmt.Errorf("read: %w", io.EOF), false},
		{"untrusted server", "rediss://h:6380", noCert, errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), false},
	} {
		if got := tlsHint(tc.url, tc.f, tc.err) != ""; got != tc.hint {
			t.Errorf("%s: hint %v, want %v", tc.name, got, tc.hint)
		}
	}
}
