package gen

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestKeysArgvHeldRefused: KEYS or ARGV held in a local, a table or a
// function's parameter can be changed through that name, where no check of
// changes (TestKeysArgvChangesRefused) looks: local k = KEYS; k[1] =
// ARGV[1] made the SET of KEYS[1] that follows write the key the caller
// passed as an argument, which no @key declares (the server run below
// shows it). Holding or passing the table on is refused where it is done;
// the library functions that read it, or change it where that check sees
// it, are not.
func TestKeysArgvHeldRefused(t *testing.T) {
	const head = "-- X holds.\n-- @key k\n-- @arg a string\n-- @return none\n"
	const tail = "redis.call('SET', KEYS[1], ARGV[1])\nreturn nil\n"
	const why = " held or passed on (a local, a table, a function's argument or result): a change made through it (t[1] = ...) escapes the checks of keys, arguments and commands, and Redis Cluster's routing, which take %[n] for what the callers pass; read % where it is used (%[i], #%, unpack(%), ipairs(%)) or copy it ({unpack(%)})"
	for _, c := range []struct{ src, want, table string }{
		{"local k = KEYS\nk[1] = ARGV[1]\n", "scripts/x.lua:5:11: KEYS", "KEYS"},
		{"local t = {KEYS}\nt[1][1] = ARGV[1]\n", "scripts/x.lua:5:12: KEYS", "KEYS"},
		{"local t = {}\nt.k = KEYS\n", "scripts/x.lua:6:7: KEYS", "KEYS"},
		{"local function f(t) t[1] = 'x' end\nf(ARGV)\n", "scripts/x.lua:6:3: ARGV", "ARGV"},
		{"local function g() return KEYS end\ng()[1] = ARGV[1]\n", "scripts/x.lua:5:27: KEYS", "KEYS"},
		{"setmetatable(ARGV, {})\n", "scripts/x.lua:5:14: ARGV", "ARGV"},
		{"local a = ARGV\ntable.insert(a, 1, 'x')\n", "scripts/x.lua:5:11: ARGV", "ARGV"},
	} {
		got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + c.src + tail)})
		want := c.want + strings.ReplaceAll(why, "%", c.table)
		if !slices.Contains(got, want) {
			t.Errorf("%q: checker:\n%s\nwant among them:\n%s", c.src, strings.Join(got, "\n"), want)
		}
	}
	// Reads of the whole table, and the script's own reply.
	for _, src := range []string{
		"if next(KEYS) == nil then return nil end\n",
		"if type(ARGV) ~= 'table' then return nil end\n",
		"redis.call('SET', KEYS[1], table.concat(ARGV))\n",
		"redis.call('SET', KEYS[1], table.concat(ARGV, ','))\n",
		"redis.call('SET', KEYS[1], cjson.encode(ARGV))\n",
		"redis.call('SET', KEYS[1], cmsgpack.pack(ARGV))\n",
		"redis.call('SET', KEYS[1], table.getn(ARGV) .. ARGV[1])\n",
		"redis.call('SET', KEYS[1], table.maxn(ARGV) .. ARGV[1])\n",
		"for _, a in ipairs(ARGV) do redis.call('SET', KEYS[1], a) end\n",
		"for _, k in pairs(KEYS) do redis.call('SET', k, 'v') end\n",
		"redis.call('SET', KEYS[1], #ARGV)\n",
		"local c = {unpack(KEYS)}\nc[1] = 'x'\n",
		"local last = table.remove(ARGV)\n",
	} {
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(head + src + tail)}); len(got) != 0 {
			t.Errorf("%q: checker refused: %v", src, got)
		}
	}
	const reply = "-- X lists.\n-- @key k...\n-- @return []string\nreturn KEYS\n"
	if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(reply)}); len(got) != 0 {
		t.Errorf("return KEYS: checker refused: %v", got)
	}

	// What the refused alias does on the server: the SET of KEYS[1] writes
	// the key passed as ARGV[1].
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	src := "local k = KEYS\nk[1] = ARGV[1]\n" + tail
	if err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}declared").Arg("{t}other").Build()).Error(); err != nil && !strings.Contains(err.Error(), "nil") {
		t.Fatal(err)
	}
	n, err := rc.Do(ctx, rc.B().Exists().Key("{t}other").Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the server did not write the key passed as an argument: the alias changes nothing")
	}
}
