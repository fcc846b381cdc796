package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Another program's hash under the name is no lock: watch says so, and does
// not show its fields as holders.
func TestWatchHashThatIsNoLock(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	if err := d.rc.Do(ctx, d.rc.B().Hset().Key(prefix+"session").FieldValue().FieldValue("user", "alice").
		FieldValue("ip", "10.0.0.1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	wctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- run(wctx, []string{"--url", d.url, "watch", "--key-prefix", prefix, "session"}, strings.NewReader(""), &out, &errOut)
	}()
	waitFor(t, ctx, func() bool { return out.lines()[0] != "" })
	stop()
	<-done
	if line := out.lines()[0]; strings.Contains(line, "held by") || !strings.Contains(line, "not a lock") {
		t.Errorf("watch shows another program's hash as held, or not as no lock:\n%s", line)
	}
}
