package gen

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// commandRunner starts a test server and returns a function that runs one
// command from a script (EVAL "return redis.call(unpack(ARGV))"), the way a
// generated caller's script would, on an empty database where setup[words[0]]
// (if any) has run first. It returns Redis's error, nil for a reply,
// including nil.
func commandRunner(t *testing.T, setup map[string][]string) func(words []string) error {
	t.Helper()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	return func(words []string) error {
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if s, ok := setup[words[0]]; ok {
			if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		err := rc.Do(ctx, rc.B().Eval().Script("return redis.call(unpack(ARGV))").Numkeys(0).Arg(words...).Build()).Error()
		if rueidis.IsRedisNil(err) {
			return nil
		}
		return err
	}
}

// checkAndRun checks src as scripts/x.lua, whose errors and warnings joined
// must read want, and runs it on the server with keys and args, whose error
// must hold server ("" for none).
func checkAndRun(t *testing.T, rc rueidis.Client, src, want, server string, keys []string, args ...string) {
	t.Helper()
	checkerSays(t, src, want)
	serverSays(t, rc, src, server, keys, args...)
}

// checkerSays checks src as scripts/x.lua: its errors and warnings joined
// must read want.
func checkerSays(t *testing.T, src, want string) {
	t.Helper()
	var got []string
	_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}, false)
	for _, e := range []error{err, warnings} {
		var errs Errors
		if errors.As(e, &errs) {
			for _, e := range errs {
				got = append(got, e.Error())
			}
		} else if e != nil {
			t.Fatal(e)
		}
	}
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("checker:\n%s\nwant:\n%s", g, want)
	}
}

// serverSays runs src on the server with keys and args: its error must hold
// server ("" for none).
func serverSays(t *testing.T, rc rueidis.Client, src, server string, keys []string, args ...string) {
	t.Helper()
	switch err := runScript(rc, src, keys, args...); {
	case server == "" && err != nil:
		t.Errorf("the server refused it: %v", err)
	case server != "" && (err == nil || !strings.Contains(err.Error(), server)):
		t.Errorf("the server returned %v; want an error with %q", err, server)
	}
}

// runScript runs src on the server with keys and args. It returns Redis's
// error, nil for a reply, including nil.
func runScript(rc rueidis.Client, src string, keys []string, args ...string) error {
	err := rc.Do(context.Background(), rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return nil
	}
	return err
}
