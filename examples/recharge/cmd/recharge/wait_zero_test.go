package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRechargeWaitZero: -wait 0 makes a single attempt at the order's lock,
// as the flag says (how long a request waits): a request for an order whose
// lock is held answers 409 at once, instead of waiting the default wait.
func TestRechargeWaitZero(t *testing.T) {
	srv := redistest.Server(t)
	s := startService(t, "-redis", "redis://"+srv.Addr, "-sqlite", filepath.Join(t.TempDir(), "recharge.db"),
		"-seed", "1", "-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0", "-work", "2ms", "-wait", "0")

	locks, err := scriptlock.New(srv.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	m, err := locks.Mutex("order:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.TryLock(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(context.Background())

	start := time.Now()
	code, hdr, body := post(t, s.httpURL+"/orders/1/recharge", "")
	if took := time.Since(start); code != http.StatusConflict || took > 2*time.Second {
		t.Fatalf("-wait 0, order lock held: %d %s (Retry-After %q) after %s; want 409 at once",
			code, body, hdr.Get("Retry-After"), took.Round(time.Millisecond))
	}
}
