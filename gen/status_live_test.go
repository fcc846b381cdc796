package gen

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/gen/parse"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestStatusRepliesAgreeWithServer checks statusCall, which the status
// comparison rule rests on, against the test server: a script runs each
// call and returns type() of its reply, which must be "table" exactly when
// statusCall says the call replies a status. The calls are the commands of
// statusReplies, with words up to their arity (those a script cannot run
// that way are left out), and a list whose plain calls must run, GET and
// SET with GET among them so the test sees replies that are strings.
func TestStatusRepliesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	setup := [][]string{{"SET", "{n}k", "v"}, {"RPUSH", "{n}l", "a", "b"}, {"XADD", "{n}s", "*", "f", "v"}, {"XGROUP", "CREATE", "{n}s", "g0", "$"}}
	typeOf := func(words []string) (string, error) {
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		for _, s := range setup {
			if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		return rc.Do(ctx, rc.B().Eval().Script("return type(redis.call(unpack(ARGV)))").Numkeys(0).Arg(words...).Build()).ToString()
	}
	check := func(words []string) bool {
		lua, err := typeOf(words)
		if err != nil {
			return false
		}
		call := parse.Call{Command: words[0]}
		for _, w := range words[1:] {
			call.Args = append(call.Args, parse.Arg{Literal: &w, Exact: true})
		}
		if status := statusCall(&call); status != (lua == "table") {
			t.Errorf("%v reaches Lua as a %s, but statusCall says status %v", words, lua, status)
		}
		return true
	}
	for _, words := range [][]string{
		{"TYPE", "{n}k"}, {"TYPE", "{n}missing"}, {"SET", "{n}k", "v"}, {"SET", "{n}x", "v", "NX", "PX", "100"},
		{"SET", "{n}k", "w", "GET"}, {"GET", "{n}k"}, {"HMSET", "{n}h", "f", "v"}, {"LSET", "{n}l", "0", "x"},
		{"LTRIM", "{n}l", "0", "1"}, {"MSET", "{n}a", "1"}, {"RENAME", "{n}k", "{n}k2"}, {"PSETEX", "{n}k", "100", "v"},
		{"SETEX", "{n}k", "1", "v"}, {"PFMERGE", "{n}p"}, {"ECHO", "x"}, {"PING"}, {"PING", "x"},
		{"XGROUP", "CREATE", "{n}s", "g", "$"}, {"XGROUP", "SETID", "{n}s", "g0", "0"}, {"XGROUP", "CREATECONSUMER", "{n}s", "g0", "c"},
		{"XGROUP", "DESTROY", "{n}s", "g0"}, {"OBJECT", "ENCODING", "{n}k"},
	} {
		if !check(words) {
			t.Errorf("%v failed in a script", words)
		}
	}
	ran := 0
	for _, name := range slices.Sorted(maps.Keys(statusReplies)) {
		info := commandIndex[name]
		if strings.Contains(name, "|") || info.flags&flagNoscript != 0 || noscriptOn70[name] || newerThan70(info.since) {
			continue
		}
		words := []string{name}
		for n := max(info.arity, -info.arity); len(words) < n; {
			words = append(words, "{n}a")
		}
		if check(words) {
			ran++
		}
	}
	if ran < 5 {
		t.Errorf("only %d statusReplies commands ran with plain words; want at least 5", ran)
	}
	t.Logf("%d statusReplies commands checked with plain words", ran)
}
