package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A RedLock member of a MultiLock whose TryLock wait ran out while the
// RedLock's nodes did not answer reports no contention: its QuorumError is
// not ErrNotAcquired, since no node was seen held by another owner, and the
// MultiLock's error says the servers did not answer (Unanswered).
func TestMultiLockRedLockMemberCutNotContended(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 3)
	r := mustRedLock(t, "ml-red-cut", cs, WithNodeTimeout(2*time.Second))
	warm(t, r)
	ml := mustMulti(t, []Locker{r})
	for _, px := range pxs {
		px.Freeze()
		defer px.Thaw()
	}
	_, err := ml.TryLock(context.Background(), 300*time.Millisecond)
	for _, px := range pxs {
		px.Thaw()
	}
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		t.Errorf("MultiLock TryLock, nodes frozen: %v, want a NotAcquiredError with Unanswered", err)
	}
	var qe *QuorumError
	if !errors.As(err, &qe) {
		t.Fatalf("MultiLock TryLock, nodes frozen: %v, want the RedLock's QuorumError", err)
	}
	if errors.Is(qe, ErrNotAcquired) {
		t.Errorf("RedLock member, nodes frozen: %q, reports a node held by another owner", qe)
	}
}
