package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// WithTLS makes each node of Server, Servers, Replicated and Cluster also
// listen for TLS on TLSAddr, with certificates from a private CA made for
// the node (for a cluster, one CA for all its nodes, whose bus then runs on
// TLS too: tls-cluster yes), and require a client certificate from that CA
// there (tls-auth-clients yes). The plain port stays open for the harness
// and for the test's own checks. In a Sentinel deployment everything runs on
// TLS with one CA: replication, the sentinels' links to the data nodes and
// to each other, and the address the sentinels give for the primary (a
// client of SentinelT.Client then reaches the primary on TLS and the
// sentinels on their plain ports).
func WithTLS() Option {
	return func(c *config) { c.tls = true }
}

// TLSFiles are the PEM files of a node started WithTLS.
type TLSFiles struct {
	CA string // the private CA's certificate, which signed both certificates below
	// Server is the server's certificate, for 127.0.0.1 and localhost;
	// ServerKey its key.
	Server, ServerKey string
	// Client is a client certificate the server accepts; ClientKey its key.
	Client, ClientKey string
}

// ClientConfig is a TLS configuration that trusts the node's CA and presents
// its client certificate.
func (f *TLSFiles) ClientConfig() (*tls.Config, error) {
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", f.CA)
	}
	cert, err := tls.LoadX509KeyPair(f.Client, f.ClientKey)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// sharedTLS makes, with WithTLS, the one set of certificates every node of a
// deployment uses, and clears cfg's WithTLS so that newNode makes none of its
// own. Without WithTLS it returns nil.
func sharedTLS(t testing.TB, cfg *config) *TLSFiles {
	if !cfg.tls {
		return nil
	}
	cfg.tls = false
	return mustTLSFiles(t, t.TempDir())
}

func mustTLSFiles(t testing.TB, dir string) *TLSFiles {
	f, err := writeTLSFiles(dir)
	if err != nil {
		t.Fatalf("redistest: TLS certificates: %v", err)
	}
	return f
}

// writeTLSFiles makes a CA, a server certificate and a client certificate in
// dir. The CA's key is not kept: nothing else is ever signed with it.
func writeTLSFiles(dir string) (*TLSFiles, error) {
	f := &TLSFiles{
		CA:     filepath.Join(dir, "ca.pem"),
		Server: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		Client: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redistest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	if err := writePEM(f.CA, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	leaf := func(serial int64, name string, usage []x509.ExtKeyUsage, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  usage,
		}
		if usage[0] == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyPath, "PRIVATE KEY", keyDER)
	}
	// The server's certificate is its client certificate too, on a cluster
	// bus. Replication stays on the plain port.
	if err := leaf(2, "127.0.0.1", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, f.Server, f.ServerKey); err != nil {
		return nil, err
	}
	if err := leaf(3, "redistest client", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, f.Client, f.ClientKey); err != nil {
		return nil, err
	}
	return f, nil
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

// tlsConfLines are the redis.conf lines of a node started WithTLS.
func (n *Node) tlsConfLines() []string {
	lines := []string{
		"tls-port " + fmt.Sprint(n.TLSPort),
		"tls-cert-file " + quoteConf(n.TLS.Server),
		"tls-key-file " + quoteConf(n.TLS.ServerKey),
		"tls-ca-cert-file " + quoteConf(n.TLS.CA),
		"tls-auth-clients yes",
	}
	if n.cluster {
		lines = append(lines, "tls-cluster yes")
	}
	if n.tlsRepl {
		lines = append(lines, "tls-replication yes")
	}
	return lines
}
