package scriptlock

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The usual release of a Client without sharded pub/sub sends the server no
// publish command: PUBLISH is the script's default, and every argument costs
// the server on every release (Redis 7.0 builds ARGV anew per call). It
// sends the lock's four keys and the owner, nothing else.
func TestMutexUsualReleaseSendsNoPublishArgument(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "args")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	node.Do(t, "SLOWLOG", "RESET")
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	node.Do(t, "CONFIG", "SET", "slowlog-log-slower-than", "10000")
	entries, err := node.Do(t, "SLOWLOG", "GET", "100").ToArray()
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for _, e := range entries {
		fields, err := e.ToArray()
		if err != nil || len(fields) < 4 {
			t.Fatalf("slowlog entry %v: %v", e, err)
		}
		args, err := fields[3].AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		if len(args) > 0 && strings.EqualFold(args[0], "evalsha") {
			calls = append(calls, args)
		}
	}
	if len(calls) != 1 {
		t.Fatalf("the release made %d script calls %v, want 1", len(calls), calls)
	}
	// EVALSHA sha numkeys lock channel waiters wake owner
	if args := calls[0]; len(args) != 8 || args[2] != "4" {
		t.Errorf("the usual release sent %d words %q, want 8: EVALSHA, the sha, 4 keys and the owner", len(args), args)
	}
}

// docs/performance.md gives the size of the usual release's request before
// and after it stopped sending PUBLISH: the two differ by what that argument
// takes on the wire, and the second is what a Mutex Unlock sends now with
// the benchmark's names (a 58-byte key prefix, lock u1, an owner field of
// 55 bytes).
func TestPerformanceDocUsualReleaseBytes(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`the release request from (\d+) to (\d+) bytes`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/performance.md no longer gives the release request's size before and after")
	}
	before, _ := strconv.Atoi(string(m[1]))
	after, _ := strconv.Atoi(string(m[2]))

	node := redistest.Server(t)
	c, err := New(node.Client(t), WithKeyPrefix(strings.Repeat("B", 48)+"-0123abcd:"), WithShardedPubSub(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	mu := mustMutex(t, c, "u1")
	field := "e008c750-3b02-8d7b-9722-93160d6c45e7:f7c8daecbf0790e7.3"
	size := func(opt ...string) int {
		t.Helper()
		cmd, err := generated.MutexReleaseLastCommand(c.rc, mu.key, mu.channel, mu.waiters, mu.wake, field, opt...)
		if err != nil {
			t.Fatal(err)
		}
		words := cmd.Commands()
		n := len("*" + strconv.Itoa(len(words)) + "\r\n")
		for _, w := range words {
			n += len("$"+strconv.Itoa(len(w))+"\r\n") + len(w) + len("\r\n")
		}
		return n
	}
	with, without := size("publish"), size()
	if before-after != with-without || after != without {
		t.Errorf("docs/performance.md: the release request from %d to %d bytes; it is %d bytes, %d with PUBLISH (%d fewer)", before, after, without, with, with-without)
	}
}
