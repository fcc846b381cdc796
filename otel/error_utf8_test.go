package scriptlockotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An error's text can hold a lock's name, bytes that need not be UTF-8 (the
// server's refusal of a fencing-token counter names the counter's key),
// while OTLP's strings must be: the exception a failed Lock records on its
// span gives such bytes as \xNN escapes, so that the batch it is exported
// in is not refused whole.
func TestErrorMessageNotUTF8(t *testing.T) {
	node := redistest.Server(t)
	tm := newTelemetry(t)
	prefix := redistest.Prefix(t)
	c, err := scriptlock.New(node.Client(t), scriptlock.WithKeyPrefix(prefix), scriptlock.WithObserver(tm.obs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const name = "order:\xff\xfe:1"
	// A counter no token can be drawn from: the acquisition is refused.
	node.Do(t, "SET", "redisson_lock_token:{"+prefix+name+"}", "not a number")
	m := mustMutex(t, c, name)
	if _, err := m.Lock(context.Background()); !errors.Is(err, scriptlock.ErrFenceCounter) {
		t.Fatalf("Lock: %v, want ErrFenceCounter", err)
	} else if utf8.ValidString(err.Error()) {
		t.Fatalf("the error %q is UTF-8: the test needs one that is not", err)
	}
	recorded := false
	for _, s := range tm.spans.Ended() {
		if !utf8.ValidString(s.Status().Description) {
			t.Errorf("span %s: status %q is not UTF-8", s.Name(), s.Status().Description)
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				v := kv.Value.String()
				if !utf8.ValidString(v) {
					t.Errorf("span %s event %s: attribute %s is not UTF-8: %q", s.Name(), e.Name, kv.Key, v)
				}
				if kv.Key == "exception.message" {
					recorded = true
					if !strings.HasSuffix(v, `:order:\xff\xfe:1}`) {
						t.Errorf("exception.message %q does not give the key's bytes as escapes", v)
					}
				}
			}
		}
	}
	if !recorded {
		t.Error("no exception recorded on the failed Lock's span")
	}
}
