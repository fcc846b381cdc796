package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// aclUser runs acl-user and returns its line, or fails t.
func aclUser(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	r := cli(ctx, deployment{url: "redis://127.0.0.1:1"}, "", append([]string{"acl-user"}, args...)...)
	if r.code != exitOK || r.errOut != "" {
		t.Fatalf("acl-user %q: exit %d\n%s%s", args, r.code, r.out, r.errOut)
	}
	return strings.TrimSuffix(r.out, "\n")
}

// docs/operations.md shows what acl-user prints for the prefix orders: (the
// root package's TestACLUserForClients runs that line with every primitive),
// and acl-user sends nothing: its --url names a port nobody listens on.
func TestACLUserMatchesDocs(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t, 10*time.Second)
	got := aclUser(t, ctx, "--key-prefix", "orders:", "orders")
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "\n"+got+"\n") {
		t.Errorf("docs/operations.md does not show acl-user's line for orders:\n%s", got)
	}
	r := cli(ctx, deployment{url: "redis://127.0.0.1:1"}, "", "acl-user", "--json", "--key-prefix", "orders:", "orders")
	var j struct {
		User  string   `json:"user"`
		Rules []string `json:"rules"`
	}
	if err := json.Unmarshal([]byte(r.out), &j); err != nil || r.code != exitOK {
		t.Fatalf("acl-user --json: exit %d, %v\n%s%s", r.code, err, r.out, r.errOut)
	}
	if want := "ACL SETUSER " + j.User + " " + strings.Join(j.Rules, " "); want != got {
		t.Errorf("acl-user --json gives\n%s\nthe line is\n%s", want, got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--key-prefix", "{x", "u"}, "'{' without a non-empty hash tag"},
		{[]string{"--key-prefix", "x}", "u"}, "'}' without a hash tag"},
		{[]string{"u", "v"}, "usage: scriptlock acl-user"},
		{[]string{"--key-prefix", "has space:", "u"}, "Redis refuses whitespace and NUL in ACL patterns"},
		{[]string{"--key-prefix", "tab\t:", "u"}, "Redis refuses whitespace and NUL in ACL patterns"},
	} {
		if r := cli(ctx, deployment{url: "redis://127.0.0.1:1"}, "", append([]string{"acl-user"}, c.args...)...); r.code != exitUsage || !strings.Contains(r.errOut, c.want) {
			t.Errorf("acl-user %q: exit %d, %q; want exit %d saying %q", c.args, r.code, r.errOut, exitUsage, c.want)
		}
	}
	// The read-only user's commands are the page's ops-ro user's.
	ops := redistest.DocACLUser(t, "../../docs/operations.md", "ops-ro", "pw")
	if i := slices.Index(ops, "&*"); i < 0 || !slices.Equal(ops[i+1:], readOnlyCommands) {
		t.Errorf("docs/operations.md's ops-ro user %q; acl-user --read-only gives the commands %q", ops, readOnlyCommands)
	}
	if got := aclUser(t, ctx, "u"); !strings.Contains(got, " ~* &* ") {
		t.Errorf("acl-user without a prefix: %s; want every key and channel", got)
	}
}

// The line acl-user prints, pasted into redis-cli, makes a user that runs
// the locks of its prefix, whatever bytes the prefix holds (glob characters,
// quotes, a control byte, a hash tag), and no lock of a prefix its
// patterns would match unescaped.
func TestACLUserPrefixes(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	cliBin, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli not found in PATH: install redis-tools (apt-get install redis-tools)")
	}
	ctx := testCtx(t, 60*time.Second)
	for i, c := range []struct{ prefix, near string }{
		{"orders:", "order:"},
		{`a*b?[c]\d:`, `aXXbYc\d:`},
		{`q"u'o:`, `q"u'ox:`},
		{"ctl\x01\xff:", "ctl\x02\xff:"},
		{"{tag}:", "{tagx}:"},
	} {
		user := "u" + string(rune('a'+i))
		line := strings.Replace(aclUser(t, ctx, "--key-prefix", c.prefix, user), ">PASSWORD", ">pw", 1)
		cmd := exec.CommandContext(ctx, cliBin, "-h", "127.0.0.1", "-p", strconv.Itoa(node.Port))
		cmd.Stdin = strings.NewReader(line + "\n")
		if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "OK" {
			t.Fatalf("prefix %q: redis-cli < %s: %v\n%s", c.prefix, line, err, out)
		}
		asUser := func(o *rueidis.ClientOption) { o.Username, o.Password = user, "pw" }
		a := newClient(t, node.Client(t, asUser), c.prefix)
		b := newClient(t, node.Client(t, asUser), c.prefix)
		ma, mb := mustMutex(t, a, "order:1"), mustMutex(t, b, "order:1")
		lctx, err := ma.Lock(ctx)
		if err != nil {
			t.Fatalf("prefix %q: Lock: %v", c.prefix, err)
		}
		woken := make(chan error, 1)
		go func() {
			bctx, err := mb.Lock(ctx)
			if err == nil {
				err = mb.Unlock(bctx)
			}
			woken <- err
		}()
		time.Sleep(200 * time.Millisecond)
		if err := ma.Unlock(lctx); err != nil {
			t.Fatalf("prefix %q: Unlock: %v", c.prefix, err)
		}
		select {
		case err := <-woken:
			if err != nil {
				t.Fatalf("prefix %q: waiter: %v", c.prefix, err)
			}
		case <-time.After(1200 * time.Millisecond):
			t.Fatalf("prefix %q: the waiter was not woken by the release", c.prefix)
		}
		rw, err := a.RWMutex("order:{2}")
		if err != nil {
			t.Fatal(err)
		}
		rctx, err := rw.RLock(ctx)
		if err == nil {
			err = rw.RUnlock(rctx)
		}
		if err != nil {
			t.Fatalf("prefix %q: RWMutex: %v", c.prefix, err)
		}
		near := newClient(t, node.Client(t, asUser), c.near)
		if _, err := mustMutex(t, near, "order:1").TryLock(ctx, 0); err == nil || errors.Is(err, scriptlock.ErrNotAcquired) || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("prefix %q: a Mutex under %q: %v; want Redis's NOPERM", c.prefix, c.near, err)
		}
	}
}

