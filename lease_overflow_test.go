package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A holder whose lease is longer than a time.Duration holds (about 292
// years: a Java client's, or a key another program set) is reported with
// the longest Duration, not one that overflowed: State's negative Lease means
// "held without expiry", and a NotAcquiredError's Remaining is never negative.
func TestHolderLeaseBeyondDuration(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, rc, prefix)
	ctx := testCtx(t, 20*time.Second)
	const ms = "10000000000000" // 10^13 ms, about 317 years
	const atLeast = 200 * 365 * 24 * time.Hour
	do := func(args ...string) {
		t.Helper()
		if err := rc.Do(ctx, rc.B().Arbitrary(args...).Build()).Error(); err != nil {
			t.Fatal(args, err)
		}
	}
	javaOwner := "5f8a2c1e-7b3d-4e6f-9a0b-1c2d3e4f5a6b:1"

	m := mustMutex(t, c, "java-mutex")
	do("HSET", m.Key(), javaOwner, "1")
	do("PEXPIRE", m.Key(), ms)
	if st, err := m.State(ctx); err != nil || st.Lease < atLeast {
		t.Errorf("Mutex.State of a holder leased for 10^13 ms: %+v, %v; want a Lease of centuries", st, err)
	}
	f := mustFair(t, c, "java-mutex")
	_, err := f.TryLock(ctx, 0)
	var na *NotAcquiredError
	if !errors.As(err, &na) || na.Remaining < atLeast {
		t.Errorf("FairMutex.TryLock beside a holder leased for 10^13 ms: %v (%+v); want ErrNotAcquired with centuries left", err, na)
	}

	l := mustLean(t, c, "lean")
	do("SET", l.Key(), "other-client:owner", "PX", ms)
	if st, err := l.State(ctx); err != nil || st.Lease < atLeast {
		t.Errorf("LeanMutex.State of a holder leased for 10^13 ms: %+v, %v; want a Lease of centuries", st, err)
	}
	_, err = l.TryLock(ctx, 0)
	na = nil
	if !errors.As(err, &na) || na.Remaining < atLeast {
		t.Errorf("LeanMutex.TryLock beside a holder leased for 10^13 ms: %v (%+v); want ErrNotAcquired with centuries left", err, na)
	}

	rw := mustRW(t, c, "java-rw")
	do("HSET", rw.Key(), "mode", "write", javaOwner, "1")
	do("PEXPIRE", rw.Key(), ms)
	if st, err := rw.State(ctx); err != nil || st.Lease < atLeast {
		t.Errorf("RWMutex.State of a writer leased for 10^13 ms: %+v, %v; want a Lease of centuries", st, err)
	}
	_, err = rw.TryRLock(ctx, 0)
	na = nil
	if !errors.As(err, &na) || na.Remaining < atLeast {
		t.Errorf("RWMutex.TryRLock beside a writer leased for 10^13 ms: %v (%+v); want ErrNotAcquired with centuries left", err, na)
	}
}
