package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestErrorCodesRueidisActsOn: rueidis reads some error replies itself
// instead of handing them to the caller: it strips "ERR " (so @error ERR
// never reaches the callers), runs a script again with EVAL on a reply
// starting with NOSCRIPT (repeating its writes), and on a cluster client
// follows MOVED and ASK to the node the message names (panicking when it
// names none) and sends again on TRYAGAIN, CLUSTERDOWN and LOADING (also a
// retryable script on a single node), and with EnableRedirect on REDIRECT. The checker must refuse such a code,
// as rueidis matches it, by its start; the server runs two of them through
// rueidis as the generated callers do.
func TestErrorCodesRueidisActsOn(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const again = "rueidis sends the script again, repeating its writes"
	for _, tc := range []struct{ code, want string }{
		{"ERR", `@error ERR is Redis's generic error prefix, which rueidis takes off the message: the callers never see the code, and errors.Is never matches ErrErr; declare another code`},
		{"NOSCRIPT", `@error NOSCRIPT starts with NOSCRIPT, which rueidis acts on itself: it takes the reply for a script missing from the cache and runs the script again with EVAL, repeating its writes; declare another code`},
		{"NOSCRIPT_HERE", `@error NOSCRIPT_HERE starts with NOSCRIPT, which rueidis acts on itself: it takes the reply for a script missing from the cache and runs the script again with EVAL, repeating its writes; declare another code`},
		{"MOVED", `@error MOVED starts with MOVED, which rueidis acts on itself: on a cluster client it takes the reply for a redirection and sends the script again to the node the message's third word names (it panics when there is none); declare another code`},
		{"ASKED_TWICE", `@error ASKED_TWICE starts with ASK, which rueidis acts on itself: on a cluster client it takes the reply for a redirection and sends the script again to the node the message's third word names (it panics when there is none); declare another code`},
		{"TRYAGAIN", `@error TRYAGAIN starts with TRYAGAIN, which rueidis acts on itself: on a cluster client ` + again + `; declare another code`},
		{"CLUSTERDOWN", `@error CLUSTERDOWN starts with CLUSTERDOWN, which rueidis acts on itself: on a cluster client ` + again + `; declare another code`},
		{"LOADING_DATA", `@error LOADING_DATA starts with LOADING, which rueidis acts on itself: on a cluster client, or for a @retryable or @readonly script, ` + again + `; declare another code`},
		{"REDIRECTED", `@error REDIRECTED starts with REDIRECT, which rueidis acts on itself: a client with Standalone.EnableRedirect (Valkey 8) takes the reply for a redirection to a new primary, the message's second word, and sends the script there again; declare another code`},
		{"ERR_LIMIT", ""},
		{"ASSERTION", ""},
		{"MOVE_FAILED", ""},
	} {
		src := "-- X fails.\n-- @key k\n-- @error " + tc.code + " it failed\n-- @return none\n" +
			"redis.call('INCR', KEYS[1])\nreturn redis.error_reply('" + tc.code + " it failed')\n"
		want := ""
		if tc.want != "" {
			want = "scripts/x.lua:3:11: " + tc.want
		}
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.code, got, want)
		}
	}

	// NOSCRIPT: one call of a loaded script runs it twice.
	src := "redis.call('INCR', KEYS[1])\nreturn redis.error_reply('NOSCRIPT_HERE it failed')\n"
	if err := rc.Do(ctx, rc.B().ScriptLoad().Script(src).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	err := rueidis.NewLuaScript(src).Exec(ctx, rc, []string{"{t}runs"}, nil).Error()
	if re, ok := rueidis.IsRedisErr(err); !ok || !strings.HasPrefix(re.Error(), "NOSCRIPT_HERE") {
		t.Errorf("the script replied %v", err)
	}
	if n, err := rc.Do(ctx, rc.B().Get().Key("{t}runs").Build()).AsInt64(); err != nil || n != 2 {
		t.Errorf("the script ran %d times (%v); rueidis runs it twice", n, err)
	}
	// ERR: the code is gone from the message the callers get.
	err = rueidis.NewLuaScript("return redis.error_reply('ERR it failed')").Exec(ctx, rc, nil, nil).Error()
	if re, ok := rueidis.IsRedisErr(err); !ok || re.Error() != "it failed" {
		t.Errorf("the script replied %v; rueidis hands on %q", err, "it failed")
	}
}
