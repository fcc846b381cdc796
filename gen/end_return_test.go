package gen

import (
	"strings"
	"testing"
)

// TestEndWithoutReturn: a run that reaches the end of the script without a
// return replies nil, as a bare return does, which a @return that is not
// nullable cannot read: refused at the script's last token. A script whose
// every path returns (an if with an else, a loop left only by a return, a
// call of error) is not.
func TestEndWithoutReturn(t *testing.T) {
	const head = "-- X counts.\n-- @key k\n-- @return int64\n"
	const why = "can reach the end of the script without a return, which replies nil, but @return int64 needs an integer reply: declare @return int64? for a nullable reply"
	for _, c := range []struct{ body, at string }{
		{"if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end\n", "4:53"},
		{"if redis.call('EXISTS', KEYS[1]) == 1 then return 1 elseif redis.call('TTL', KEYS[1]) > 0 then return 2 end\n", "4:105"},
		{"for i = 1, 3 do\n  if redis.call('INCR', KEYS[1]) > 2 then return i end\nend\n", "6:1"},
		{"while true do\n  if redis.call('INCR', KEYS[1]) > 2 then break end\nend\n", "6:1"},
		{"redis.call('INCR', KEYS[1])\n", "4:27"},
	} {
		got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + c.body)})
		if want := "scripts/x.lua:" + c.at + ": " + why; strings.Join(got, "\n") != want {
			t.Errorf("%q: checker:\n%s\nwant:\n%s", c.body, strings.Join(got, "\n"), want)
		}
	}
	for _, body := range []string{
		"if redis.call('EXISTS', KEYS[1]) == 1 then return 1 else return 0 end\n",
		"if redis.call('EXISTS', KEYS[1]) == 1 then return 1 elseif redis.call('TTL', KEYS[1]) > 0 then return 2 else error('no') end\n",
		"do\n  return redis.call('INCR', KEYS[1])\nend\n",
		"while true do\n  if redis.call('INCR', KEYS[1]) > 2 then return 1 end\nend\n",
		"repeat\n  local n = redis.call('INCR', KEYS[1])\n  if n > 2 then return n end\nuntil false\n",
		"redis.call('INCR', KEYS[1])\nerror('stop')\n",
	} {
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + body)}); len(got) != 0 {
			t.Errorf("%q: checker refused: %v", body, got)
		}
	}
	// A nullable or no @return takes the nil.
	for _, ret := range []string{"int64?", "none"} {
		src := strings.Replace(head, "int64", ret, 1) + "redis.call('INCR', KEYS[1])\n"
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); len(got) != 0 {
			t.Errorf("@return %s: checker refused: %v", ret, got)
		}
	}
}
