package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// list's QUEUED column counts the Go waiters registered on a Mutex, as it
// counts a fair lock's queue and a read-write lock's pending writers.
func TestListCountsMutexWaiters(t *testing.T) {
	t.Parallel()
	d := deployments(t)[0]
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))
	m := mustMutex(t, c, "order:1")
	if _, err := m.Lock(scriptlock.WithOwner(ctx, "holder")); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = m.Lock(scriptlock.WithOwner(wctx, "waiter"))
	}()
	waitFor(t, ctx, func() bool { return inspectJSON(t, ctx, d, prefix, "order:1").MutexWaiterCount == 1 })
	r := cli(ctx, d, "", "list", "--key-prefix", prefix)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != exitOK || len(lines) != 2 {
		t.Fatalf("list: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	for i, h := range header {
		if h == "QUEUED" && (i >= len(row) || row[i] != "1") {
			t.Errorf("QUEUED of a mutex with one Go waiter is not 1:\n%s", r.out)
		}
	}
}
