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
	calls := usualReleaseCalls(t, node, mustMutex(t, c, "args"))
	if len(calls) != 1 {
		t.Fatalf("the release made %d script calls %v, want 1", len(calls), calls)
	}
	// EVALSHA sha numkeys lock channel waiters wake owner
	if args := calls[0]; len(args) != 8 || args[2] != "4" {
		t.Errorf("the usual release sent %d words %q, want 8: EVALSHA, the sha, 4 keys and the owner", len(args), args)
	}
}

// The usual release of a Client with sharded pub/sub (a Cluster with
// SPUBLISH) names SPUBLISH to its script, which sends Redisson's release
// message with it: Redisson's waiters there listen with SSUBSCRIBE, and a
// PUBLISH would not reach them.
func TestMutexUsualReleaseShardedSendsSpublish(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	c := newTestClient(t, cl.Client(t))
	if !c.sharded() {
		t.Fatal("a Client on a Cluster with SPUBLISH does not publish sharded")
	}
	m := mustMutex(t, c, "args")
	node := cl.NodeFor(t, m.key)
	calls := usualReleaseCalls(t, node, m)
	if len(calls) != 1 {
		t.Fatalf("the release made %d script calls %v, want 1", len(calls), calls)
	}
	if args := calls[0]; len(args) != 9 || args[2] != "4" || !strings.EqualFold(args[8], "spublish") {
		t.Errorf("the usual release sent %d words %q, want 9: EVALSHA, the sha, 4 keys, the owner and spublish", len(args), args)
	}
	var published [][]string
	for _, args := range slowlog(t, node) {
		if strings.EqualFold(args[0], "publish") || strings.EqualFold(args[0], "spublish") {
			published = append(published, args)
		}
	}
	if len(published) != 1 || !strings.EqualFold(published[0][0], "spublish") || published[0][1] != m.channel || published[0][2] != "0" {
		t.Errorf("the release published %q, want one SPUBLISH of 0 on %s", published, m.channel)
	}
}

// usualReleaseCalls takes m and releases it with the server logging every
// command (SLOWLOG with no threshold), and returns the EVALSHAs the release
// sent.
func usualReleaseCalls(t *testing.T, node *redistest.Node, m *Mutex) [][]string {
	t.Helper()
	l, err := m.Lock(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	node.Do(t, "SLOWLOG", "RESET")
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	node.Do(t, "CONFIG", "SET", "slowlog-log-slower-than", "10000")
	var calls [][]string
	for _, args := range slowlog(t, node) {
		if strings.EqualFold(args[0], "evalsha") {
			calls = append(calls, args)
		}
	}
	return calls
}

// slowlog returns the commands in node's SLOWLOG, oldest first, scripts'
// own calls among them.
func slowlog(t *testing.T, node *redistest.Node) [][]string {
	t.Helper()
	entries, err := node.Do(t, "SLOWLOG", "GET", "100").ToArray()
	if err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	for i := len(entries) - 1; i >= 0; i-- {
		fields, err := entries[i].ToArray()
		if err != nil || len(fields) < 4 {
			t.Fatalf("slowlog entry %v: %v", entries[i], err)
		}
		args, err := fields[3].AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		if len(args) > 0 {
			cmds = append(cmds, args)
		}
	}
	return cmds
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
