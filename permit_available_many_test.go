package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// AvailablePermits answers every free permit, those whose lease ended
// included, also when more leases ended than one call returns to the pool
// (1000): State counts them so, and the next calls take them.
func TestPermitAvailableCountsEveryEndedLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustPermits(t, c, "available-many-expired")
	if err := node.Do(t, "SET", s.Key(), "3").Error(); err != nil {
		t.Fatal(err)
	}
	args := []string{"ZADD", s.timeouts}
	for i := range 1500 {
		args = append(args, "1", strconv.Itoa(i))
	}
	if err := node.Do(t, args...).Error(); err != nil {
		t.Fatal(err)
	}
	if st, err := s.State(ctx); err != nil || st.Available != 1503 || st.Held != 0 {
		t.Fatalf("State = %+v, %v; want 1503 available, 0 held", st, err)
	}
	if n, err := s.AvailablePermits(ctx); err != nil || n != 1503 {
		t.Fatalf("AvailablePermits = %d, %v; want 1503 (3 free and 1500 whose lease ended)", n, err)
	}
	if n, err := s.AvailablePermits(ctx); err != nil || n != 1503 {
		t.Fatalf("AvailablePermits again = %d, %v; want 1503", n, err)
	}
	if st, err := s.State(ctx); err != nil || st.Available != 1503 || st.Held != 0 {
		t.Fatalf("State afterwards = %+v, %v; want 1503 available, 0 held", st, err)
	}
}
