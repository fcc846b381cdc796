package scriptlockotel_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	scriptlockotel "github.com/scriptlock/scriptlock/otel"
)

// With WithLockNameAttribute(true), the metrics that carry
// scriptlock.lock.name are those docs/operations.md's table says carry it,
// and no other: the watchdog's, the failover guard's and the middleware's are
// not about one lock.
func TestDocumentedLockNameMetrics(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(scriptlock\\.[a-z_.]+)` \\| [^|]+ \\| ([^|]+) \\|").FindAllSubmatch(doc, -1) {
		documented[string(m[1])] = strings.Contains(string(m[2]), "lock.name")
	}
	if len(documented) < 10 {
		t.Fatalf("found %d rows in docs/operations.md's metric table", len(documented))
	}

	node := redistest.Server(t)
	tm := newTelemetry(t, scriptlockotel.WithLockNameAttribute(true))
	c, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(redistest.Prefix(t)), scriptlock.WithObserver(tm.obs),
		scriptlock.WithWatchdog(time.Second, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := mustMutex(t, c, "tenant-a")
	a, err := m.Lock(scriptlock.WithOwner(ctx, "a"))
	if err != nil {
		t.Fatal(err)
	}
	woken := make(chan error, 1)
	go func() {
		l, err := m.Lock(scriptlock.WithOwner(ctx, "b"))
		if err == nil {
			err = m.Unlock(l)
		}
		woken <- err
	}()
	time.Sleep(300 * time.Millisecond) // a watchdog round or more
	if err := m.Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := <-woken; err != nil {
		t.Fatal(err)
	}
	tm.obs.MiddlewareOutcome(ctx, scriptlock.RequestLocked)

	checked := 0
	for name, metric := range tm.collect(t) {
		carries, seen := false, false
		switch d := metric.Data.(type) {
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				seen = true
				carries = carries || p.Attributes.HasValue(scriptlockotel.AttrLockName)
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				seen = true
				carries = carries || p.Attributes.HasValue(scriptlockotel.AttrLockName)
			}
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				seen = true
				carries = carries || p.Attributes.HasValue(scriptlockotel.AttrLockName)
			}
		}
		if !seen {
			continue
		}
		checked++
		if want, ok := documented[name]; !ok {
			t.Errorf("%s: not in docs/operations.md's table", name)
		} else if carries != want {
			t.Errorf("%s: carries scriptlock.lock.name: %v; docs/operations.md's table says %v", name, carries, want)
		}
	}
	if checked < 8 {
		t.Errorf("%d metrics recorded; the scenario no longer records what it should", checked)
	}
}
