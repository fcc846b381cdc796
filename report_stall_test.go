package scriptlock

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// stuckObserver's HoldEnd and Renewal block until release is closed (a
// metrics exporter that stalled); blocked counts the calls blocked at once,
// renewals those of Renewal alone.
type stuckObserver struct {
	NopObserver
	release  chan struct{}
	blocked  *atomic.Int32
	renewals *atomic.Int32
}

func (s stuckObserver) HoldEnd(context.Context, Op, HoldEvent) { s.block(nil) }
func (s stuckObserver) Renewal(RenewalEvent)                   { s.block(s.renewals) }

func (s stuckObserver) block(kind *atomic.Int32) {
	for _, n := range []*atomic.Int32{s.blocked, kind} {
		if n != nil {
			n.Add(1)
			defer n.Add(-1)
		}
	}
	<-s.release
}

// TestLossReportNotHoldingUpRenewals: a hold the watchdog finds lost is
// logged and reported to the Observer off the renewal path: a logger or an
// Observer that blocks must not keep the Client's other holds from being
// renewed (their server answers at once). Nor does a blocked Observer keep
// a goroutine per round: each round's report waited on its own, and their
// number grew without bound for as long as the Observer blocked.
func TestLossReportNotHoldingUpRenewals(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]func(release chan struct{}, renewals *atomic.Int32) []Option{
		"logger": func(release chan struct{}, _ *atomic.Int32) []Option {
			return []Option{WithLogger(slog.New(stuckLog{release: release}))}
		},
		"observer": func(release chan struct{}, renewals *atomic.Int32) []Option {
			return []Option{WithObserver(stuckObserver{release: release, renewals: renewals})}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			release := make(chan struct{})
			var renewals atomic.Int32
			c := newTestClient(t, node.Client(t), append(opts(release, &renewals), WithWatchdog(600*time.Millisecond, 0))...)
			t.Cleanup(func() { close(release) }) // before the Client closes
			ctx := testCtx(t, 30*time.Second)
			a := mustMutex(t, c, "stall-a")
			actx, err := a.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b := mustMutex(t, c, "stall-b")
			bctx, err := b.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			node.Do(t, "DEL", a.Key())
			select {
			case <-actx.Done():
			case <-time.After(2 * time.Second):
				t.Fatal("hold A not lost 2s after its key was deleted")
			}
			// Several of B's leases, each renewed a third of the way.
			select {
			case <-bctx.Done():
				t.Fatalf("hold B lost (%v) while the report of A's loss was stuck, its server answering", context.Cause(bctx))
			case <-time.After(3 * time.Second):
			}
			// Counted are Renewal's calls: every round gives one. A's HoldEnd
			// may block beside them on a goroutine of its own (its loss timer
			// fires first when a round comes late on a loaded machine), but
			// there is one of it, however long the Observer blocks.
			if n := renewals.Load(); n > 1 {
				t.Fatalf("%d Renewal reports blocked at once in the Observer, each holding a goroutine, after 3s of rounds every 200ms", n)
			}
		})
	}
}

// The same on a Cluster whose primaries have replicas: the failover guard's
// renewal rounds take one of a node's guardedGroups places each, and a
// round whose report was stuck kept its place. Once that many were stuck
// (16 rounds of a stuck Renewal, 16 slots' losses with a stuck logger), no
// guarded renewal on the node was sent again, and every hold there was lost.
func TestLossReportNotHoldingUpGuardedRenewals(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	p := cl.Primaries(t)[0]
	for name, opts := range map[string]func(release chan struct{}) []Option{
		"logger": func(release chan struct{}) []Option {
			return []Option{WithLogger(slog.New(stuckLog{release: release}))}
		},
		"observer": func(release chan struct{}) []Option {
			return []Option{WithObserver(stuckObserver{release: release})}
		},
	} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			// A lease well above the guard's WAIT bound, so that a replica's
			// acknowledgement slowed by a loaded machine costs no hold.
			c := newTestClient(t, cl.Client(t), append(opts(release), WithWatchdog(1500*time.Millisecond, 0),
				WithFailoverGuard(true, 500*time.Millisecond))...)
			t.Cleanup(func() { close(release) }) // before the Client closes
			ctx := testCtx(t, 60*time.Second)
			// guardedGroups holds on p, each in a slot of its own, lost
			// together: one round each, each stuck reporting its loss.
			var lost []context.Context
			var keys []string
			for i := range guardedGroups {
				m := mustMutex(t, c, tagOn(t, cl, p, name+"-lost-"+strconv.Itoa(i))+"a")
				lctx, err := m.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				lost = append(lost, lctx)
				keys = append(keys, m.Key())
			}
			b := mustMutex(t, c, tagOn(t, cl, p, name+"-kept")+"b")
			bctx, err := b.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				p.Do(t, "DEL", k)
			}
			for i, lctx := range lost {
				select {
				case <-lctx.Done():
				case <-time.After(3 * time.Second):
					t.Fatalf("hold %d not lost 3s after its key was deleted", i)
				}
			}
			// Several of B's leases (and, with the Observer stuck, more
			// than guardedGroups rounds of B alone).
			select {
			case <-bctx.Done():
				t.Fatalf("hold B lost (%v) while the reports of other rounds were stuck, its node and replica answering", context.Cause(bctx))
			case <-time.After(5 * time.Second):
			}
		})
	}
}

// While the logger or Observer blocks, the log records and Renewal events
// waiting for it are bounded (maxLooseReports); those past the bound are
// dropped, counted, and said once in a WARN as soon as the reports flow
// again. A HoldEnd is never dropped, and everything is delivered in order.
func TestReportsBoundedWhileBlocked(t *testing.T) {
	t.Parallel()
	sink := &logSink{}
	r := newReporter(slog.New(sink))
	entered, release := make(chan struct{}), make(chan struct{})
	r.add(queuedReport{f: func() { close(entered); <-release }, kind: reportLog})
	<-entered
	var mu sync.Mutex
	var got []string
	note := func(s string) func() {
		return func() { mu.Lock(); got = append(got, s); mu.Unlock() }
	}
	const over = 7
	for i := range maxLooseReports + over {
		kind := reportLog
		if i%2 == 1 {
			kind = reportRenewal
		}
		r.add(queuedReport{f: note("loose"), kind: kind})
		if i%100 == 0 {
			r.add(queuedReport{f: note("end-" + strconv.Itoa(i)), kind: reportHoldEnd})
		}
	}
	close(release)
	r.close()
	var ends, loose int
	for _, s := range got {
		if s == "loose" {
			loose++
		} else {
			if want := "end-" + strconv.Itoa(100*ends); s != want {
				t.Errorf("HoldEnd %q delivered where %q was due", s, want)
			}
			ends++
		}
	}
	if loose != maxLooseReports || ends != (maxLooseReports+over+99)/100 {
		t.Errorf("delivered %d log records and Renewal events and %d HoldEnds, want %d and %d", loose, ends, maxLooseReports, (maxLooseReports+over+99)/100)
	}
	var said []string
	for _, l := range sink.logs {
		if strings.Contains(l, "reports dropped") {
			said = append(said, l)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "log_records=4") || !strings.Contains(said[0], "renewal_events=3") {
		t.Errorf("drops said as %q, want once, 4 log records and 3 Renewal events", said)
	}
}
