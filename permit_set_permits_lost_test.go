package scriptlock

import (
	"testing"
	"time"
)

// A SetPermits whose reply is lost is made again, and the repeat must not
// apply the total a second time: an AddPermits that another caller made
// after the first attempt ran (and whose reply shows it counted from that
// total) would be undone.
func TestPermitSetPermitsReplyLostKeepsLaterAdd(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustPermits(t, p.c, "set-retry")
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := s.SetPermits(ctx, 3); err != nil { // script loaded
		t.Fatal(err)
	}
	other := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	o := mustPermits(t, other, "set-retry")
	count := func() int64 { return countAt(t, p.node, s.Key()) }
	added := int64(0)
	// Replies held back once the record is reserved: the call's is lost.
	err := p.lostDeletionReply(t, func() bool {
		if count() != 5 {
			return false
		}
		// Another caller adds a permit once the first attempt ran.
		v, err := o.AddPermits(ctx, 1)
		if err != nil {
			t.Error(err)
		}
		added = v
		return true
	}, func() error { return s.SetPermits(ctx, 5) })
	if err != nil {
		t.Fatalf("SetPermits whose first reply was lost: %v, want success", err)
	}
	if added != 6 {
		t.Fatalf("AddPermits after the first attempt answered %d, want 6", added)
	}
	if n := count(); n != 6 {
		t.Fatalf("permits after the retried SetPermits = %d, want 6: the repeat undid the AddPermits made after the first attempt", n)
	}
}
