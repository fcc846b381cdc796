package idempotency

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNewStoreRefusesConnLifetime: a rueidis client made with ConnLifetime
// may send a call Redis ran again (internal/rueidisopt's test shows it), and
// the store's reservation, completion and release each take one call to run
// once: NewStore refuses it with ErrReplayingClient, naming the option, and
// takes the same server's client without it.
func TestNewStoreRefusesConnLifetime(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	s, err := NewStore(node.Client(t, func(o *rueidis.ClientOption) { o.ConnLifetime = time.Minute }))
	if err == nil {
		s.Close()
		t.Fatal("NewStore took a client with ConnLifetime")
	}
	if !errors.Is(err, ErrReplayingClient) || !strings.Contains(err.Error(), "ConnLifetime") {
		t.Fatalf("NewStore: %v, want ErrReplayingClient naming ConnLifetime", err)
	}
	s, err = NewStore(node.Client(t))
	if err != nil {
		t.Fatalf("NewStore without ConnLifetime: %v", err)
	}
	s.Close()
}
