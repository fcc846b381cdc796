package scriptlock

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// panickyClient is a rueidis client wrapper (a hook, a middleware) that
// panics on the calls its test picks, before anything is sent, as a
// wrapper may. The tests differ only in which calls panic and how many
// times; what the Client does about it is what they look at.
type panickyClient struct {
	rueidis.Client
	*wrapperFault
}

// wrapperFault says where a panickyClient panics; the clients its Nodes
// gives (with wrapNodes) and its dedicated connections share it.
type wrapperFault struct {
	// on picks the calls that panic (nil: none).
	on func(wrapperCall) bool
	// left is how many more picked calls panic: below zero, every one;
	// zero, none. A test arms the wrapper by storing it.
	left atomic.Int64
	// picked counts the calls on picked, whether they panicked or not.
	picked atomic.Int64
	// value, when set, is what the panics carry instead of
	// "client wrapper panicked".
	value atomic.Pointer[string]
	// nilValue: the panics carry nil (panic(nil)).
	nilValue atomic.Bool
	// goexit: the picked calls end their goroutine (runtime.Goexit, as a
	// test's t.FailNow in a wrapper does) instead of panicking.
	goexit atomic.Bool
	// wrapNodes: the node clients Nodes gives panic as this one does.
	wrapNodes bool
}

// wrapperCall is a call made through a panickyClient.
type wrapperCall struct {
	// method is "Do", "DoMulti" (once per command of the pipeline),
	// "Dedicated.DoMulti" (on a dedicated connection), "Receive", "Mode"
	// or "Nodes".
	method string
	ctx    context.Context
	args   []string // the command's words (none for Mode and Nodes)
}

// newPanickyClient wraps c so that the calls on picks panic once armed
// (left stored).
func newPanickyClient(c rueidis.Client, on func(wrapperCall) bool) *panickyClient {
	return &panickyClient{Client: c, wrapperFault: &wrapperFault{on: on}}
}

// newPanickyNodes is newPanickyClient whose Nodes gives node clients that
// panic as it does.
func newPanickyNodes(c rueidis.Client, on func(wrapperCall) bool) *panickyClient {
	p := newPanickyClient(c, on)
	p.wrapNodes = true
	return p
}

func (f *wrapperFault) trip(call wrapperCall) {
	if f.on == nil || !f.on(call) {
		return
	}
	f.picked.Add(1)
	for {
		n := f.left.Load()
		if n == 0 {
			return
		}
		if n < 0 || f.left.CompareAndSwap(n, n-1) {
			break
		}
	}
	if f.goexit.Load() {
		runtime.Goexit()
	}
	if v := f.value.Load(); v != nil {
		panic(*v)
	}
	if f.nilValue.Load() {
		panic(nil)
	}
	panic("client wrapper panicked")
}

func (p *panickyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	p.trip(wrapperCall{method: "Do", ctx: ctx, args: cmd.Commands()})
	return p.Client.Do(ctx, cmd)
}

func (p *panickyClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for _, cmd := range multi {
		p.trip(wrapperCall{method: "DoMulti", ctx: ctx, args: cmd.Commands()})
	}
	return p.Client.DoMulti(ctx, multi...)
}

func (p *panickyClient) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(rueidis.PubSubMessage)) error {
	p.trip(wrapperCall{method: "Receive", ctx: ctx, args: subscribe.Commands()})
	return p.Client.Receive(ctx, subscribe, fn)
}

func (p *panickyClient) Mode() rueidis.ClientMode {
	p.trip(wrapperCall{method: "Mode"})
	return p.Client.Mode()
}

func (p *panickyClient) Nodes() map[string]rueidis.Client {
	p.trip(wrapperCall{method: "Nodes"})
	if !p.wrapNodes {
		return p.Client.Nodes()
	}
	out := map[string]rueidis.Client{}
	for addr, n := range p.Client.Nodes() {
		out[addr] = &panickyClient{Client: n, wrapperFault: p.wrapperFault}
	}
	return out
}

func (p *panickyClient) Dedicated(fn func(rueidis.DedicatedClient) error) error {
	return p.Client.Dedicated(func(d rueidis.DedicatedClient) error {
		return fn(panickyDedicated{DedicatedClient: d, f: p.wrapperFault})
	})
}

// panickyDedicated is a dedicated connection of a panickyClient (a
// Cluster's guarded batches).
type panickyDedicated struct {
	rueidis.DedicatedClient
	f *wrapperFault
}

func (d panickyDedicated) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for _, cmd := range multi {
		d.f.trip(wrapperCall{method: "Dedicated.DoMulti", ctx: ctx, args: cmd.Commands()})
	}
	return d.DedicatedClient.DoMulti(ctx, multi...)
}

// scriptsThrough picks the script calls (EVALSHA, EVAL) made through methods.
func scriptsThrough(methods ...string) func(wrapperCall) bool {
	return func(c wrapperCall) bool {
		return slices.Contains(methods, c.method) && len(c.args) > 0 && (c.args[0] == "EVALSHA" || c.args[0] == "EVAL")
	}
}

// scriptNaming picks the script calls made through methods naming a key
// that contains key.
func scriptNaming(key string, methods ...string) func(wrapperCall) bool {
	scripts := scriptsThrough(methods...)
	return func(c wrapperCall) bool {
		return scripts(c) && len(c.args) >= 3 && slices.ContainsFunc(c.args[3:], func(a string) bool { return strings.Contains(a, key) })
	}
}

// scriptRuns picks the calls (Do, DoMulti) of the one script whose SHA1 is
// sha, by EVALSHA or by EVAL.
func scriptRuns(sha string) func(wrapperCall) bool {
	return func(c wrapperCall) bool {
		if (c.method != "Do" && c.method != "DoMulti") || len(c.args) < 2 {
			return false
		}
		switch strings.ToUpper(c.args[0]) {
		case "EVALSHA":
			return c.args[1] == sha
		case "EVAL":
			sum := sha1.Sum([]byte(c.args[1]))
			return hex.EncodeToString(sum[:]) == sha
		}
		return false
	}
}

// commandDo picks the Do calls of the command name (in any case).
func commandDo(name string) func(wrapperCall) bool {
	return func(c wrapperCall) bool {
		return c.method == "Do" && len(c.args) > 0 && strings.EqualFold(c.args[0], name)
	}
}

// semaphoreUndoSHA is the SHA1 of a Semaphore's undo script.
func semaphoreUndoSHA(t *testing.T, c rueidis.Client) string {
	t.Helper()
	cmd, err := generated.SemaphoreUndoCommand(c, "k", "c", "l", "d", time.Minute, "publish")
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Commands()[1]
}
