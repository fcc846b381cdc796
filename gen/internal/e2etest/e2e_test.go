// Package e2etest runs the generated package of gen/testdata/all (copied to
// ./generated and kept identical by gen's golden test) against real Redis: a
// single node, the same node over RESP2, and a 3-primary cluster.
package e2etest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/rueidis"
	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/gen/internal/e2etest/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, redistest.LeakOptions()...)
}

// target is a client under test and a way to reach every node of it.
type target struct {
	name  string
	c     rueidis.Client
	nodes func(t *testing.T) []*redistest.Node
}

func targets(t *testing.T) []target {
	node := redistest.Server(t)
	cluster := redistest.Cluster(t, 3)
	return []target{
		{"single", node.Client(t), func(*testing.T) []*redistest.Node { return []*redistest.Node{node} }},
		{"resp2", node.Client(t, func(o *rueidis.ClientOption) { o.AlwaysRESP2 = true }),
			func(*testing.T) []*redistest.Node { return []*redistest.Node{node} }},
		{"cluster", cluster.Client(t), func(*testing.T) []*redistest.Node { return cluster.Nodes }},
	}
}

func TestE2E(t *testing.T) {
	redistest.RequireBinaries(t)
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Run("SHA1", func(t *testing.T) { testSHA1(t, tg) })
			t.Run("Replies", func(t *testing.T) { testReplies(t, tg) })
			t.Run("Errors", func(t *testing.T) { testErrors(t, tg) })
			t.Run("MultiNoScript", func(t *testing.T) { testMultiNoScript(t, tg) })
			t.Run("Commands", func(t *testing.T) { testCommands(t, tg) })
			t.Run("EvalOf", func(t *testing.T) { testEvalOf(t, tg) })
			t.Run("Numbers", func(t *testing.T) { testNumbers(t, tg) })
			t.Run("NegativeDurations", func(t *testing.T) { testNegativeDurations(t, tg) })
			t.Run("NaN", func(t *testing.T) { testNaN(t, tg) })
			t.Run("EmptyVariadic", func(t *testing.T) { testEmptyVariadic(t, tg) })
			t.Run("ShortVariadic", func(t *testing.T) { testShortVariadic(t, tg) })
			t.Run("LongVariadic", func(t *testing.T) { testLongVariadic(t, tg) })
			t.Run("Times", func(t *testing.T) { testTimes(t, tg) })
			t.Run("HashTags", func(t *testing.T) { testHashTags(t, tg) })
			if tg.name == "cluster" {
				t.Run("CrossSlot", func(t *testing.T) { testCrossSlot(t, tg) })
			}
		})
	}
}

// key returns a test-unique key in the hash slot of tag.
func key(t *testing.T, tag, name string) string {
	return redistest.Prefix(t) + "{" + tag + "}" + name
}

func do(t *testing.T, c rueidis.Client, cmd string, k string, args ...string) {
	t.Helper()
	if err := c.Do(context.Background(), c.B().Arbitrary(cmd).Keys(k).Args(args...).Build()).Error(); err != nil {
		t.Fatalf("%s %s: %v", cmd, k, err)
	}
}

// testSHA1 checks every emitted SHA-1 against SCRIPT LOAD on every node, and
// Preload.
func testSHA1(t *testing.T, tg target) {
	ctx := context.Background()
	for _, n := range tg.nodes(t) {
		for _, s := range generated.Scripts {
			sha, err := n.Do(t, "SCRIPT", "LOAD", s.Source).ToString()
			if err != nil {
				t.Fatalf("SCRIPT LOAD %s on %s: %v", s.Name, n.Addr, err)
			}
			if sha != s.SHA1 {
				t.Errorf("%s: SHA1 = %s, SCRIPT LOAD on %s = %s", s.Name, s.SHA1, n.Addr, sha)
			}
		}
		if err := n.Do(t, "SCRIPT", "FLUSH").Error(); err != nil {
			t.Fatal(err)
		}
	}
	if err := generated.Preload(ctx, tg.c); err != nil {
		t.Fatalf("Preload: %v", err)
	}
	for _, n := range tg.nodes(t) {
		for _, s := range generated.Scripts {
			exists, err := n.Do(t, "SCRIPT", "EXISTS", s.SHA1).AsIntSlice()
			if err != nil || len(exists) != 1 || exists[0] != 1 {
				t.Errorf("after Preload, SCRIPT EXISTS %s (%s) on %s = %v, %v", s.SHA1, s.Name, n.Addr, exists, err)
			}
		}
	}
	if len(generated.Scripts) == 0 || !slices.IsSortedFunc(generated.Scripts, func(a, b generated.Script) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	}) {
		t.Errorf("Scripts is empty or not sorted by name")
	}
}

