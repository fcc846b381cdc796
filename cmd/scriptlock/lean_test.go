package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A held LeanMutex (a string key holding <client-id>:<owner-id>) is a lock:
// inspect names its holder, list shows it, force-unlock releases it.
func TestLeanMutex(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.rc, prefix)
			l, err := c.LeanMutex("stock:sku-9")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Lock(scriptlock.WithOwner(ctx, "worker-3")); err != nil {
				t.Fatal(err)
			}

			r := inspectJSON(t, ctx, d, prefix, "stock:sku-9")
			if r.Kind != kindLean || !r.IsLock() || r.HolderCount != 1 || len(r.Holders) != 1 || r.Counter != nil {
				t.Fatalf("held LeanMutex: kind %q, holders %d %+v, counter %v; want a lean_mutex held by %s:worker-3",
					r.Kind, r.HolderCount, r.Holders, r.Counter, c.ID())
			}
			if h := r.Holders[0]; h.Client != c.ID() || h.Owner != "worker-3" || h.Holds != 1 {
				t.Errorf("holder %+v, want client %s owner worker-3 holds 1", h, c.ID())
			}
			text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "stock:sku-9")
			if strings.Contains(text.out, "counter") || !strings.Contains(text.out, "worker-3") {
				t.Errorf("table output:\n%s", text.out)
			}

			lr := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
			if lr.code != exitOK || !strings.Contains(lr.out, `"key": "`+prefix+`stock:sku-9"`) {
				t.Errorf("list (exit %d) lacks the held LeanMutex:\n%s%s", lr.code, lr.out, lr.errOut)
			}

			fu := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "stock:sku-9")
			if fu.code != exitOK {
				t.Fatalf("force-unlock of a held LeanMutex: exit %d\n%s%s", fu.code, fu.out, fu.errOut)
			}
			if st, err := l.State(ctx); err != nil || st.Locked {
				t.Errorf("after force-unlock: %+v %v", st, err)
			}
			// Another string is neither a lock nor a counter.
			for _, v := range []string{"hello", `{"a":1}`, "worker:7"} {
				if err := d.rc.Do(ctx, d.rc.B().Set().Key(prefix+"blob").Value(v).Build()).Error(); err != nil {
					t.Fatal(err)
				}
				if r := inspectJSON(t, ctx, d, prefix, "blob"); r.Kind != kindUnknown || r.Counter != nil || len(r.Holders) != 0 {
					t.Errorf("string %q: %+v", v, r)
				}
			}
			// A Semaphore's counter is still not a lock.
			s := mustSem(t, c, "sem")
			if _, err := s.TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if r := inspectJSON(t, ctx, d, prefix, "sem"); r.Kind != kindCounter || r.Counter == nil || *r.Counter != 3 {
				t.Errorf("semaphore: %+v", r)
			}
		})
	}
}
