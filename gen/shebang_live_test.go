package gen

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// redisAnswer is the Redis error a checker message quotes.
var redisAnswer = regexp.MustCompile(`\("((?:ERR|OOM) .*?)"\)`)

// TestShebangAgreesWithServer runs scripts with a #! line on the test
// server: every script the checker accepts runs, and every script it refuses
// is refused by Redis with the answer the checker's first message quotes (or,
// for a Lua syntax error, at the line it reports).
func TestShebangAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	node := redistest.Server(t)
	key := redistest.Prefix(t) + "k"
	const reads = "-- @key k\n-- @return int64\nreturn redis.call('EXISTS', KEYS[1])\n"
	const readsRO = "-- @key k\n-- @readonly\n-- @return int64\nreturn redis.call('EXISTS', KEYS[1])\n"
	for _, tc := range []struct {
		name string
		src  string
		// ro runs the script as the callers of a @readonly script do
		// (SCRIPT LOAD, then EVALSHA_RO); else EVAL.
		ro bool
	}{
		{name: "bare", src: "#!lua\n" + reads},
		{name: "empty flags=", src: "#!lua flags=\n" + reads},
		{name: "allow-oom", src: "#!lua flags=allow-oom\n-- @key k\n-- @return int64\nreturn redis.call('INCRBY', KEYS[1], 1)\n"},
		{name: "CRLF", src: "#!lua\r\n-- @key k\r\n-- @return int64\r\nreturn redis.call('EXISTS', KEYS[1])\r\n"},
		{name: "two flags= words", src: "#!lua flags=allow-oom flags=no-writes\n" + reads},
		{name: "every flag", src: "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\n" + reads},
		{name: "duplicate flag", src: "#!lua flags=no-writes,no-writes\n" + reads},
		{name: "quoted words", src: "#!lua \"flags=no-\\x77rites\" 'flags=allow-oom'\n" + reads},
		{name: "no-writes under EVALSHA_RO", src: "#!lua flags=no-writes\n" + readsRO, ro: true},
		{name: "no shebang under EVALSHA_RO", src: readsRO, ro: true},

		{name: "no newline", src: "#!lua"},
		{name: "NUL byte", src: "#!lua\x00\n" + reads},
		{name: "wrong engine", src: "#!luajit\n" + reads},
		{name: "space after #!", src: "#! lua\n" + reads},
		{name: "unknown option", src: "#!lua flag=no-writes\n" + reads},
		{name: "flag without flags=", src: "#!lua no-writes\n" + reads},
		{name: "unknown flag", src: "#!lua flags=no-write\n" + reads},
		{name: "flag in capitals", src: "#!lua flags=NO-WRITES\n" + reads},
		{name: "vertical tab in a flag", src: "#!lua flags=no-writes\v\n" + reads},
		{name: "space after a comma", src: "#!lua flags=allow-oom, no-writes\n" + reads},
		{name: "unclosed quote", src: "#!lua \"flags=no-writes\n" + reads},
		{name: "text after a closing quote", src: "#!lua 'flags=no-writes'x\n" + reads},
		{name: "no-writes and a write", src: "#!lua flags=no-writes\n-- @key k\n-- @return int64\nreturn redis.call('DEL', KEYS[1])\n"},
		{name: "no-writes and a replicated command", src: "#!lua flags=no-writes\n-- @key k\n-- @return int64\nreturn redis.call('PUBLISH', KEYS[1], 'x')\n"},
		{name: "bare #!lua under EVALSHA_RO", src: "#!lua\n" + readsRO, ro: true},
		{name: "allow-oom under EVALSHA_RO", src: "#!lua flags=allow-oom\n" + readsRO, ro: true},
		{name: "Lua error lines are the file's", src: "#!lua\n-- @return int64\n\nlocal = 1\nreturn 1\n"},
		{name: "a leading space is no shebang", src: " #!lua\n" + reads},
		{name: "error at end of file", src: "#!lua\n-- @return int64\n\nreturn 1 +\n"},
		{name: "error at end of file, blank lines after", src: "#!lua\n-- @return int64\nreturn 1 +\n\n\n"},
		{name: "error at end of file, a comment after", src: "#!lua\n-- @return int64\nif true then\n-- c\n"},
		{name: "error at end of file, no newline", src: "#!lua\n-- @return int64\nreturn 1 +"},
		{name: "error after lone CRs", src: "#!lua\n-- @return int64\r\rlocal = 1\nreturn 1\n"},
		{name: "error after LF CR pairs", src: "#!lua\n-- @return int64\n\r\n\rlocal = 1\nreturn 1\n"},
		{name: "error at end of file, CRLF and lone CR", src: "#!lua\r\n-- @return int64\r\nreturn 1 +\r\n\r\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refused []Error
			if _, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(tc.src)}}); err != nil {
				var es Errors
				if !errors.As(err, &es) {
					t.Fatalf("Generate: %v", err)
				}
				for _, e := range es {
					if !e.Warning {
						refused = append(refused, e)
					}
				}
			}
			var res rueidis.RedisResult
			if tc.ro {
				sha, err := node.Do(t, "SCRIPT", "LOAD", tc.src).ToString()
				if err != nil {
					res = rueidis.NewErrorResult(err)
				} else {
					res = node.Do(t, "EVALSHA_RO", sha, "1", key)
				}
			} else {
				res = node.Do(t, "EVAL", tc.src, "1", key)
			}
			err := res.Error()
			if len(refused) == 0 {
				if err != nil {
					t.Fatalf("the checker accepts the script, Redis refuses it: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("the checker refuses the script, Redis runs it:\n%v", Errors(refused))
			}
			// rueidis drops the ERR of an error reply.
			answer := redisText(strings.TrimPrefix(err.Error(), "ERR "))
			for _, e := range refused {
				if m := redisAnswer.FindStringSubmatch(e.Msg); m != nil {
					if !strings.HasPrefix(answer, strings.TrimPrefix(m[1], "ERR ")) {
						t.Errorf("Redis answers %q; the checker's first message quotes %q:\n%v", answer, m[1], e)
					}
					return
				}
			}
			if want := fmt.Sprintf("user_script:%d:", refused[0].Line); !strings.Contains(answer, want) {
				t.Errorf("Redis answers %q, not at the line the checker reports:\n%v", answer, Errors(refused))
			}
		})
	}
}

