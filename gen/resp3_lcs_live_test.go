package gen

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3LCSAgreesWithServer: after redis.setresp(3), LCS replies a map
// only with IDX; without it the common string (with LEN its length), as in
// RESP2. The checker must pass # of it, returning it for @return string and
// putting it in a returned table for []string, and still refuse # of it
// with IDX; the server gives the string, and # of it its length.
func TestResp3LCSAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Mset().KeyValue().KeyValue("{t}a", "ohmytext").KeyValue("{t}b", "mynewtext").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const lcs = "redis.call('LCS', KEYS[1], KEYS[2])"
	for _, tc := range []struct {
		ret, body, want string
		reply           string // what the server replies, as rueidis reads it
	}{
		{"int64", "return #" + lcs, "", "6"},
		{"string", "return " + lcs, "", "mytext"},
		{"[]string", "return {" + lcs + "}", "", "[mytext]"},
		{"int64", "return #redis.call('LCS', KEYS[1], KEYS[2], 'IDX')",
			"scripts/x.lua:6:8: # of the reply of LCS, which after redis.setresp(3) (line 5) is a map, handed to Lua as a table {map = {...}} with nothing at 1, 2, ...: its length is always 0; count it with a command (HLEN, SCARD, ...), or call LCS before redis.setresp(3)", "0"},
	} {
		src := "-- X compares.\n-- @key a\n-- @key b\n-- @return " + tc.ret + "\nredis.setresp(3)\n" + tc.body + "\n"
		if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", tc.body, got, tc.want)
		}
		msg, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(2).Key("{t}a", "{t}b").Build()).ToMessage()
		if err != nil {
			t.Fatalf("%s: the server replied %v", tc.body, err)
		}
		var got string
		switch {
		case msg.IsInt64():
			n, _ := msg.AsInt64()
			got = strconv.FormatInt(n, 10)
		case msg.IsString():
			got, _ = msg.ToString()
		default:
			vals, err := msg.AsStrSlice()
			if err != nil {
				t.Fatalf("%s: the server replied %s: %v", tc.body, msg.String(), err)
			}
			got = "[" + strings.Join(vals, " ") + "]"
		}
		if got != tc.reply {
			t.Errorf("%s: the server replied %s; want %s", tc.body, got, tc.reply)
		}
	}
}
