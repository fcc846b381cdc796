package recharge_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/examples/recharge"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A negative lock wait is a configuration error from NewServer, not a panic
// when the front ends are built.
func TestNegativeWaitRefused(t *testing.T) {
	t.Parallel()
	store, err := recharge.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "recharge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	locks, err := scriptlock.New(redistest.Server(t).Client(t))
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	srv, err := recharge.NewServer(recharge.Config{Service: &recharge.Service{Store: store}, Locks: locks, Wait: -time.Second})
	if err == nil {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("NewServer accepted Wait -1s, then HTTPHandler panicked: %v", p)
			}
		}()
		srv.HTTPHandler()
		t.Fatal("NewServer accepted Wait -1s")
	}
}
