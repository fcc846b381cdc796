package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSubcommandRepliesAgreeWithServer returns the reply of a container
// command's literal subcommand (OBJECT ENCODING, XGROUP CREATE), whose reply
// schema is the subcommand's own: the checker must refuse it for an @return
// that does not read that reply, accept it for one that does, and the server
// must reply the shape the message says.
func TestSubcommandRepliesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, ret, body, want string
		reply                 string // what the server replies: string, integer or array
	}{
		{"OBJECT ENCODING as an integer", "int64", "redis.call('SET', KEYS[1], 'v')\nreturn redis.call('OBJECT', 'ENCODING', KEYS[1])",
			`scripts/x.lua:5:8: OBJECT ENCODING replies a string or nil, but @return int64 needs an integer reply`, "string"},
		{"OBJECT ENCODING as a string", "string?", "redis.call('SET', KEYS[1], 'v')\nreturn redis.call('object', 'encoding', KEYS[1])", "", "string"},
		{"OBJECT REFCOUNT as a string", "string", "redis.call('SET', KEYS[1], 'v')\nreturn redis.call('OBJECT', 'REFCOUNT', KEYS[1])",
			`scripts/x.lua:5:8: OBJECT REFCOUNT replies an integer or nil, but @return string needs a string reply`, "integer"},
		{"XGROUP CREATE as an integer", "int64", "return redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '$', 'MKSTREAM')",
			`scripts/x.lua:4:8: XGROUP CREATE replies a string, but @return int64 needs an integer reply`, "string"},
		{"XGROUP CREATECONSUMER as a bool", "bool", "redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '$', 'MKSTREAM')\nreturn redis.call('XGROUP', 'CREATECONSUMER', KEYS[1], 'g', 'c')", "", "integer"},
		{"XINFO STREAM as none", "none", "redis.call('XADD', KEYS[1], '*', 'f', 'v')\nreturn redis.call('XINFO', 'STREAM', KEYS[1])",
			`scripts/x.lua:5:8: XINFO STREAM replies an array, but @return none needs a status, string or nil reply (it reads no value, but checks the shape)`, "array"},
		{"PUBSUB NUMPAT as a bool", "bool", "redis.call('SET', KEYS[1], 'v')\nreturn redis.call('PUBSUB', 'NUMPAT')",
			`scripts/x.lua:5:8: PUBSUB NUMPAT replies integers other than 0 and 1, but @return bool reads only 1 (true) and 0 or nil (false): return a comparison (redis.call(...) > 0) or declare @return int64`, "integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns a subcommand's reply.\n-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			errs := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
			if got := strings.Join(errs, "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			m, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToMessage()
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch {
			case m.IsString():
				got = "string"
			case m.IsInt64():
				got = "integer"
			case m.IsArray():
				got = "array"
			}
			if got != tc.reply {
				t.Errorf("the server replied %s, want %s", m.String(), tc.reply)
			}
		})
	}
}
