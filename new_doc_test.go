package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNewAsDocumented: New refuses a nil client and an invalid option with
// ErrInvalidArgument, and sends nothing to Redis, as its doc says.
func TestNewAsDocumented(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	rc := n.Client(t)
	if _, err := New(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New(nil): %v, want ErrInvalidArgument", err)
	}
	for name, o := range map[string]Option{
		"WithKeyPrefix(\"app{\")":  WithKeyPrefix("app{"),
		"WithLease(-1s)":           WithLease(-time.Second),
		"WithWatchdog(10ms, 10ms)": WithWatchdog(10*time.Millisecond, 10*time.Millisecond),
	} {
		if _, err := New(rc, o); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New with %s: %v, want ErrInvalidArgument", name, err)
		}
	}
	n.Do(t, "CONFIG", "RESETSTAT")
	c, err := New(rc)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the Client's goroutines have started
	stats, err := n.Do(t, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	for line := range strings.Lines(stats) {
		cmd, _, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		switch cmd {
		case "config|resetstat", "info", "hello", "ping", "client|setinfo", "client|setname":
			// the test's own connection (n.Do) and rueidis's keep-alive
		default:
			t.Errorf("New sent %s to Redis: %s", cmd, strings.TrimSpace(line))
		}
	}
}
