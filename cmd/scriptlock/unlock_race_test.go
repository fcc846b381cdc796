package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// meanwhileBeforeDelete runs f when force-unlock of key has read the lock for
// the last time and is about to delete it.
func meanwhileBeforeDelete(t *testing.T, key string, f func()) {
	t.Helper()
	beforeForceDelete.Store(key, f)
	t.Cleanup(func() { beforeForceDelete.Delete(key) })
}

// A lock that changes between force-unlock's last reading (after the
// operator's yes, or with --yes) and its delete is left alone: the delete
// goes ahead only while the lock is still the one confirmed.
func TestForceUnlockLeavesLockChangedBeforeDelete(t *testing.T) {
	t.Parallel()
	for _, d := range deployments(t) {
		t.Run(d.name, func(t *testing.T) {
			for _, tc := range []struct {
				name, stdin string
				flags       []string
			}{
				{"yes flag", "", []string{"--yes"}},
				{"confirmed at the prompt", "y\n", nil},
			} {
				t.Run(tc.name, func(t *testing.T) {
					ctx := testCtx(t, 60*time.Second)
					prefix := redistest.Prefix(t)
					c := newClient(t, d.rc, prefix)
					m := mustMutex(t, c, "order:9")
					stuck, err := m.Lock(scriptlock.WithOwner(ctx, "stuck-worker"))
					if err != nil {
						t.Fatal(err)
					}
					meanwhileBeforeDelete(t, prefix+"order:9", func() {
						// The stuck worker recovers and releases; a healthy one takes it.
						if err := m.Unlock(stuck); err != nil {
							t.Error(err)
						}
						if _, err := m.Lock(scriptlock.WithOwner(ctx, "healthy-worker")); err != nil {
							t.Error(err)
						}
					})
					args := append([]string{"--key-prefix", prefix, "force-unlock"}, tc.flags...)
					r := cli(ctx, d, tc.stdin, append(args, "order:9")...)
					st, err := m.State(scriptlock.WithOwner(ctx, "healthy-worker"))
					if err != nil {
						t.Fatal(err)
					}
					if r.code != exitNotConfirmed || st.HoldCount != 1 {
						t.Fatalf("lock changed hands before the delete: exit %d, healthy-worker's hold count now %d "+
							"(want exit %d and its hold kept)\n%s%s", r.code, st.HoldCount, exitNotConfirmed, r.out, r.errOut)
					}
					if !strings.Contains(r.errOut, "changed since it was confirmed") {
						t.Errorf("refusal does not say the lock changed:\n%s", r.errOut)
					}
				})
			}
			// The name is released and taken by a key of another kind (a
			// semaphore's count): it is no lock of the kind confirmed.
			t.Run("another kind", func(t *testing.T) {
				ctx := testCtx(t, 60*time.Second)
				prefix := redistest.Prefix(t)
				c := newClient(t, d.rc, prefix)
				m := mustMutex(t, c, "order:10")
				stuck, err := m.Lock(scriptlock.WithOwner(ctx, "stuck-worker"))
				if err != nil {
					t.Fatal(err)
				}
				key := prefix + "order:10"
				meanwhileBeforeDelete(t, key, func() {
					if err := m.Unlock(stuck); err != nil {
						t.Error(err)
					}
					if err := d.rc.Do(ctx, d.rc.B().Set().Key(key).Value("3").Build()).Error(); err != nil {
						t.Error(err)
					}
				})
				r := cli(ctx, d, "", "--key-prefix", prefix, "force-unlock", "--yes", "order:10")
				v, err := d.rc.Do(ctx, d.rc.B().Get().Key(key).Build()).ToString()
				if r.code != exitNotConfirmed || err != nil || v != "3" {
					t.Fatalf("a count replaced the lock before the delete: exit %d, the count now %q %v (want exit %d and \"3\" kept)\n%s%s",
						r.code, v, err, exitNotConfirmed, r.out, r.errOut)
				}
			})
		})
	}
}
