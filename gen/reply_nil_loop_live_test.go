package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplyNilLoopAgreesWithServer: a local given a command's reply before
// a loop and another in its body (v = redis.call('LPOP', k)) holds a reply
// whichever it holds, and a reply is never nil (Redis turns a nil reply
// into false): while v ~= nil do never stops on an empty list, and hands
// RPUSH false, which the server refuses; the checker refuses the
// comparison. while v do, or v ~= false, stops there, as the server shows.
func TestReplyNilLoopAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, cond, want, server string
	}{
		{"~= nil", "v ~= nil", `scripts/x.lua:5:9: ~= compares v (the reply of LPOP) with nil, but a reply is never nil (Redis turns a nil reply into false): it is always true; test it with not, or compare with false`, "Lua redis lib command arguments must be strings or integers"},
		{"its truth", "v", "", ""},
		{"~= false", "v ~= false", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key src\n-- @key dst\n-- @return none\nlocal v = redis.call('LPOP', KEYS[1])\nwhile " + tc.cond + " do\n  redis.call('RPUSH', KEYS[2], v)\n  v = redis.call('LPOP', KEYS[1])\nend\n"
			checkerSays(t, src, tc.want)
			keys := []string{"{t}src", "{t}dst"}
			if err := rc.Do(ctx, rc.B().Del().Key(keys...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if err := rc.Do(ctx, rc.B().Rpush().Key(keys[0]).Element("a", "b").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			serverSays(t, rc, src, tc.server, keys)
		})
	}
}

// TestReplyNilLoopResp3AgreesWithServer: a local given the replies of
// several calls, one made after redis.setresp(3), may hold nil, which RESP3
// hands Lua for a nil reply: while v ~= nil do stops there, and is no
// comparison that always holds. A reply of a call made before it is false
// on an empty list, which v ~= nil lets through to RPUSH, and the server
// refuses it: the checker warns of that comparison. With each call after
// redis.setresp(3) it stops on an empty list too, and nothing is said.
func TestReplyNilLoopResp3AgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const loop = "while v ~= nil do\n  redis.call('RPUSH', KEYS[2], v)\n  v = redis.call('LPOP', KEYS[1])\nend\n"
	for _, tc := range []struct {
		name, body, want, empty string // empty: part of the server's error on an empty list, "" for none
	}{
		{"the first before it", "local v = redis.call('LPOP', KEYS[1])\nredis.setresp(3)\n" + loop,
			`scripts/x.lua:6:9: warning: ~= compares v (the reply of LPOP) with nil, but the reply of the LPOP on line 4, made before redis.setresp(3), is false, not nil, when Redis replies nil: the comparison lets that false through; test it with not, or compare with false as well`,
			"Lua redis lib command arguments must be strings or integers"},
		{"each after it", "redis.setresp(3)\nlocal v = redis.call('LPOP', KEYS[1])\n" + loop, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key src\n-- @key dst\n-- @return none\n" + tc.body
			checkerSays(t, src, tc.want)
			keys := []string{"{t}src", "{t}dst"}
			for _, elems := range [][]string{{"a", "b"}, nil} {
				if err := rc.Do(ctx, rc.B().Del().Key(keys...).Build()).Error(); err != nil {
					t.Fatal(err)
				}
				if len(elems) > 0 {
					if err := rc.Do(ctx, rc.B().Rpush().Key(keys[0]).Element(elems...).Build()).Error(); err != nil {
						t.Fatal(err)
					}
				}
				err := runScript(rc, src, keys)
				switch want := tc.empty; {
				case len(elems) > 0 || want == "":
					if err != nil {
						t.Errorf("on %d elements the server refused it: %v", len(elems), err)
					}
					if n, err := rc.Do(ctx, rc.B().Llen().Key(keys[1]).Build()).AsInt64(); err != nil || n != int64(len(elems)) {
						t.Errorf("on %d elements LLEN dst = %d, %v; want %d", len(elems), n, err, len(elems))
					}
				case err == nil || !strings.Contains(err.Error(), want):
					t.Errorf("on an empty list the server returned %v; want an error with %q", err, want)
				}
			}
		})
	}
}
