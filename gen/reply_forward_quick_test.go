package gen

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReplyForwardChainCheckedQuickly: the replies passed a parameter that
// local functions pass on to each other (local function f2(v) f1(v) end)
// are followed once each, not again on every pass over every function: a
// chain of 150 such functions, called with 150 replies (12 KB), is
// checked at once.
func TestReplyForwardChainCheckedQuickly(t *testing.T) {
	const n = 150
	var b strings.Builder
	b.WriteString("-- @key k\n-- @return none\nlocal function f0(v)\nredis.call('SET', KEYS[1], v .. 'x')\nend\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "local function f%d(v)\nf%d(v)\nend\n", i, i-1)
	}
	for range n {
		fmt.Fprintf(&b, "f%d(redis.call('GET', KEYS[1]))\n", n-1)
	}
	done := make(chan error, 1)
	go func() {
		_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(b.String())}}, false)
		if err == nil && !strings.Contains(fmt.Sprint(warnings), "concatenation (..) of v") {
			err = fmt.Errorf("warnings %v, want the concatenation of a reply that may be nil", warnings)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the checker did not finish within 10s")
	}
}
