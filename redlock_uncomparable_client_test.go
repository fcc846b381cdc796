package scriptlock

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// hookedRC is a rueidis client wrapper of an uncomparable type (a value
// with a func field, as a middleware's often is).
type hookedRC struct {
	rueidis.Client
	hook func()
}

// TestNewRedLockUncomparableClients: NewRedLock over Clients made with
// rueidis clients of an uncomparable type (a wrapper value with a func
// field) makes the RedLock, which locks. Its check that no two Clients share
// one rueidis client compared them with ==, which panicked ("comparing
// uncomparable type").
func TestNewRedLockUncomparableClients(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		cs[i] = newTestClient(t, hookedRC{Client: n.Client(t), hook: func() {}}, prefix)
	}
	var r *RedLock
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("NewRedLock over Clients of uncomparable rueidis clients panicked: %v", v)
			}
		}()
		r = mustRedLock(t, "uncomparable", cs)
	}()
	ctx := testCtx(t, 30*time.Second)
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
