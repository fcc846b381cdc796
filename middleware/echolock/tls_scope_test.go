package echolock_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// clientCert returns a self-signed client certificate for name.
func clientCert(t *testing.T, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestIdempotencyScopedToClientCertificate: on a server that authenticates
// its clients by TLS certificate, a stored response replays only to the
// client whose certificate made it, as on gRPC.
func TestIdempotencyScopedToClientCertificate(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		n := runs.Add(1)
		return c.String(http.StatusCreated, fmt.Sprintf("run %d for %s", n, c.Request().TLS.PeerCertificates[0].Subject.CommonName))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: env.Store(t)}))
	srv := httptest.NewUnstartedServer(e)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	post := func(cert tls.Certificate) (int, string, string) {
		t.Helper()
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.TLSClientConfig.Certificates = []tls.Certificate{cert}
		defer tr.CloseIdleConnections()
		req, err := http.NewRequest("POST", srv.URL+"/charges", strings.NewReader(`{"amount":1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", "K1")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get(echolock.HeaderIdempotentReplayed)
	}
	alice, bob := clientCert(t, "alice"), clientCert(t, "bob")
	if code, body, _ := post(alice); code != http.StatusCreated || body != "run 1 for alice" {
		t.Fatalf("alice: %d %q", code, body)
	}
	if code, body, replayed := post(bob); code != http.StatusCreated || body != "run 2 for bob" || replayed != "" {
		t.Errorf("bob, another client certificate, same key: %d %q replayed=%q; want a fresh run, not alice's response", code, body, replayed)
	}
	if code, body, replayed := post(alice); body != "run 1 for alice" || replayed != "true" {
		t.Errorf("alice's retry: %d %q replayed=%q; want her stored response", code, body, replayed)
	}
}
