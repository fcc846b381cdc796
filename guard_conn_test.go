package scriptlock

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// guardConnOptions are rueidis options whose retry and reconnection rules
// could send a guarded write's WAIT again, alone, on a new connection: there
// it counts the replicas that acknowledged nothing written on it, and
// answers at once with the replicas connected (TestGuardWaitAloneVouches).
var guardConnOptions = []struct {
	name string
	set  func(*rueidis.ClientOption)
}{
	{"default", func(*rueidis.ClientOption) {}},
	{"DisableRetry", func(o *rueidis.ClientOption) { o.DisableRetry = true }},
	{"AlwaysPipelining", func(o *rueidis.ClientOption) { o.AlwaysPipelining = true }},
	{"DisableAutoPipelining", func(o *rueidis.ClientOption) { o.DisableAutoPipelining = true }},
}

// replicated writes key on rc and waits until the replica has it, so that
// the replica's acknowledged offset covers every write made so far.
func replicated(t *testing.T, rc rueidis.Client, key string) {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	rs := rc.DoMulti(ctx, rc.B().Set().Key(key).Value("1").Build(), rc.B().Wait().Numreplicas(1).Timeout(5000).Build())
	if n, err := rs[1].AsInt64(); err != nil || n != 1 {
		t.Fatalf("WAIT with the replica running: %d, %v", n, err)
	}
}

// TestGuardWaitAloneVouches is the hazard the tests below rule out: with the
// only replica stopped after a write, WAIT on a connection that ran nothing
// before it answers at once that a replica has the write. (A connection that
// ran any command since the write, as the HELLO that opens every rueidis
// connection, waits instead: Redis 7.0 sets a connection's WAIT offset
// after each of its commands, writes or not.)
func TestGuardWaitAloneVouches(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	replicated(t, primary.Client(t), "guard-wait-alone-before")
	replica.Pause()
	defer replica.Resume()
	if err := primary.Do(t, "SET", "guard-wait-alone", "1").Error(); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", primary.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	_ = conn.SetDeadline(start.Add(5 * time.Second))
	if _, err := conn.Write([]byte("*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$4\r\n2000\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || line != ":1\r\n" || time.Since(start) > time.Second {
		t.Fatalf("WAIT 1 as a fresh connection's first command, the replica stopped: %q, %v after %s; want :1 at once", line, err, time.Since(start))
	}
}

// untilWritten returns once key exists on primary (the guarded write has
// run and its WAIT waits on the stopped replica); it fails the test if
// returned reports first or nothing is written within 5 s.
func untilWritten(t *testing.T, primary *redistest.Node, key string, returned <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if n, _ := primary.Do(t, "EXISTS", key).AsInt64(); n == 1 {
			// Let the script's reply arrive before WAIT's connection breaks.
			time.Sleep(20 * time.Millisecond)
			return
		}
		select {
		case err := <-returned:
			t.Fatalf("returned (%v) before %s was written", err, key)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written on the primary", key)
		}
	}
}

// TestGuardWaitConnBroken: the connection of a guarded write breaks after the
// script ran, while its WAIT waits on the stopped replica. rueidis must not
// send the WAIT again, alone, on a new connection, where it would answer 1
// at once (TestGuardWaitAloneVouches). It does not: WAIT is no retryable
// command, so no batch holding it is retried, and as a blocking command it
// takes the batch to a pooled connection whose lifetime timer is stopped
// while in use, so an expired connection's partial re-send never applies.
func TestGuardWaitConnBroken(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	for _, o := range guardConnOptions {
		for _, deadline := range []bool{true, false} {
			name := o.name + "/deadline"
			if !deadline {
				name = o.name + "/cancel"
			}
			t.Run(name, func(t *testing.T) {
				px := netproxy.New(t, primary.Addr)
				opt := rueidis.ClientOption{InitAddress: []string{px.Addr}, DisableCache: true}
				o.set(&opt)
				rc, err := rueidis.NewClient(opt)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(rc.Close)
				// A context without a deadline makes rueidis read the
				// replies in the background, one with it in the call.
				ctx, cancel := context.WithCancel(context.Background())
				if deadline {
					ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
				}
				defer cancel()
				c := newTestClient(t, rc, WithFailoverGuard(true, 5*time.Second))
				m := mustMutex(t, c, "guard-conn")
				// Scripts loaded, replicas counted, everything replicated.
				lctx, err := m.TryLock(ctx, 0)
				if err != nil {
					t.Fatalf("TryLock with the replica running: %v", err)
				}
				if err := m.Unlock(lctx); err != nil {
					t.Fatal(err)
				}
				replicated(t, rc, redistest.Prefix(t)+"before")
				replica.Pause()
				defer replica.Resume()

				key := redistest.Prefix(t) + "raw"
				waits := waitCalls(t, primary)
				done := make(chan []rueidis.RedisResult, 1)
				go func() {
					done <- rc.DoMulti(ctx, rc.B().Set().Key(key).Value("1").Build(), rc.B().Wait().Numreplicas(1).Timeout(5000).Build())
				}()
				untilWritten(t, primary, key, nil)
				px.DropAll()
				select {
				case rs := <-done:
					if n, err := rs[1].AsInt64(); err == nil {
						t.Fatalf("WAIT answered %d after its connection broke while it waited: it was sent again on another connection", n)
					}
				case <-time.After(4 * time.Second):
					t.Fatal("DoMulti did not return after its connection broke")
				}
				if n := waitCalls(t, primary) - waits; n != 1 {
					t.Fatalf("the primary ran %d WAITs for one DoMulti whose connection broke", n)
				}
				waits = waitCalls(t, primary)

				res := make(chan error, 1)
				go func() {
					lctx, err := m.TryLock(ctx, 0)
					if err == nil {
						_ = m.Unlock(lctx)
					}
					res <- err
				}()
				untilWritten(t, primary, m.key, res)
				px.DropAll()
				select {
				case err := <-res:
					if err == nil {
						t.Fatal("TryLock succeeded although its connection broke while WAIT waited on the only replica, stopped: the grant was counted as replicated")
					}
				case <-time.After(8 * time.Second): // past the guard's timeout
					t.Fatal("TryLock did not return after its connection broke")
				}
				if n := waitCalls(t, primary) - waits; n != 1 {
					t.Fatalf("the primary ran %d WAITs for one guarded TryLock whose connection broke", n)
				}
			})
		}
	}
}
