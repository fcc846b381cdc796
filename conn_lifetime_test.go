package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNewRefusesConnLifetime: a rueidis client made with ConnLifetime sends
// again a call Redis may have run (when replies on a connection at the end of
// its life lag by a second or more: see rueidisopt, whose test shows it), so
// a lock's acquisition or release could run twice. New refuses such a client
// of each kind (single server, Cluster, Sentinel) with ErrInvalidArgument,
// naming the option, and takes the same deployment's client without it.
func TestNewRefusesConnLifetime(t *testing.T) {
	t.Parallel()
	lifetime := func(o *rueidis.ClientOption) { o.ConnLifetime = time.Minute }
	deployments := []struct {
		name string
		// start starts the deployment and returns its client maker.
		start func(t *testing.T) func(testing.TB, ...func(*rueidis.ClientOption)) rueidis.Client
	}{
		{"single", func(t *testing.T) func(testing.TB, ...func(*rueidis.ClientOption)) rueidis.Client {
			return redistest.Server(t).Client
		}},
		{"cluster", func(t *testing.T) func(testing.TB, ...func(*rueidis.ClientOption)) rueidis.Client {
			return redistest.Cluster(t, 3).Client
		}},
		{"sentinel", func(t *testing.T) func(testing.TB, ...func(*rueidis.ClientOption)) rueidis.Client {
			return redistest.Sentinel(t).Client
		}},
	}
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			client := d.start(t)
			c, err := New(client(t, lifetime))
			if err == nil {
				c.Close()
				t.Fatal("New took a client with ConnLifetime")
			}
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "ConnLifetime") {
				t.Fatalf("New: %v, want ErrInvalidArgument naming ConnLifetime", err)
			}
			c, err = New(client(t))
			if err != nil {
				t.Fatalf("New without ConnLifetime: %v", err)
			}
			c.Close()
		})
	}
}