func testReplies(t *testing.T, tg target) {
	ctx := context.Background()
	c := tg.c

	t.Run("AllArgs", func(t *testing.T) {
		a, b := key(t, "x", "a"), key(t, "x", "b")
		at := time.UnixMilli(1700000000123)
		got, err := generated.AllArgs(ctx, c, a, b, "s", []byte{0, 1, 0xff}, -42, 1.5, true, 1500*time.Millisecond, at, 7, 8)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{a, b, "s", "\x00\x01\xff", "-42", "1.5", "1", "1500", "1700000000123", "7", "8"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AllArgs (-want +got):\n%s", diff)
		}
		got, err = generated.AllArgs(ctx, c, a, b, "", nil, 0, 0.1, false, 0, time.UnixMilli(0))
		if err != nil {
			t.Fatal(err)
		}
		want = []string{a, b, "", "", "0", "0.1", "0", "0", "0"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AllArgs without rest (-want +got):\n%s", diff)
		}
		// Duration text is cached by value: durations that share a cache
		// slot (1500 and 1564 ms), in turn, are each sent as their own
		// milliseconds; a negative one between them is refused and leaves
		// the cache as it was.
		for _, d := range []time.Duration{1500 * time.Millisecond, 1564 * time.Millisecond, 1500 * time.Millisecond, -3 * time.Millisecond, 1564 * time.Millisecond} {
			got, err := generated.AllArgs(ctx, c, a, b, "", nil, 0, 0, false, d, time.UnixMilli(0))
			if d < 0 {
				var de *generated.DurationError
				if !errors.As(err, &de) || de.Value != d {
					t.Errorf("AllArgs with duration %s: %q, %v; want a *DurationError", d, got, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := strconv.FormatInt(d.Milliseconds(), 10); len(got) < 8 || got[7] != want {
				t.Errorf("AllArgs with duration %s sent %q, want %q", d, got, want)
			}
		}
	})

	// A time whose unix milliseconds overflow an int64 was sent wrapped
	// (time.Unix(1<<62, 0) as 0, time.Unix(math.MaxInt64, 0) as -1000: a
	// PEXPIREAT of it deletes the key); it is refused before sending, in
	// the caller, the Command builder and Multi alike. The last in range
	// goes through.
	t.Run("far times", func(t *testing.T) {
		a, b := key(t, "x", "a"), key(t, "x", "b")
		for _, at := range []time.Time{time.Unix(1<<62, 0), time.Unix(math.MaxInt64, 0), time.Unix(math.MinInt64/1000, 0)} {
			var te *generated.TimeError
			if got, err := generated.AllArgs(ctx, c, a, b, "", nil, 0, 0, false, 0, at); !errors.As(err, &te) || !te.Value.Equal(at) {
				t.Errorf("AllArgs at %d s: %q, %v; want a *TimeError", at.Unix(), got, err)
			}
			if _, err := generated.AllArgsCommand(c, a, b, "", nil, 0, 0, false, 0, at); !errors.As(err, &te) {
				t.Errorf("AllArgsCommand at %d s: %v; want a *TimeError", at.Unix(), err)
			}
			if out := generated.AllArgsMulti(ctx, c, []generated.AllArgsArgs{{A: a, B: b, At: at}}); !errors.As(out[0].Err, &te) {
				t.Errorf("AllArgsMulti at %d s: %v; want a *TimeError", at.Unix(), out[0].Err)
			}
		}
		last := time.Unix(math.MaxInt64/1000-1, 0)
		got, err := generated.AllArgs(ctx, c, a, b, "", nil, 0, 0, false, 0, last)
		if err != nil {
			t.Fatal(err)
		}
		if want := strconv.FormatInt(last.UnixMilli(), 10); len(got) < 9 || got[8] != want {
			t.Errorf("AllArgs at the last time in range sent %q, want %s last", got, want)
		}
	})

	t.Run("Touch and strings", func(t *testing.T) {
		k := key(t, "s", "k")
		v, ok, err := generated.GetString(ctx, c, k)
		if err != nil || ok || v != "" {
			t.Fatalf("GetString(missing) = %q, %v, %v; want \"\", false, nil", v, ok, err)
		}
		b, err := generated.GetBytes(ctx, c, k)
		if err != nil || len(b) != 0 {
			t.Fatalf("GetBytes(missing) = %q, %v", b, err)
		}
		if err := generated.Touch(ctx, c, k, "val\x00ue", time.Minute); err != nil {
			t.Fatalf("Touch: %v", err)
		}
		v, ok, err = generated.GetString(ctx, c, k)
		if err != nil || !ok || v != "val\x00ue" {
			t.Fatalf("GetString = %q, %v, %v", v, ok, err)
		}
		b, err = generated.GetBytes(ctx, c, k)
		if err != nil || string(b) != "val\x00ue" {
			t.Fatalf("GetBytes = %q, %v", b, err)
		}
	})

	t.Run("int64", func(t *testing.T) {
		k := key(t, "i", "k")
		n, ok, err := generated.MaybeCount(ctx, c, k)
		if err != nil || ok || n != 0 {
			t.Fatalf("MaybeCount(missing) = %d, %v, %v", n, ok, err)
		}
		if n, err := generated.Counter(ctx, c, k, 5); err != nil || n != 5 {
			t.Fatalf("Counter = %d, %v", n, err)
		}
		n, ok, err = generated.MaybeCount(ctx, c, k)
		if err != nil || !ok || n != 5 {
			t.Fatalf("MaybeCount = %d, %v, %v", n, ok, err)
		}
	})

	t.Run("float64", func(t *testing.T) {
		k := key(t, "f", "z")
		f, ok, err := generated.Score(ctx, c, k, "m")
		if err != nil || ok {
			t.Fatalf("Score(missing) = %v, %v, %v", f, ok, err)
		}
		do(t, c, "ZADD", k, "2.25", "m")
		f, ok, err = generated.Score(ctx, c, k, "m")
		if err != nil || !ok || f != 2.25 {
			t.Fatalf("Score = %v, %v, %v; want 2.25", f, ok, err)
		}
		// A Lua division the C library writes as -nan, nan, inf or -inf
		// reads back as what it is.
		for _, tc := range []struct{ a, b, want float64 }{
			{0, 0, math.NaN()}, {1, 0, math.Inf(1)}, {-1, 0, math.Inf(-1)}, {1, 4, 0.25},
		} {
			f, err := generated.Ratio(ctx, c, tc.a, tc.b)
			if err != nil || !(f == tc.want || math.IsNaN(f) && math.IsNaN(tc.want)) {
				t.Errorf("Ratio(%v, %v) = %v, %v; want %v", tc.a, tc.b, f, err, tc.want)
			}
		}
	})

	t.Run("bool", func(t *testing.T) {
		k := key(t, "b", "set")
		v, ok, err := generated.IsMember(ctx, c, k, "m")
		if err != nil || ok || v {
			t.Fatalf("IsMember(missing set) = %v, %v, %v", v, ok, err)
		}
		do(t, c, "SADD", k, "m")
		if v, ok, err = generated.IsMember(ctx, c, k, "m"); err != nil || !ok || !v {
			t.Fatalf("IsMember(m) = %v, %v, %v", v, ok, err)
		}
		if v, ok, err = generated.IsMember(ctx, c, k, "n"); err != nil || !ok || v {
			t.Fatalf("IsMember(n) = %v, %v, %v", v, ok, err)
		}
		// A duration under a millisecond is sent as 1, not 0: PEXPIRE 0
		// would delete the counter at once, and nothing would be limited.
		if cmd, err := generated.RateLimitCommand(c, key(t, "b", "short"), nil, 1, 500*time.Microsecond); err != nil {
			t.Fatal(err)
		} else if args := cmd.Commands(); args[len(args)-1] != "1" {
			t.Errorf("RateLimit with a 500µs window sends %q, want the window as \"1\" (ms)", args[len(args)-1])
		}
		lim := key(t, "b", "limit")
		for i := range 2 {
			if v, err := generated.RateLimit(ctx, c, lim, []string{key(t, "b", "other")}, 2, time.Minute); err != nil || !v {
				t.Fatalf("RateLimit #%d = %v, %v", i+1, v, err)
			}
		}
	})

	t.Run("lists and maps", func(t *testing.T) {
		s, z, h := key(t, "l", "set"), key(t, "l", "zset"), key(t, "l", "hash")
		if got, err := generated.Members(ctx, c, s); err != nil || len(got) != 0 || got == nil {
			t.Fatalf("Members(missing) = %#v, %v; want empty, non-nil", got, err)
		}
		do(t, c, "SADD", s, "a", "b")
		got, err := generated.Members(ctx, c, s)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("Members = %v, %v", got, err)
		}
		ranks, ok, err := generated.Ranks(ctx, c, z, "a")
		if err != nil || ok || ranks != nil {
			t.Fatalf("Ranks(missing) = %v, %v, %v", ranks, ok, err)
		}
		do(t, c, "ZADD", z, "1", "a", "2", "b")
		ranks, ok, err = generated.Ranks(ctx, c, z, "b", "nope", "a")
		if err != nil || !ok || !slices.Equal(ranks, []int64{1, -1, 0}) {
			t.Fatalf("Ranks = %v, %v, %v", ranks, ok, err)
		}
		do(t, c, "HSET", h, "f1", "v1", "f2", "")
		m, err := generated.HashAll(ctx, c, h)
		if diff := cmp.Diff(map[string]string{"f1": "v1", "f2": ""}, m); err != nil || diff != "" {
			t.Fatalf("HashAll: %v (-want +got):\n%s", err, diff)
		}
		nk, ok, err := generated.NoKeys(ctx, c, "")
		if err != nil || ok || nk != nil {
			t.Fatalf("NoKeys(\"\") = %v, %v, %v", nk, ok, err)
		}
		nk, ok, err = generated.NoKeys(ctx, c, "t")
		if diff := cmp.Diff(map[string]string{"t": "x"}, nk); err != nil || !ok || diff != "" {
			t.Fatalf("NoKeys(t) = %v, %v (-want +got):\n%s", ok, err, diff)
		}
	})

	t.Run("Command", func(t *testing.T) {
		k := key(t, "cmd", "n")
		cmd, err := generated.CounterCommand(c, k, 3)
		if err != nil {
			t.Fatal(err)
		}
		resps := c.DoMulti(ctx, cmd, c.B().Get().Key(k).Build())
		if n, err := generated.DecodeCounter(resps[0]); err != nil || n != 3 {
			t.Fatalf("DecodeCounter = %d, %v", n, err)
		}
		if v, err := resps[1].ToString(); err != nil || v != "3" {
			t.Fatalf("GET after CounterCommand = %q, %v", v, err)
		}
		if tg.name == "cluster" {
			_, err := generated.RateLimitCommand(c, key(t, "a", "k"), []string{key(t, "b", "k")}, 1, time.Second)
			if !errors.Is(err, generated.ErrCrossSlot) {
				t.Errorf("RateLimitCommand across slots = %v", err)
			}
		}
	})

	t.Run("record", func(t *testing.T) {
		lock := key(t, "r", "lock")
		r, err := generated.LeaseInfo(ctx, c, lock, "owner-1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(generated.LeaseInfoResult{TTL: -2}, r); diff != "" {
			t.Errorf("LeaseInfo(free) (-want +got):\n%s", diff)
		}
		do(t, c, "HSET", lock, "owner-1", "holder")
		do(t, c, "PEXPIRE", lock, "60000")
		r, err = generated.LeaseInfo(ctx, c, lock, "owner-1")
		if err != nil {
			t.Fatal(err)
		}
		if r.TTL <= 0 || r.TTL > 60000 || r.Owner == nil || *r.Owner != "holder" || r.Holds != nil || r.Fenced || r.Score != nil || r.Raw != nil {
			t.Errorf("LeaseInfo(held) = %+v", r)
		}
	})
}

func testErrors(t *testing.T, tg target) {
	ctx := context.Background()
	c := tg.c
	k := key(t, "e", "k")

	_, err := generated.Counter(ctx, c, k, -1)
	var se *generated.ScriptError
	if !errors.Is(err, generated.ErrNotOwner) || !errors.As(err, &se) {
		t.Fatalf("Counter(-1) = %v; want a *ScriptError matching ErrNotOwner", err)
	}
	if se.Script != "Counter" || se.Code != "NOT_OWNER" || se.Message != "NOT_OWNER by is negative" {
		t.Errorf("ScriptError = %+v", se)
	}
	if got, want := err.Error(), "Counter: NOT_OWNER by is negative"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}

	_, err = generated.Counter(ctx, c, k, 0)
	if re, ok := rueidis.IsRedisErr(err); !ok || re.Error() != "ZERO_BY by is zero" {
		t.Errorf("Counter(0) = %#v; want the Redis error unwrapped", err)
	}

	lim := key(t, "e", "limit")
	for range 2 {
		if _, err := generated.RateLimit(ctx, c, lim, nil, 1, time.Minute); err != nil && !errors.Is(err, generated.ErrOverLimit) {
			t.Fatal(err)
		}
	}
	if _, err := generated.RateLimit(ctx, c, lim, nil, 1, time.Minute); !errors.Is(err, generated.ErrOverLimit) {
		t.Errorf("RateLimit over the limit = %v; want ErrOverLimit", err)
	}

	// A wrong-type Redis error reaches the caller unwrapped.
	do(t, c, "SET", k, "text")
	if _, err := generated.Members(ctx, c, k); !isWrongType(err) {
		t.Errorf("Members(string key) = %v; want WRONGTYPE unwrapped", err)
	}

	for _, tc := range []struct {
		kind string
		want generated.DecodeError
		msg  string
	}{
		{"string", generated.DecodeError{Script: "WrongType", Want: "int64", Got: "a string"}, "scriptgen: WrongType: reply is a string, want int64"},
		{"nil", generated.DecodeError{Script: "WrongType", Want: "int64", Got: "nil"}, "scriptgen: WrongType: reply is nil, want int64"},
		{"array", generated.DecodeError{Script: "WrongType", Want: "int64", Got: "an array of 2"}, "scriptgen: WrongType: reply is an array of 2, want int64"},
	} {
		_, err := generated.WrongType(ctx, c, tc.kind)
		var de *generated.DecodeError
		if !errors.As(err, &de) {
			t.Errorf("WrongType(%s) = %v; want *DecodeError", tc.kind, err)
			continue
		}
		if *de != tc.want || err.Error() != tc.msg {
			t.Errorf("WrongType(%s) = %+v %q; want %+v %q", tc.kind, *de, err.Error(), tc.want, tc.msg)
		}
	}
	if n, err := generated.WrongType(ctx, c, "int"); err != nil || n != 7 {
		t.Errorf("WrongType(int) = %d, %v", n, err)
	}
	var de *generated.DecodeError
	if _, err := generated.GetBytes(ctx, c, key(t, "e", "missing")); err != nil {
		t.Errorf("GetBytes(missing) = %v", err)
	}
	_, _, err = generated.Score(ctx, c, k, "m") // ZSCORE on a string key: WRONGTYPE
	if !isWrongType(err) || errors.As(err, &de) {
		t.Errorf("Score(string key) = %v; want WRONGTYPE", err)
	}
}

func isWrongType(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && len(re.Error()) > 9 && re.Error()[:9] == "WRONGTYPE"
}

// testMultiNoScript flushes every node's script cache, then checks that the
// batch forms still answer every call (NOSCRIPT → EVAL) and in order.
func testMultiNoScript(t *testing.T, tg target) {
	ctx := context.Background()
	c := tg.c
	flush := func() {
		for _, n := range tg.nodes(t) {
			if err := n.Do(t, "SCRIPT", "FLUSH").Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var calls []generated.CounterArgs
	for i := range 20 {
		calls = append(calls, generated.CounterArgs{K: key(t, strconv.Itoa(i), "n"), By: int64(i + 1)})
	}
	calls = append(calls, generated.CounterArgs{K: key(t, "z", "n"), By: -1})
	var counterSHA string
	for _, s := range generated.Scripts {
		if s.Name == "Counter" {
			counterSHA = s.SHA1
		}
	}
	for round := range 2 { // first after a flush (EVAL), then cached (EVALSHA)
		if round == 0 {
			flush()
		}
		replies := generated.CounterMulti(ctx, c, calls)
		if len(replies) != len(calls) {
			t.Fatalf("CounterMulti: %d replies for %d calls", len(replies), len(calls))
		}
		for i, r := range replies[:20] {
			if want := int64((i + 1) * (round + 1)); r.Err != nil || r.Value != want {
				t.Errorf("round %d: reply %d = %+v, want %d", round, i, r, want)
			}
		}
		if last := replies[20]; !errors.Is(last.Err, generated.ErrNotOwner) {
			t.Errorf("round %d: last reply = %+v, want ErrNotOwner", round, last)
		}
		if round == 0 { // EVAL cached the script where calls went
			loaded := 0
			for _, n := range tg.nodes(t) {
				if ex, _ := n.Do(t, "SCRIPT", "EXISTS", counterSHA).AsIntSlice(); len(ex) == 1 && ex[0] == 1 {
					loaded++
				}
			}
			if loaded == 0 {
				t.Errorf("no node has Counter cached after the EVAL fallback")
			}
		}
	}

	flush()
	a, b := key(t, "ro", "a"), key(t, "ro", "b")
	replies := generated.AllArgsMulti(ctx, c, []generated.AllArgsArgs{
		{A: a, B: b, S: "one", Rest: []int64{1}},
		{A: a, B: b, S: "two"},
	})
	if len(replies) != 2 || replies[0].Err != nil || replies[1].Err != nil ||
		replies[0].Value[2] != "one" || replies[1].Value[2] != "two" || replies[0].Value[len(replies[0].Value)-1] != "1" {
		t.Errorf("AllArgsMulti after SCRIPT FLUSH = %+v", replies)
	}

	flush()
	s := key(t, "opt", "s")
	do(t, c, "SADD", s, "m")
	got := generated.IsMemberMulti(ctx, c, []generated.IsMemberArgs{{Set: s, Member: "m"}, {Set: key(t, "opt", "none"), Member: "m"}})
	if got[0] != (generated.IsMemberReply{Value: true, OK: true}) || got[1] != (generated.IsMemberReply{}) {
		t.Errorf("IsMemberMulti = %+v", got)
	}
	if got := generated.TouchMulti(ctx, c, nil); len(got) != 0 {
		t.Errorf("TouchMulti(nil) = %+v", got)
	}
}

// testCrossSlot checks that keys in different slots are refused with a
// *CrossSlotError on a cluster client instead of rueidis's panic.
func testCrossSlot(t *testing.T, tg target) {
	ctx := context.Background()
	c := tg.c
	p := redistest.Prefix(t)
	a, b := p+"{a}k", p+"{b}k" // slots 15495 and 3300

	_, err := generated.RateLimit(ctx, c, a, []string{a, b}, 1, time.Minute)
	var cs *generated.CrossSlotError
	if !errors.Is(err, generated.ErrCrossSlot) || !errors.As(err, &cs) {
		t.Fatalf("RateLimit across slots = %v; want *CrossSlotError", err)
	}
	if cs.Script != "RateLimit" || !slices.Equal(cs.Keys, []string{a, a, b}) {
		t.Errorf("CrossSlotError = %+v", cs)
	}
	if _, err := generated.AllArgs(ctx, c, a, b, "", nil, 0, 0, false, 0, time.Time{}); !errors.Is(err, generated.ErrCrossSlot) {
		t.Errorf("AllArgs across slots = %v", err)
	}
	// The same tag in different places of the key still shares a slot.
	if _, err := generated.AllArgs(ctx, c, "x{a}", "{a}y", "", nil, 0, 0, false, 0, time.Time{}); err != nil {
		t.Errorf("AllArgs with one hash tag = %v", err)
	}

	replies := generated.AllArgsMulti(ctx, c, []generated.AllArgsArgs{
		{A: a, B: b},
		{A: a, B: p + "{a}other"},
	})
	if !errors.Is(replies[0].Err, generated.ErrCrossSlot) || replies[1].Err != nil || replies[1].Value[0] != a {
		t.Errorf("AllArgsMulti = %+v", replies)
	}
	replies = generated.AllArgsMulti(ctx, c, []generated.AllArgsArgs{{A: a, B: b}})
	if len(replies) != 1 || !errors.Is(replies[0].Err, generated.ErrCrossSlot) {
		t.Errorf("AllArgsMulti of one cross-slot call = %+v", replies)
	}
}

// testCommands checks that an argument naming a command (@commands) takes
// only the declared ones, in any case, and that a refused call sends nothing.
func testCommands(t *testing.T, tg target) {
	ctx := context.Background()
	ch := key(t, "n", "channel")
	for _, cmd := range []string{"publish", "SPUBLISH"} {
		k := key(t, "n", cmd)
		if n, err := generated.Notify(ctx, tg.c, k, ch, cmd, "v"); err != nil || n != 0 {
			t.Fatalf("Notify(%s) = %d, %v; want 0 receivers", cmd, n, err)
		}
		if v, err := tg.c.Do(ctx, tg.c.B().Get().Key(k).Build()).ToString(); err != nil || v != "v" {
			t.Fatalf("GET after Notify(%s) = %q, %v", cmd, v, err)
		}
	}

	k := key(t, "n", "refused")
	want := generated.CommandError{Script: "Notify", Arg: "publish", Value: "del", Allowed: []string{"publish", "spublish"}}
	check := func(what string, err error) {
		t.Helper()
		var ce *generated.CommandError
		if !errors.As(err, &ce) || !cmp.Equal(*ce, want) {
			t.Fatalf("%s with publish=%s: %v; want %+v", what, want.Value, err, want)
		}
		if n, err := tg.c.Do(ctx, tg.c.B().Exists().Key(k).Build()).AsInt64(); err != nil || n != 0 {
			t.Fatalf("%s with publish=%s wrote %s (EXISTS %d, %v)", what, want.Value, k, n, err)
		}
	}
	_, err := generated.Notify(ctx, tg.c, k, ch, "del", "v")
	check("Notify", err)
	_, err = generated.NotifyCommand(tg.c, k, ch, "del", "v")
	check("NotifyCommand", err)
	out := generated.NotifyMulti(ctx, tg.c, []generated.NotifyArgs{
		{K: k, Channel: ch, Publish: "del", Value: "v"},
		{K: key(t, "n", "multi"), Channel: ch, Publish: "publish", Value: "v"},
	})
	check("NotifyMulti", out[0].Err)
	if out[1].Err != nil {
		t.Fatalf("NotifyMulti's valid call: %v", out[1].Err)
	}
	if got := want.Error(); got != `scriptgen: Notify: argument publish is "del", want one of ["publish" "spublish"]` {
		t.Errorf("CommandError.Error() = %s", got)
	}
	// Only ASCII case is ignored, as Redis does: strings.EqualFold took
	// "\u017fpublish" (a long s) for spublish, and Redis then refused the
	// unknown command after the script's earlier writes.
	want.Value = "\u017fpublish"
	_, err = generated.Notify(ctx, tg.c, k, ch, want.Value, "v")
	check("Notify", err)
}

// testEvalOf checks that EvalOf turns a Command builder's EVALSHA, which a
// node with a flushed script cache answers NOSCRIPT, into the EVAL (EVAL_RO)
// of the same script, keys and arguments, in the same slot and with the same
// flags; that it runs there and caches the script on that node alone; and
// that it refuses commands that are not its package's EVALSHA.
func testEvalOf(t *testing.T, tg target) {
	ctx := context.Background()
	c := tg.c
	for _, n := range tg.nodes(t) {
		if err := n.Do(t, "SCRIPT", "FLUSH").Error(); err != nil {
			t.Fatal(err)
		}
	}
	source := map[string]string{} // by SHA-1
	sha := map[string]string{}    // by name
	for _, s := range generated.Scripts {
		source[s.SHA1], sha[s.Name] = s.Source, s.SHA1
	}
	// evalOf converts cmd, a Command builder's result, and checks the
	// command it gets against cmd.
	evalOf := func(cmd rueidis.Completed, err error) rueidis.Completed {
		t.Helper()
		if err != nil {
			t.Fatalf("Command: %v", err)
		}
		from := cmd.Commands()
		eval, err := generated.EvalOf(c, cmd)
		if err != nil {
			t.Fatalf("EvalOf(%s): %v", from[:2], err)
		}
		to := eval.Commands()
		want := append([]string{"EVAL", source[from[1]]}, from[2:]...)
		if from[0] == "EVALSHA_RO" {
			want[0] = "EVAL_RO"
		}
		if diff := cmp.Diff(want, to); diff != "" {
			t.Errorf("EvalOf(%s) (-want +got):\n%s", from[:2], diff)
		}
		if eval.Slot() != cmd.Slot() || eval.IsReadOnly() != cmd.IsReadOnly() || eval.IsRetryable() != cmd.IsRetryable() {
			t.Errorf("EvalOf(%s): slot %d, read-only %v, retryable %v; the EVALSHA's are %d, %v, %v", from[:2],
				eval.Slot(), eval.IsReadOnly(), eval.IsRetryable(), cmd.Slot(), cmd.IsReadOnly(), cmd.IsRetryable())
		}
		return eval
	}
	cached := func(name string) int {
		loaded := 0
		for _, n := range tg.nodes(t) {
			if ex, _ := n.Do(t, "SCRIPT", "EXISTS", sha[name]).AsIntSlice(); len(ex) == 1 && ex[0] == 1 {
				loaded++
			}
		}
		return loaded
	}

	k := key(t, "evalof", "n")
	cmd, err := generated.CounterCommand(c, k, 3)
	if err != nil {
		t.Fatal(err)
	}
	if re, ok := rueidis.IsRedisErr(c.Do(ctx, cmd).Error()); !ok || !re.IsNoScript() {
		t.Fatalf("CounterCommand after SCRIPT FLUSH: %v, want NOSCRIPT", re)
	}
	if n, err := generated.DecodeCounter(c.Do(ctx, evalOf(generated.CounterCommand(c, k, 3)))); err != nil || n != 3 {
		t.Fatalf("EvalOf(CounterCommand) = %d, %v; want 3", n, err)
	}
	if n := cached("Counter"); n != 1 {
		t.Errorf("Counter cached on %d nodes after its EVAL, want the one that ran it", n)
	}
	cmd, _ = generated.CounterCommand(c, k, 3)
	if n, err := generated.DecodeCounter(c.Do(ctx, cmd)); err != nil || n != 6 {
		t.Errorf("CounterCommand after the EVAL = %d, %v; want 6 (EVALSHA of the cached script)", n, err)
	}

	a, b := key(t, "evalof", "a"), key(t, "evalof", "b")
	at := time.UnixMilli(1700000000123)
	got, err := generated.DecodeAllArgs(c.Do(ctx, evalOf(generated.AllArgsCommand(c, a, b, "s", []byte{0, 0xff}, -1, 0.5, true, time.Second, at, 7))))
	if want := []string{a, b, "s", "\x00\xff", "-1", "0.5", "1", "1000", "1700000000123", "7"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("EvalOf(AllArgsCommand), read-only = %q, %v; want %q", got, err, want)
	}
	counter := key(t, "evalof", "rate")
	if ok, err := generated.DecodeRateLimit(c.Do(ctx, evalOf(generated.RateLimitCommand(c, counter, []string{counter + "2"}, 5, time.Minute)))); err != nil || !ok {
		t.Errorf("EvalOf(RateLimitCommand), retryable with variadic keys = %v, %v; want true", ok, err)
	}
	if m, ok, err := generated.DecodeNoKeys(c.Do(ctx, evalOf(generated.NoKeysCommand(c, "t")))); err != nil || !ok || m["t"] != "x" {
		t.Errorf("EvalOf(NoKeysCommand), no keys = %v, %v, %v", m, ok, err)
	}

	for what, cmd := range map[string]rueidis.Completed{
		"the zero Completed": {},
		"GET":                c.B().Get().Key(k).Build(),
		"EVAL":               evalOf(generated.CounterCommand(c, k, 1)),
		"an unknown SHA-1":   c.B().Evalsha().Sha1("0123456789012345678901234567890123456789").Numkeys(1).Key(k).Build(),
		"numkeys too large":  c.B().Evalsha().Sha1(sha["Counter"]).Numkeys(2).Key(k).Build(),
	} {
		if eval, err := generated.EvalOf(c, cmd); err == nil {
			t.Errorf("EvalOf(%s) = %v, want an error", what, eval.Commands())
		}
	}
}

// testNumbers checks that an int64 the script reads as a Lua number (a
// double) is refused beyond ±2^53, before anything is sent: SetIfGreater
// compared 2^53 + 1 with a stored 2^53 as equal doubles and silently kept
// the old token.
func testNumbers(t *testing.T, tg target) {
	ctx := context.Background()
	k := key(t, "g", "token")
	const limit = int64(1) << 53
	do(t, tg.c, "SET", k, strconv.FormatInt(limit-1, 10))
	if ok, err := generated.SetIfGreater(ctx, tg.c, k, limit); err != nil || !ok {
		t.Fatalf("SetIfGreater(2^53) = %v, %v; want true", ok, err)
	}
	get := func() string {
		t.Helper()
		v, err := tg.c.Do(ctx, tg.c.B().Get().Key(k).Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, n := range []int64{limit + 1, -limit - 1, math.MaxInt64, math.MinInt64} {
		check := func(what string, err error) {
			t.Helper()
			want := fmt.Sprintf("scriptgen: SetIfGreater: argument n is %d, beyond ±2^53: the script reads it as a Lua number, which would lose digits", n)
			var ne *generated.NumberError
			if !errors.As(err, &ne) || *ne != (generated.NumberError{Script: "SetIfGreater", Arg: "n", Value: n}) || err.Error() != want {
				t.Errorf("%s(%d): error %v; want %q", what, n, err, want)
			}
			if v := get(); v != strconv.FormatInt(limit, 10) {
				t.Fatalf("%s(%d) changed k to %s", what, n, v)
			}
		}
		ok, err := generated.SetIfGreater(ctx, tg.c, k, n)
		check(fmt.Sprintf("SetIfGreater (reply %v)", ok), err)
		_, err = generated.SetIfGreaterCommand(tg.c, k, n)
		check("SetIfGreaterCommand", err)
		out := generated.SetIfGreaterMulti(ctx, tg.c, []generated.SetIfGreaterArgs{{K: k, N: n}})
		check("SetIfGreaterMulti", out[0].Err)
	}
}

// testNegativeDurations checks that a negative duration is refused before
// anything is sent: RateLimit counted the call, then PEXPIRE with a
// negative window deleted the counter (and a duration over -1ms was sent
// as 0, which deletes it too), so a limit of 1 let every call through; SET
// PX refuses one mid-script. 0 is sent as it is.
func testNegativeDurations(t *testing.T, tg target) {
	ctx := context.Background()
	k := key(t, "d", "counter")
	for _, d := range []time.Duration{-time.Second, -time.Millisecond, -time.Microsecond, -1, math.MinInt64} {
		check := func(what string, ok bool, err error) {
			t.Helper()
			want := fmt.Sprintf("scriptgen: RateLimit: argument window is %s, a negative duration: nothing was sent", d)
			var de *generated.DurationError
			if !errors.As(err, &de) || *de != (generated.DurationError{Script: "RateLimit", Arg: "window", Value: d}) || err.Error() != want {
				t.Errorf("%s(limit 1, %s): %v, error %v (%T); want %q", what, d, ok, err, err, want)
			}
		}
		for range 2 {
			ok, err := generated.RateLimit(ctx, tg.c, k, nil, 1, d)
			check("RateLimit", ok, err)
		}
		_, err := generated.RateLimitCommand(tg.c, k, nil, 1, d)
		check("RateLimitCommand", false, err)
		out := generated.RateLimitMulti(ctx, tg.c, []generated.RateLimitArgs{{Counter: k, Limit: 1, Window: d}})
		check("RateLimitMulti", out[0].Value, out[0].Err)
	}
	// 0 is no negative duration: the script gets it (SET PX 0 refuses it).
	if err := generated.Touch(ctx, tg.c, k, "v", 0); err == nil || !strings.Contains(err.Error(), "invalid expire time") {
		t.Errorf("Touch(0): %v, want Redis's invalid expire time", err)
	}
}

// testNaN checks that a float64 argument that is NaN is refused before
// anything is sent: no Redis command reads it as a number, and AddScore
// failed at ZADD ("not a valid float") after counting the call. ±Inf is
// sent: ZADD and the range bounds of ZRANGE, ZCOUNT, ... read +Inf and -Inf.
func testNaN(t *testing.T, tg target) {
	ctx := context.Background()
	log, z := key(t, "f", "log"), key(t, "f", "z")
	count := func() int64 {
		t.Helper()
		n, err := tg.c.Do(ctx, tg.c.B().Get().Key(log).Build()).AsInt64()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("GET %s: %v", log, err)
		}
		return n
	}
	nan := math.NaN()
	check := func(what string, err error) {
		t.Helper()
		const want = "scriptgen: AddScore: argument score is NaN, which no Redis command reads as a number: nothing was sent"
		var fe *generated.FloatError
		if !errors.As(err, &fe) || fe.Script != "AddScore" || fe.Arg != "score" || !math.IsNaN(fe.Value) || err.Error() != want {
			t.Errorf("%s(NaN): error %v (%T); want %q", what, err, err, want)
		}
		if n := count(); n != 0 {
			t.Errorf("%s(NaN) counted the call (%s = %d)", what, log, n)
		}
	}
	_, err := generated.AddScore(ctx, tg.c, log, z, nan, "m")
	check("AddScore", err)
	_, err = generated.AddScoreCommand(tg.c, log, z, nan, "m")
	check("AddScoreCommand", err)
	out := generated.AddScoreMulti(ctx, tg.c, []generated.AddScoreArgs{{Log: log, Z: z, Score: nan, Member: "m"}})
	check("AddScoreMulti", out[0].Err)
	for i, f := range []float64{math.Inf(1), math.Inf(-1)} {
		if n, err := generated.AddScore(ctx, tg.c, log, z, f, "m"); err != nil || n != int64(i+1) {
			t.Errorf("AddScore(%v) = %d, %v; want %d, nil", f, n, err, i+1)
		}
	}
}

// testEmptyVariadic checks that an empty variadic key list a command of the
// script gets alone (DEL unpack(KEYS, 2)) is refused before anything is
// sent: DelAll counted the call in its log, then failed at DEL ("wrong
// number of arguments") with the count kept.
func testEmptyVariadic(t *testing.T, tg target) {
	ctx := context.Background()
	log, a, b := key(t, "e", "log"), key(t, "e", "a"), key(t, "e", "b")
	count := func() int64 {
		t.Helper()
		n, err := tg.c.Do(ctx, tg.c.B().Get().Key(log).Build()).AsInt64()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("GET %s: %v", log, err)
		}
		return n
	}
	check := func(what string, err error) {
		t.Helper()
		const want = "scriptgen: DelAll: keys is empty, and the script needs one value of it at least: nothing was sent"
		var ee *generated.EmptyError
		if !errors.As(err, &ee) || ee.Script != "DelAll" || ee.Arg != "keys" || err.Error() != want {
			t.Errorf("%s(no keys): error %v (%T); want %q", what, err, err, want)
		}
		if n := count(); n != 0 {
			t.Errorf("%s(no keys) counted the call (%s = %d)", what, log, n)
		}
	}
	_, err := generated.DelAll(ctx, tg.c, log, nil)
	check("DelAll", err)
	_, err = generated.DelAllCommand(tg.c, log, []string{})
	check("DelAllCommand", err)
	out := generated.DelAllMulti(ctx, tg.c, []generated.DelAllArgs{{Log: log}})
	check("DelAllMulti", out[0].Err)
	do(t, tg.c, "SET", a, "1")
	do(t, tg.c, "SET", b, "1")
	if n, err := generated.DelAll(ctx, tg.c, log, []string{a, b}); err != nil || n != 2 {
		t.Errorf("DelAll(a, b) = %d, %v; want 2, nil", n, err)
	}
}

// testLongVariadic checks that a variadic key list a command taking a fixed
// number of arguments gets whole (GET unpack(KEYS, 2)) is refused before
// anything is sent when it holds more keys than the command takes: GetOne
// counted the call in its log, then failed at GET ("wrong number of args")
// with the count kept.
func testLongVariadic(t *testing.T, tg target) {
	ctx := context.Background()
	log, a, b := key(t, "l", "log"), key(t, "l", "a"), key(t, "l", "b")
	const want = "scriptgen: GetOne: keys has 2 values, and the script takes 1 of it at most: nothing was sent"
	check := func(what string, err error) {
		t.Helper()
		var le *generated.LongError
		if !errors.As(err, &le) || le.Script != "GetOne" || le.Arg != "keys" || le.Count != 2 || le.Max != 1 || err.Error() != want {
			t.Errorf("%s(a, b): error %v (%T); want %q", what, err, err, want)
		}
	}
	_, _, err := generated.GetOne(ctx, tg.c, log, []string{a, b})
	check("GetOne", err)
	_, err = generated.GetOneCommand(tg.c, log, []string{a, b})
	check("GetOneCommand", err)
	out := generated.GetOneMulti(ctx, tg.c, []generated.GetOneArgs{{Log: log, Keys: []string{a, b}}})
	check("GetOneMulti", out[0].Err)
	if n, err := tg.c.Do(ctx, tg.c.B().Exists().Key(log).Build()).AsInt64(); err != nil || n != 0 {
		t.Errorf("a refused GetOne counted the call: EXISTS %s = %d, %v", log, n, err)
	}
	do(t, tg.c, "SET", a, "x")
	if v, ok, err := generated.GetOne(ctx, tg.c, log, []string{a}); err != nil || !ok || v != "x" {
		t.Errorf("GetOne(a) = %q, %v, %v; want x, true, nil", v, ok, err)
	}
}

// testShortVariadic checks that a variadic argument list a command of the
// script gets past its first value (RPUSH unpack(ARGV, 2)) is refused before
// anything is sent when it holds one value: PushTail counted the call in its
// log, then failed at RPUSH ("wrong number of args") with the count kept.
func testShortVariadic(t *testing.T, tg target) {
	ctx := context.Background()
	log, list := key(t, "s", "log"), key(t, "s", "list")
	for _, items := range [][]string{nil, {"header"}} {
		want := "scriptgen: PushTail: items is empty, and the script needs 2 values of it at least: nothing was sent"
		if len(items) == 1 {
			want = "scriptgen: PushTail: items has 1 value, and the script needs 2 of it at least: nothing was sent"
		}
		_, err := generated.PushTail(ctx, tg.c, log, list, items...)
		var ee *generated.EmptyError
		if !errors.As(err, &ee) || ee.Script != "PushTail" || ee.Arg != "items" || ee.Count != len(items) || ee.Min != 2 || err.Error() != want {
			t.Errorf("PushTail(%q): error %v (%T); want %q", items, err, err, want)
		}
		out := generated.PushTailMulti(ctx, tg.c, []generated.PushTailArgs{{Log: log, List: list, Items: items}})
		if !errors.As(out[0].Err, &ee) {
			t.Errorf("PushTailMulti(%q): error %v; want an *EmptyError", items, out[0].Err)
		}
	}
	if n, err := tg.c.Do(ctx, tg.c.B().Exists().Key(log).Build()).AsInt64(); err != nil || n != 0 {
		t.Errorf("a refused PushTail counted the call: EXISTS %s = %d, %v", log, n, err)
	}
	if n, err := generated.PushTail(ctx, tg.c, log, list, "header", "a", "b"); err != nil || n != 2 {
		t.Errorf("PushTail(header, a, b) = %d, %v; want 2, nil", n, err)
	}
}

// testTimes checks that a time the script reads as a Lua number (a double)
// is refused beyond ±2^53 unix milliseconds, before anything is sent, as an
// int64 is: StampIfLater compared 2^53 + 1 ms with a stored 2^53 as equal
// doubles and silently kept the earlier time. A time whose milliseconds
// overflow an int64 (UnixMilli is undefined there) is refused too.
func testTimes(t *testing.T, tg target) {
	ctx := context.Background()
	k := key(t, "t", "stamp")
	const limit = int64(1) << 53
	do(t, tg.c, "SET", k, strconv.FormatInt(limit-1, 10))
	if ok, err := generated.StampIfLater(ctx, tg.c, k, time.UnixMilli(limit)); err != nil || !ok {
		t.Fatalf("StampIfLater(2^53 ms) = %v, %v; want true", ok, err)
	}
	get := func() string {
		t.Helper()
		v, err := tg.c.Do(ctx, tg.c.B().Get().Key(k).Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		at time.Time
		ms int64 // NumberError.Value
	}{
		{time.UnixMilli(limit + 1), limit + 1},
		{time.UnixMilli(-limit - 1), -limit - 1},
		{time.Unix(1<<62, 0), math.MaxInt64},
		{time.Unix(-1<<62, 0), math.MinInt64},
	} {
		check := func(what string, err error) {
			t.Helper()
			want := fmt.Sprintf("scriptgen: StampIfLater: argument at is %d, beyond ±2^53: the script reads it as a Lua number, which would lose digits", c.ms)
			var ne *generated.NumberError
			if !errors.As(err, &ne) || *ne != (generated.NumberError{Script: "StampIfLater", Arg: "at", Value: c.ms}) || err.Error() != want {
				t.Errorf("%s(%v): error %v; want %q", what, c.at, err, want)
			}
			if v := get(); v != strconv.FormatInt(limit, 10) {
				t.Fatalf("%s(%v) changed k to %s", what, c.at, v)
			}
		}
		ok, err := generated.StampIfLater(ctx, tg.c, k, c.at)
		check(fmt.Sprintf("StampIfLater (reply %v)", ok), err)
		_, err = generated.StampIfLaterCommand(tg.c, k, c.at)
		check("StampIfLaterCommand", err)
		out := generated.StampIfLaterMulti(ctx, tg.c, []generated.StampIfLaterArgs{{K: k, At: c.at}})
		check("StampIfLaterMulti", out[0].Err)
	}
}

// testHashTags checks that on a cluster client a key the script extends on
// the right (LogEntry writes k .. ':last') is refused without a hash tag,
// before anything is sent: the extended key hashes to another slot, and
// LogEntry counted the call in k, then failed at the extended key ("Script
// attempted to access a non local key in a cluster node"). With a hash tag,
// and on a single node, the call runs.
func testHashTags(t *testing.T, tg target) {
	ctx := context.Background()
	if tg.name != "cluster" {
		k := redistest.Prefix(t) + "plain"
		if n, err := generated.LogEntry(ctx, tg.c, k, "v"); err != nil || n != 1 {
			t.Errorf("LogEntry(%q) = %d, %v; want 1, nil", k, n, err)
		}
		return
	}
	// A key without a hash tag whose extended key another node serves.
	slots, err := tg.c.Do(ctx, tg.c.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		t.Fatal(err)
	}
	node := func(k string) string {
		t.Helper()
		slot, err := tg.c.Do(ctx, tg.c.B().ClusterKeyslot().Key(k).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range slots {
			v, _ := r.ToArray()
			lo, _ := v[0].AsInt64()
			hi, _ := v[1].AsInt64()
			if lo <= slot && slot <= hi {
				addr, _ := v[2].ToArray()
				port, _ := addr[1].AsInt64()
				return strconv.FormatInt(port, 10)
			}
		}
		t.Fatalf("no node serves slot %d", slot)
		return ""
	}
	var k string
	for i := 0; k == ""; i++ {
		if c := fmt.Sprintf("%slog%d", redistest.Prefix(t), i); node(c) != node(c+":last") {
			k = c
		}
	}
	count := func() int64 {
		t.Helper()
		n, err := tg.c.Do(ctx, tg.c.B().Get().Key(k).Build()).AsInt64()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatal(err)
		}
		return n
	}
	check := func(what string, err error) {
		t.Helper()
		want := fmt.Sprintf("scriptgen: LogEntry: key k is %q, without a hash tag {...}: the script extends it, and the extended key would be in another cluster slot; nothing was sent", k)
		if !errors.Is(err, generated.ErrCrossSlot) || err.Error() != want {
			t.Errorf("%s(%q): error %v; want %q", what, k, err, want)
		}
		if n := count(); n != 0 {
			t.Errorf("%s(%q) counted the call (%d)", what, k, n)
		}
	}
	_, err = generated.LogEntry(ctx, tg.c, k, "v")
	check("LogEntry", err)
	_, err = generated.LogEntryCommand(tg.c, k, "v")
	check("LogEntryCommand", err)
	out := generated.LogEntryMulti(ctx, tg.c, []generated.LogEntryArgs{{K: k, V: "v"}})
	check("LogEntryMulti", out[0].Err)
	for _, k := range []string{key(t, "tag", "log"), redistest.Prefix(t) + "a{b}c"} {
		if n, err := generated.LogEntry(ctx, tg.c, k, "v"); err != nil || n != 1 {
			t.Errorf("LogEntry(%q) = %d, %v; want 1, nil", k, n, err)
		}
	}
}
