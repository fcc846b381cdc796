package scriptlockotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/internal/redistest"
	scriptlockotel "github.com/scriptlock/scriptlock/otel"
)

// The Example runs against a redis-server started here.
func TestMain(m *testing.M) {
	exampleredis.Main(m, 1, redistest.LeakOptions()...)
}

// telemetry is an Observer wired to in-memory SDK readers.
type telemetry struct {
	obs    *scriptlockotel.Observer
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
}

func newTelemetry(t *testing.T, opts ...scriptlockotel.Option) *telemetry {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	obs, err := scriptlockotel.New(append([]scriptlockotel.Option{
		scriptlockotel.WithMeterProvider(mp), scriptlockotel.WithTracerProvider(tp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &telemetry{obs: obs, reader: reader, spans: spans, tp: tp}
}

func (tm *telemetry) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scriptlockotel.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// key renders an attribute set as "k=v,k=v" for lookups.
func key(s attribute.Set) string {
	var b []byte
	for _, kv := range s.ToSlice() {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, string(kv.Key)+"="+kv.Value.String()...)
	}
	return string(b)
}

func histCounts(t *testing.T, m metricdata.Metrics) map[string]uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is %T, want a float64 histogram", m.Name, m.Data)
	}
	out := map[string]uint64{}
	for _, p := range h.DataPoints {
		out[key(p.Attributes)] += p.Count
	}
	return out
}

func sums(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, want an int64 sum", m.Name, m.Data)
	}
	out := map[string]int64{}
	for _, p := range s.DataPoints {
		out[key(p.Attributes)] += p.Value
	}
	return out
}

