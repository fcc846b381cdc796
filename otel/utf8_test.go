package scriptlockotel_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	scriptlockotel "github.com/scriptlock/scriptlock/otel"
)

// Lock names are bytes, and need not be UTF-8 (a binary id, say), while
// OTLP's strings must be: an exporter fails to marshal a whole batch of
// spans, or every export of the metrics, that holds one invalid string. A
// name that is not UTF-8 is given in Go's quoted form on spans, span events
// and (opted in) metrics, as the scriptlock command prints it.
func TestLockNameNotUTF8(t *testing.T) {
	node := redistest.Server(t)
	tm := newTelemetry(t, scriptlockotel.WithLockNameAttribute(true))
	c, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)), scriptlock.WithObserver(tm.obs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const name = "order:\xff\xfe:1"
	m := mustMutex(t, c, name)
	ctx, request := tm.tp.Tracer("test").Start(context.Background(), "request")
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	lost := make(chan struct{})
	l, err = m.LockWithLease(ctx, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	go func() { <-l.Done(); close(lost) }()
	<-lost
	waitUntil(t, "the expiry reported", func() bool {
		for k := range histCounts(t, tm.collect(t)["scriptlock.lock.hold.duration"]) {
			if strings.Contains(k, "end_cause=expired") {
				return true
			}
		}
		return false
	})
	request.End()

	check := func(where string, kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			if s := kv.Value.String(); !utf8.ValidString(s) {
				t.Errorf("%s: attribute %s is not UTF-8: %q", where, kv.Key, s)
			} else if kv.Key == scriptlockotel.AttrLockName && s != `"order:\xff\xfe:1"` {
				t.Errorf("%s: lock name %s, want the quoted form %q", where, s, `"order:\xff\xfe:1"`)
			}
		}
	}
	for _, s := range tm.spans.Ended() {
		check("span "+s.Name(), s.Attributes())
		for _, e := range s.Events() {
			check("span "+s.Name()+" event "+e.Name, e.Attributes)
		}
	}
	for name, m := range tm.collect(t) {
		switch d := m.Data.(type) {
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				check(name, p.Attributes.ToSlice())
			}
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				check(name, p.Attributes.ToSlice())
			}
		}
	}
}
