package redistest

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// A WithTLS node answers on its TLS port to a client that trusts its CA and
// shows the client certificate, refuses a client without one, keeps its
// plain port, and keeps its TLS port and certificates across Restart.
func TestWithTLS(t *testing.T) {
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
