package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

func TestCluster(t *testing.T) {
	start := time.Now()
	cl := Cluster(t, 3)
	t.Logf("cluster ready in %v at %v", time.Since(start), cl.Addrs)
	c := cl.Client(t)
	p := Prefix(t)
	for i := range 200 {
		key := fmt.Sprintf("%sk%d", p, i)
		if err := c.Do(ctx(t), c.B().Set().Key(key).Value(strconv.Itoa(i)).Build()).Error(); err != nil {
			t.Fatalf("SET %s: %v", key, err)
		}
	}
	total := int64(0)
	for _, n := range cl.Nodes {
		size, err := n.Do(t, "DBSIZE").AsInt64()
		if err != nil {
			t.Fatalf("DBSIZE on %s: %v", n.Addr, err)
		}
		if size == 0 {
			t.Errorf("node %s holds no key: slots not spread", n.Addr)
		}
		total += size
	}
	if total != 200 {
		t.Errorf("keys over all nodes = %d, want 200", total)
	}
	for i := range 200 {
		key := fmt.Sprintf("%sk%d", p, i)
		if got, err := c.Do(ctx(t), c.B().Get().Key(key).Build()).ToString(); err != nil || got != strconv.Itoa(i) {
			t.Fatalf("GET %s = %q, %v", key, got, err)
		}
	}
}

func TestReplicated(t *testing.T) {
	start := time.Now()
	primary, replica := Replicated(t)
	t.Logf("primary+replica ready in %v", time.Since(start))
	key := Prefix(t) + "k"
	if err := primary.Do(t, "SET", key, "v").Error(); err != nil {
		t.Fatalf("SET on primary: %v", err)
	}
	rc := replica.Client(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := rc.Do(ctx(t), rc.B().Get().Key(key).Build()).ToString()
		if err == nil && got == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET on replica = %q, %v; want v", got, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := replica.Do(t, "SET", key, "w").Error(); err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Errorf("SET on replica: err = %v, want READONLY", err)
	}
}
