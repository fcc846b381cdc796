package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Cluster primary busy running a script past busy-reply-threshold answers
// every command of list's BUSY, as it would none while hung: it is named
// unread, and the other primaries' locks are listed (exit 6).
func TestListPrimaryBusy(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	busy := cl.Nodes[1]
	// Seeds that answer: rueidis takes the Cluster's layout from the first
	// seed it reaches, and from a busy one gets BUSY, failing the connection.
	d := deployment{url: "redis://" + cl.Nodes[0].Addr + "?addr=" + cl.Nodes[2].Addr, rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	byNode := map[string]string{}
	for i := 0; len(byNode) < 3; i++ {
		n := "order:" + strconv.Itoa(i)
		if a := cl.NodeFor(t, prefix+n).Addr; byNode[a] == "" {
			byNode[a] = n
			heldMutex(t, ctx, c, n, "w")
		}
	}
	makeBusy(t, busy)
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	if r.code != exitPartial || !strings.Contains(r.errOut, busy.Addr) {
		t.Fatalf("list with primary %s busy: exit %d, want %d naming it\n%s%s", busy.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	var got, want []string
	for _, lk := range l.Locks {
		got = append(got, lk.Key)
	}
	for a, n := range byNode {
		if a != busy.Addr {
			want = append(want, prefix+n)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(l.Unread) != 1 || l.Unread[0].Node != busy.Addr {
		t.Errorf("listed %q, unread %+v; want %q and %s unread", got, l.Unread, want, busy.Addr)
	}
}

// makeBusy has busy run a script for 20 s past busy-reply-threshold, so that it
// answers every command BUSY, until the test ends and kills the script.
func makeBusy(t *testing.T, busy *redistest.Node) {
	t.Helper()
	if err := busy.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50").Error(); err != nil {
		t.Fatal(err)
	}
	// Runs for 20 s by the server's clock, unless killed.
	const slow = `local s = redis.call('time')
while true do
  local n = redis.call('time')
  if n[1] - s[1] > 20 then return 1 end
end`
	done := make(chan struct{})
	go func() {
		defer close(done)
		busy.Do(t, "EVAL", slow, "0")
	}()
	t.Cleanup(func() {
		busy.Do(t, "SCRIPT", "KILL")
		<-done
	})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		err := busy.Do(t, "PING").Error()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered BUSY (last: %v)", busy.Addr, err)
		}
	}
}
