package redistest

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestServer(t *testing.T) {
	start := time.Now()
	n := Server(t)
	t.Logf("node ready in %v at %s", time.Since(start), n.Addr)
	c := n.Client(t)
	if err := c.Do(ctx(t), c.B().Ping().Build()).Error(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	key := Prefix(t) + "k"
	if err := c.Do(ctx(t), c.B().Set().Key(key).Value("v").Build()).Error(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	got, err := c.Do(ctx(t), c.B().Get().Key(key).Build()).ToString()
	if err != nil || got != "v" {
		t.Fatalf("GET = %q, %v; want v", got, err)
	}
	if got, err := n.Do(t, "GET", key).ToString(); err != nil || got != "v" {
		t.Fatalf("Do GET = %q, %v; want v", got, err)
	}
}
