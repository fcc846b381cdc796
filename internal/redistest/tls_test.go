package redistest

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// A WithTLS node answers on its TLS port to a client that trusts its CA and
// shows the client certificate, refuses a client without one, keeps its
// plain port, and keeps its TLS port and certificates across Restart.
func TestWithTLS(t *testing.T) {
	// Not parallel: its 2 s dials include TLS handshakes, slow under the race
	// detector, that other tests' load in this process would push past them.
	n := Server(t, WithTLS())
	if n.TLS == nil || n.TLSAddr == "" || n.TLSAddr == n.Addr {
		t.Fatalf("TLS listener not set up: %q %+v", n.TLSAddr, n.TLS)
	}
	cfg, err := n.TLS.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	ping := func(cfg *tls.Config) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := rueidis.NewClient(rueidis.ClientOption{
			InitAddress: []string{n.TLSAddr}, TLSConfig: cfg, DisableCache: true,
			ForceSingleClient: true, DisableRetry: true, Dialer: net.Dialer{Timeout: 2 * time.Second},
		})
		if err != nil {
			return err
		}
		defer c.Close()
		return c.Do(ctx, c.B().Ping().Build()).Error()
	}
	if err := ping(cfg); err != nil {
		t.Fatalf("PING over TLS: %v", err)
	}
	noCert := cfg.Clone()
	noCert.Certificates = nil
	if err := ping(noCert); err == nil {
		t.Fatal("a client without a certificate was accepted (tls-auth-clients yes)")
	}
	untrusted := cfg.Clone()
	untrusted.RootCAs = nil // system roots: the private CA is not among them
	if err := ping(untrusted); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client that does not trust the CA: %v, want a certificate error", err)
	}
	if r, err := n.Do(t, "PING").ToString(); err != nil || r != "PONG" {
		t.Fatalf("plain port: %q %v", r, err)
	}
	addr := n.TLSAddr
	n.Restart(t)
	if n.TLSAddr != addr {
		t.Fatalf("TLS address changed across Restart: %s, was %s", n.TLSAddr, addr)
	}
	if err := ping(cfg); err != nil {
		t.Fatalf("PING over TLS after Restart: %v", err)
	}
}

// A WithTLS cluster runs its bus on TLS with one CA, and a TLS client seeded
// with one node's TLS address reaches every primary on its TLS port.
func TestClusterWithTLS(t *testing.T) {
	t.Parallel()
	c := Cluster(t, 3, WithTLS())
	if len(c.TLSAddrs) != 3 || c.Nodes[0].TLS == nil || c.Nodes[0].TLS != c.Nodes[2].TLS {
		t.Fatalf("TLS not set up for the cluster: %v", c.TLSAddrs)
	}
	cfg, err := c.Nodes[0].TLS.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: c.TLSAddrs[:1], TLSConfig: cfg, DisableCache: true})
	if err != nil {
		t.Fatalf("cluster client over TLS: %v", err)
	}
	defer rc.Close()
	ctx := ctxFor(t, 20*time.Second)
	// Keys on every primary: the client must have found each one's TLS port.
	served := map[*Node]bool{}
	for i := 0; len(served) < len(c.Nodes) && i < 1000; i++ {
		key := Prefix(t) + "k" + strconv.Itoa(i)
		if err := rc.Do(ctx, rc.B().Set().Key(key).Value("v").Build()).Error(); err != nil {
			t.Fatalf("SET %s over TLS: %v", key, err)
		}
		served[c.NodeFor(t, key)] = true
	}
	if len(served) != len(c.Nodes) {
		t.Fatalf("keys reached %d of %d primaries", len(served), len(c.Nodes))
	}
	for _, n := range c.Nodes {
		if m, err := n.Do(t, "CONFIG", "GET", "tls-cluster").AsStrMap(); err != nil || m["tls-cluster"] != "yes" {
			t.Fatalf("%s: tls-cluster %v (%v), want yes", n.Addr, m, err)
		}
	}
}
