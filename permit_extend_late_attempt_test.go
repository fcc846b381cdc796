package scriptlock

import (
	"testing"
	"time"
)

// TestPermitExtendLateAttemptKeepsLaterLease: an Extend whose connection
// broke under it is made again, and succeeds; the first attempt, held up on
// its way, reaches the server only after the holder's next Extend gave the
// permit a longer lease. It set its own shorter lease over that one, so the
// permit returned to the pool while its holder counted on the longer lease,
// and another caller took it. It now finds its call's record and changes
// nothing.
func TestPermitExtendLateAttemptKeepsLaterLease(t *testing.T) {
	t.Parallel()
	px, s, rival, ctx := proxiedPermit(t, "late-extend")
	id, err := s.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Extend(ctx, id, time.Minute); err != nil { // script loaded
		t.Fatal(err)
	}
	const short = 1234 * time.Millisecond
	px.HoldOn("\r\n1234\r\n")
	extended := make(chan error, 1)
	go func() { extended <- s.Extend(ctx, id, short) }()
	for deadline := time.Now().Add(5 * time.Second); !px.HeldOn(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Extend never reached the proxy")
		}
	}
	px.CutHeld() // made again on a new connection
	if err := <-extended; err != nil {
		t.Fatalf("Extend made again after its connection broke: %v", err)
	}
	if err := s.Extend(ctx, id, time.Minute); err != nil {
		t.Fatal(err)
	}
	px.Thaw() // the first attempt reaches the server now
	time.Sleep(short + 500*time.Millisecond)
	st, err := rival.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Held != 1 {
		t.Fatalf("after the held-up attempt reached the server: %d held, %d available; want the permit held for the minute its last Extend gave it", st.Held, st.Available)
	}
	if rid, err := rival.TryAcquire(ctx, time.Minute, 0); err == nil {
		t.Fatalf("another caller took permit %s while its holder's lease runs", rid)
	}
	if err := s.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
}