func wantEqual[T comparable](t *testing.T, what string, got, want map[string]T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A scripted scenario: contention (one TryLock gives up, one Lock waits and
// is woken by the release), a lock lost while a request span is open, and an
// idempotent replay through the middleware.
func TestScenario(t *testing.T) {
	node := redistest.Server(t)
	tm := newTelemetry(t)
	prefix := scriptlock.WithKeyPrefix(redistest.Prefix(t))
	c, err := scriptlock.New(node.Client(t), prefix, scriptlock.WithObserver(tm.obs),
		scriptlock.WithWatchdog(time.Second, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin, err := scriptlock.New(node.Client(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tracer := tm.tp.Tracer("test")

	// Contention on order:1.
	m := mustMutex(t, c, "order:1")
	rctx, request := tracer.Start(ctx, "POST /orders/1")
	a, err := m.Lock(scriptlock.WithOwner(rctx, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.TryLock(scriptlock.WithOwner(ctx, "b"), 50*time.Millisecond); !errors.Is(err, scriptlock.ErrNotAcquired) {
		t.Fatalf("TryLock: %v", err)
	}
	woken := make(chan error, 1)
	go func() {
		l, err := m.Lock(scriptlock.WithOwner(ctx, "c"))
		if err == nil {
			err = m.Unlock(l)
		}
		woken <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := m.Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := <-woken; err != nil {
		t.Fatal(err)
	}
	request.End()

	// Loss on order:2: deleted behind the holder's back, with the request
	// span still open.
	lctx, lossRequest := tracer.Start(ctx, "POST /orders/2")
	held, err := mustMutex(t, c, "order:2").Lock(lctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := mustMutex(t, admin, "order:2").ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock: %v %v", ok, err)
	}
	<-held.Done()
	if !errors.Is(context.Cause(held), scriptlock.ErrLockLost) {
		t.Fatalf("cause %v", context.Cause(held))
	}
	waitUntil(t, "hold end recorded", func() bool {
		_, ok := histCounts(t, tm.collect(t)["scriptlock.lock.hold.duration"])["scriptlock.hold.end_cause=lost,scriptlock.primitive=mutex"]
		return ok
	})
	lossRequest.End()

	replayScenario(t, ctx, tm, c)

	got := tm.collect(t)
	wantEqual(t, "acquire.duration counts", histCounts(t, got["scriptlock.lock.acquire.duration"]), map[string]uint64{
		"scriptlock.outcome=acquired,scriptlock.primitive=mutex":  3 + replayAcquires,
		"scriptlock.outcome=contended,scriptlock.primitive=mutex": 1,
	})
	wantEqual(t, "hold.duration counts", histCounts(t, got["scriptlock.lock.hold.duration"]), map[string]uint64{
		"scriptlock.hold.end_cause=unlocked,scriptlock.primitive=mutex": 2 + replayAcquires,
		"scriptlock.hold.end_cause=lost,scriptlock.primitive=mutex":     1,
	})
	wantEqual(t, "release.duration counts", histCounts(t, got["scriptlock.lock.release.duration"]), map[string]uint64{
		"scriptlock.outcome=released,scriptlock.primitive=mutex": 2 + replayAcquires,
	})
	wantEqual(t, "held", sums(t, got["scriptlock.lock.held"]), map[string]int64{"scriptlock.primitive=mutex": 0})
	wakeups := sums(t, got["scriptlock.lock.wait.wakeups"])
	if wakeups["scriptlock.primitive=mutex,scriptlock.wakeup=message"] != 1 {
		t.Errorf("wakeups %v, want exactly one by message (the waiter behind a)", wakeups)
	}
	attempts := sums(t, got["scriptlock.lock.acquire.attempts"])["scriptlock.primitive=mutex"]
	// a, c (at least twice: before and after the release), the lost hold,
	// the replay's one; b at least twice within its 50 ms.
	if attempts < 6+replayAcquires {
		t.Errorf("attempts %d, want >= %d", attempts, 6+replayAcquires)
	}
	renewals := sums(t, got["scriptlock.watchdog.renewals"])
	if renewals["scriptlock.outcome=lost"] != 1 {
		t.Errorf("renewals %v, want one lost", renewals)
	}
	for name, m := range got {
		if m.Unit == "" {
			t.Errorf("%s has no unit", name)
		}
		if hasAttr(m, scriptlockotel.AttrLockName) {
			t.Errorf("%s carries the lock name without the opt-in", name)
		}
	}
	checkMiddlewareMetrics(t, got)

	// Spans: Lock and Unlock nest under the request span; the loss is an
	// event on the request span that was current when the lock was taken.
	var lockUnderRequest, unlocks int
	var lossEvent bool
	for _, s := range tm.spans.Ended() {
		switch s.Name() {
		case "scriptlock.Lock":
			if s.Parent().SpanID() == request.SpanContext().SpanID() {
				lockUnderRequest++
			}
		case "scriptlock.Unlock":
			unlocks++
			if attrValue(s.Attributes(), scriptlockotel.AttrOutcome) == "" {
				t.Errorf("Unlock span without %s: %v", scriptlockotel.AttrOutcome, s.Attributes())
			}
		case "POST /orders/2":
			for _, ev := range s.Events() {
				if ev.Name == "scriptlock.lock.lost" {
					lossEvent = attrValue(ev.Attributes, scriptlockotel.AttrLockName) == "order:2" &&
						attrValue(ev.Attributes, scriptlockotel.AttrEndCause) == "lost"
				}
			}
		}
	}
	if lockUnderRequest != 1 {
		t.Errorf("%d Lock spans under the request span, want 1", lockUnderRequest)
	}
	if unlocks != 2+replayAcquires {
		t.Errorf("%d Unlock spans, want %d", unlocks, 2+replayAcquires)
	}
	if !lossEvent {
		t.Error("no scriptlock.lock.lost event with name and cause on the request span")
	}
}

func hasAttr(m metricdata.Metrics, k attribute.Key) bool {
	check := func(s attribute.Set) bool { _, ok := s.Value(k); return ok }
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if check(p.Attributes) {
				return true
			}
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			if check(p.Attributes) {
				return true
			}
		}
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if check(p.Attributes) {
				return true
			}
		}
	}
	return false
}

func attrValue(kvs []attribute.KeyValue, k attribute.Key) string {
	for _, kv := range kvs {
		if kv.Key == k {
			return kv.Value.String()
		}
	}
	return ""
}

// With the opt-in, metrics carry the lock name.
func TestLockNameOptIn(t *testing.T) {
	node := redistest.Server(t)
	tm := newTelemetry(t, scriptlockotel.WithLockNameAttribute(true))
	c, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)), scriptlock.WithObserver(tm.obs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	m := mustMutex(t, c, "tenant-a")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	got := histCounts(t, tm.collect(t)["scriptlock.lock.acquire.duration"])
	wantEqual(t, "acquire.duration", got, map[string]uint64{
		"scriptlock.lock.name=tenant-a,scriptlock.outcome=acquired,scriptlock.primitive=mutex": 1,
	})
}

func mustMutex(t testing.TB, c *scriptlock.Client, name string) *scriptlock.Mutex {
	t.Helper()
	m, err := c.Mutex(name)
	if err != nil {
		t.Fatalf("Mutex(%q): %v", name, err)
	}
	return m
}

// Calls that Redis refuses without running (here BUSY: another client's
// script runs past busy-reply-threshold) and that are made again show in
// scriptlock.lock.retries, by call, and on the spans; calls answered at once
// add nothing.
func TestRetries(t *testing.T) {
	node := redistest.Server(t)
	tm := newTelemetry(t)
	rc := node.Client(t)
	c, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(redistest.Prefix(t)), scriptlock.WithObserver(tm.obs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holder, fresh := mustMutex(t, c, "busy"), mustMutex(t, c, "busy:fresh")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tm.collect(t)["scriptlock.lock.retries"]; ok {
		t.Fatal("scriptlock.lock.retries recorded for a Lock the server answered at once")
	}
	node.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50")
	script := make(chan error, 1)
	slow := node.Client(t) // its own connection: the script holds it
	go func() {
		script <- slow.Do(context.Background(), rc.B().Eval().Script(`local s = redis.call('time')
while true do
  local n = redis.call('time')
  if (n[1] - s[1]) * 1000000 + n[2] - s[2] > 1000000 then return 1 end
end`).Numkeys(0).Build()).Error()
	}()
	waitUntil(t, "the server answers BUSY", func() bool {
		err := rc.Do(ctx, rc.B().Ping().Build()).Error()
		return err != nil && strings.HasPrefix(err.Error(), "BUSY ")
	})
	unlocked := make(chan error, 1)
	go func() { unlocked <- holder.Unlock(held) }()
	l, err := fresh.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock while the server is busy: %v", err)
	}
	if err := <-unlocked; err != nil {
		t.Fatalf("Unlock while the server is busy: %v", err)
	}
	if err := <-script; err != nil {
		t.Fatal(err)
	}
	if err := fresh.Unlock(l); err != nil {
		t.Fatal(err)
	}
	got := sums(t, tm.collect(t)["scriptlock.lock.retries"])
	acq, rel := got["scriptlock.call=acquire,scriptlock.primitive=mutex"], got["scriptlock.call=release,scriptlock.primitive=mutex"]
	if len(got) != 2 || acq == 0 || rel == 0 {
		t.Errorf("scriptlock.lock.retries %v, want some for one acquire and one release of the mutex", got)
	}
	spans := map[string]int64{}
	for _, s := range tm.spans.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == scriptlockotel.AttrRetries {
				spans[s.Name()] += kv.Value.AsInt64()
			}
		}
	}
	wantEqual(t, "retries on spans", spans, map[string]int64{"scriptlock.Lock": acq, "scriptlock.Unlock": rel})
}

// Every lease of a renewal round trip is counted under one outcome, so the
// renewals add up to the batch size: a hold that ended during the round trip
// counts as ended.
func TestRenewalOutcomesAddUp(t *testing.T) {
	tm := newTelemetry(t)
	tm.obs.Renewal(scriptlock.RenewalEvent{Batch: 5, Renewed: 1, Lost: 1, Failed: 1, Ended: 2, Duration: time.Millisecond})
	wantEqual(t, "renewals", sums(t, tm.collect(t)["scriptlock.watchdog.renewals"]), map[string]int64{
		"scriptlock.outcome=renewed": 1, "scriptlock.outcome=lost": 1, "scriptlock.outcome=failed": 1, "scriptlock.outcome=ended": 2,
	})
}
