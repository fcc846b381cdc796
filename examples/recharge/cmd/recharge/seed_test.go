package main

import (
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The documented command, run again on the same database: -seed leaves a
// database that already has orders as it is (orders paid stay paid) and
// the service starts, instead of failing on the existing rows.
func TestRechargeSeedAgain(t *testing.T) {
	srv := redistest.Server(t)
	db := filepath.Join(t.TempDir(), "recharge.db")
	args := []string{"-redis", "redis://" + srv.Addr, "-sqlite", db, "-seed", "3",
		"-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0", "-work", "2ms"}
	stop := func(s *service) {
		t.Helper()
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			t.Fatalf("recharge did not exit within 20s of SIGTERM:\n%s", s.stderr.String())
		}
	}
	s := startService(t, args...)
	if code, _, body := post(t, s.httpURL+"/orders/1/recharge", ""); code != http.StatusOK || decode(t, body).Outcome != "credited" {
		t.Fatalf("first run: %d %s; want credited", code, body)
	}
	stop(s)

	s = startService(t, args...)
	if code, _, body := post(t, s.httpURL+"/orders/1/recharge", ""); code != http.StatusOK || decode(t, body).Outcome != "already processed" {
		t.Errorf("second run, paid order: %d %s; want already processed", code, body)
	}
	if code, _, body := post(t, s.httpURL+"/orders/2/recharge", ""); code != http.StatusOK || decode(t, body).Outcome != "credited" {
		t.Errorf("second run, unpaid order: %d %s; want credited", code, body)
	}
	stop(s)
}
