package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// tlsFlags are the --tls-* flags as given.
type tlsFlags struct {
	ca, cert, key, serverName string
}

// tlsChange is what the --tls-* flags change in a rediss:// URL's TLS
// settings, read and checked before anything is dialled.
type tlsChange struct {
	roots      *x509.CertPool
	certs      []tls.Certificate
	serverName string
}

// config reads the files the flags name. It returns nil when no flag is set,
// and an error naming the file or flag when one cannot be used.
func (f tlsFlags) config() (*tlsChange, error) {
	if f == (tlsFlags{}) {
		return nil, nil
	}
	tc := &tlsChange{serverName: f.serverName}
	if f.ca != "" {
		b, err := os.ReadFile(f.ca)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		tc.roots = x509.NewCertPool()
		if !tc.roots.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("--tls-ca: no PEM certificate in %s", f.ca)
		}
	}
	switch {
	case f.cert != "" && f.key != "":
		cert, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		tc.certs = []tls.Certificate{cert}
	case f.cert != "" || f.key != "":
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	return tc, nil
}

// apply changes cfg, the TLS settings rueidis made for a rediss:// URL.
func (tc *tlsChange) apply(cfg *tls.Config) {
	if tc.roots != nil {
		cfg.RootCAs = tc.roots
	}
	if tc.certs != nil {
		cfg.Certificates = tc.certs
	}
	if tc.serverName != "" {
		cfg.ServerName = tc.serverName
	}
}

// tlsHint explains a rediss:// connection the server closed when no client
// certificate was given: a server with tls-auth-clients yes closes it after
// the handshake, which the client sees as a reset or an alert.
func tlsHint(u string, f tlsFlags, err error) string {
	if !strings.HasPrefix(u, "rediss://") || f.cert != "" {
		return ""
	}
	// The server may close at once (a reset or EOF) or first send the
	// alert "certificate required", which crypto/tls reports as a
	// "remote error" with an unexported type: only its text says which.
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) ||
		strings.Contains(err.Error(), "tls: certificate required") {
		return " (a server that requires client certificates closes the connection: give one with --tls-cert and --tls-key)"
	}
	return ""
}