// --idempotency-prefix gives the user the store's records under that prefix
// too, escaped as the key prefix is: a store under it runs as the user, one
// under a prefix the unescaped pattern would match is refused.
func TestACLUserIdempotencyPrefix(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	ctx := testCtx(t, 30*time.Second)
	line := strings.Replace(aclUser(t, ctx, "--key-prefix", "orders:", "--idempotency-prefix", "idem*[x]:", "app"), ">PASSWORD", ">pw", 1)
	if err := node.Do(t, strings.Fields(line)...).Error(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	rc := func() rueidis.Client {
		return node.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" })
	}
	for _, c := range []struct {
		prefix  string
		refused bool
	}{{"idem*[x]:", false}, {"idemAx:", true}} {
		s, err := idempotency.NewStore(rc(), idempotency.WithPrefix(c.prefix))
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Reserve(ctx, "acct", "k", "fp")
		switch {
		case c.refused && (err == nil || !strings.Contains(err.Error(), "NOPERM")):
			t.Errorf("store under %q: %+v, %v; want Redis's NOPERM", c.prefix, r, err)
		case !c.refused && (err != nil || r.State != idempotency.Claimed):
			t.Errorf("store under %q: %+v, %v; want Claimed", c.prefix, r, err)
		case !c.refused:
			if _, err := r.Claim.Complete(ctx, []byte("ok")); err != nil {
				t.Errorf("store under %q: Complete: %v", c.prefix, err)
			}
		}
		s.Close()
	}
	for _, p := range []string{"{x}:", "a b:"} {
		if r := cli(ctx, deployment{url: "redis://127.0.0.1:1"}, "", "acl-user", "--key-prefix", "orders:", "--idempotency-prefix", p, "app"); r.code != exitUsage {
			t.Errorf("acl-user --idempotency-prefix %q: exit %d, %q; want %d", p, r.code, r.errOut, exitUsage)
		}
	}
}

// acl-user --read-only gives an operator's user kept to one prefix: inspect,
// list and watch read the locks under it, force-unlock is refused before
// anything changes, and a lock under another prefix is refused.
func TestACLUserReadOnly(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	ctx := testCtx(t, 60*time.Second)
	line := strings.Replace(aclUser(t, ctx, "--read-only", "--key-prefix", "orders:", "ops"), ">PASSWORD", ">pw", 1)
	if err := node.Do(t, strings.Fields(line)...).Error(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	c := newClient(t, node.Client(t), "orders:")
	heldMutex(t, ctx, c, "order:1", "holder")
	other := newClient(t, node.Client(t), "wallets:")
	heldMutex(t, ctx, other, "w:1", "holder")
	ro := deployment{url: "redis://ops:pw@" + node.Addr}
	for _, c := range []struct {
		args []string
		want string
	}{{[]string{"inspect", "order:1"}, "holder"}, {[]string{"list"}, "order:1"}} {
		if r := cli(ctx, ro, "", append([]string{"--key-prefix", "orders:"}, c.args...)...); r.code != exitOK || !strings.Contains(r.out, c.want) {
			t.Errorf("%s as the read-only user: exit %d\n%s%s", c.args[0], r.code, r.out, r.errOut)
		}
	}
	wctx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	r := cli(wctx, ro, "", "--key-prefix", "orders:", "watch", "order:1")
	stop()
	// Its channel patterns name kinds of channels, and Redis lets a pattern
	// subscription through only when it is one of them exactly: watch says
	// once that a fair lock's hand-off shows at the next read, and goes on.
	if r.code != exitOK || !strings.Contains(r.out, "holder") || strings.Count(r.errOut, "PSUBSCRIBE refused") != 1 {
		t.Errorf("watch as the read-only user: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if r := cli(ctx, ro, "", "--key-prefix", "orders:", "force-unlock", "--yes", "order:1"); r.code != exitFailure || !strings.Contains(r.errOut, "NOPERM") {
		t.Errorf("force-unlock as the read-only user: exit %d\n%s%s; want exit %d, Redis's NOPERM", r.code, r.out, r.errOut, exitFailure)
	}
	if n, err := node.Do(t, "EXISTS", "orders:order:1").AsInt64(); err != nil || n != 1 {
		t.Errorf("the lock after the refused force-unlock: EXISTS %d, %v; want it held", n, err)
	}
	if r := cli(ctx, ro, "", "--key-prefix", "wallets:", "inspect", "w:1"); r.code == exitOK || !strings.Contains(r.errOut, "NOPERM") {
		t.Errorf("inspect under another prefix as the read-only user: exit %d\n%s%s; want Redis's NOPERM", r.code, r.out, r.errOut)
	}
}