// TestShebangOutOfMemory confirms what docs/generator.md says of script
// flags when Redis is out of memory (maxmemory reached, noeviction): a
// script with a #!lua line is refused before it runs unless it has
// allow-oom or no-writes, even when it only deletes; one without a #! line
// fails at a command Redis refuses then (SET, INCRBY) only when that is its
// first write.
func TestShebangOutOfMemory(t *testing.T) {
	redistest.RequireBinaries(t)
	node := redistest.Server(t)
	key := redistest.Prefix(t) + "k"
	if err := node.Do(t, "SET", key, "1").Error(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"maxmemory-policy", "noeviction"}, {"maxmemory", "1"}} {
		if err := node.Do(t, "CONFIG", "SET", args[0], args[1]).Error(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { node.Do(t, "CONFIG", "SET", "maxmemory", "0") })
	const oom = "OOM command not allowed when used memory > 'maxmemory'"
	for _, tc := range []struct {
		name, src, want string // want: the start of Redis's error, "" when it runs
	}{
		{"flagged without allow-oom", "#!lua\nreturn redis.call('DEL', KEYS[1]) + 1\n", oom},
		{"allow-oom", "#!lua flags=allow-oom\nreturn redis.call('INCRBY', KEYS[1], 1)\n", ""},
		{"no-writes", "#!lua flags=no-writes\nreturn redis.call('EXISTS', KEYS[1])\n", ""},
		{"no shebang, a denied command after a write", "redis.call('DEL', KEYS[1]); return redis.call('INCRBY', KEYS[1], 1)\n", ""},
		{"no shebang, deletes", "redis.call('DEL', KEYS[1]); return 1\n", ""},
		{"no shebang, first write denied", "return redis.call('INCRBY', KEYS[1], 1)\n", oom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := node.Do(t, "EVAL", tc.src, "1", key).Error()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error starting %q", err, tc.want)
			}
		})
	}
}
