package main

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A permit id is 16 random bytes on the server (PermitSemaphore's and
// Redisson's), which their holders know by the 32 hex digits the API hands
// out. Some of those byte strings happen to be printable text: inspect and
// watch still show them as the hex id their holder can release.
func TestPermitIDOfPrintableBytesShownAsHex(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	p := mustPermits(t, c, "exports")
	if _, err := p.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// A permit taken whose random bytes are all printable, as one in some
	// ten million is: written as the acquire script writes it.
	const raw = "0123456789abcdef"
	id := hex.EncodeToString([]byte(raw))
	end := time.Now().Add(time.Minute).UnixMilli()
	if err := d.rc.Do(ctx, d.rc.B().Zadd().Key("{"+prefix+"exports}:timeout").ScoreMember().
		ScoreMember(float64(end), raw).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := d.rc.Do(ctx, d.rc.B().Decr().Key(prefix+"exports").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	res := cli(ctx, d, "", "inspect", "--json", "--key-prefix", prefix, "exports")
	var r Report
	if err := json.Unmarshal([]byte(res.out), &r); err != nil {
		t.Fatalf("%v\n%s%s", err, res.out, res.errOut)
	}
	if len(r.Permits) != 1 || r.Permits[0].ID != id {
		t.Errorf("inspect --json permits %+v, want the one permit as its holder knows it, %s", r.Permits, id)
	}
	if text := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "exports").out; !strings.Contains(text, id) {
		t.Errorf("inspect shows no permit %s:\n%s", id, text)
	}
	if line := summary(&r); !strings.Contains(line, "1 permit held: "+id) {
		t.Errorf("watch line %q, want permit %s", line, id)
	}
	// The id shown is the one the semaphore releases.
	if err := p.Release(ctx, id); err != nil {
		t.Fatalf("release %s (%s): %v", id, strconv.Quote(raw), err)
	}
}
