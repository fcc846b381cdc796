package gen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const keysOrUnsafe = ": pass keys in KEYS (declared with @key) so Redis Cluster can route the script, or mark it @cluster-unsafe"

// The key checker follows keys into local functions: built there from a
// parameter, passed on two calls deep, passed by a recursive call, or read
// from an enclosing function's local assigned after the function. What it
// cannot trace to KEYS (a table's field, a parameter of a function used as
// a value) is refused, not accepted.
func TestKeysFollowedIntoFunctions(t *testing.T) {
	const head = "-- @key k\n-- @arg a string\n-- @return none\n"
	for _, tc := range []struct {
		name, src string
		want      []string // nil: accepted
	}{
		{
			name: "key built from a parameter",
			src:  head + "local function del(p) redis.call('DEL', p .. ':x') end\ndel(ARGV[1])\nredis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:41: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
		{
			name: "key passed two calls deep",
			src:  head + "local function inner(p) redis.call('DEL', p) end\nlocal function outer(q) inner(q) end\nouter(ARGV[1])\nredis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:43: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
		{
			name: "key passed by a recursive call",
			src:  head + "local function f(k, n)\n  redis.call('DEL', k)\n  if n > 0 then f(ARGV[1], n - 1) end\nend\nf(KEYS[1], 1)\n",
			want: []string{"scripts/x.lua:5:21: key position of DEL holds k, an argument" + keysOrUnsafe},
		},
		{
			name: "key built from a local assigned after the function",
			src:  head + "local k = KEYS[1]\nlocal function f() redis.call('DEL', k .. ':x') end\nk = ARGV[1]\nf()\n",
			want: []string{"scripts/x.lua:5:38: key position of DEL holds k, an argument" + keysOrUnsafe},
		},
		{
			name: "key from a table's field",
			src:  head + "local t = {k = ARGV[1]}\nredis.call('DEL', t.k)\nredis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:5:19: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
		{
			name: "key from a parameter of a function used as a value",
			src:  head + "local function del(p) redis.call('DEL', p) end\npcall(del, ARGV[1])\nredis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:41: key position of DEL holds p the checker cannot trace to KEYS (a table's field, a parameter of a function called out of its sight or given other values, a function's result)" + keysOrUnsafe},
		},
		{
			name: "keys followed through functions",
			src: head + "local function inner(p) redis.call('DEL', p) end\nlocal function outer(q) inner(q .. ':x') end\nouter(KEYS[1])\n" +
				"local function del(p) redis.call('DEL', p .. ':y') end\ndel(KEYS[1])\n" +
				"local function f(k, n)\n  redis.call('DEL', k)\n  if n > 0 then f(k .. ':z', n - 1) end\nend\nf(KEYS[1], 2)\n" +
				"local j\nif #KEYS > 0 then j = KEYS[1] end\nredis.call('GET', j)\nredis.call('SET', KEYS[1], ARGV[1])\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

// A key position given any number of values (unpack(t), a vararg ...)
// holds keys only when the checker can see they are: unpack of a local
// table or of a function's varargs is refused; unpack of KEYS or of a list
// written in place is read.
func TestKeysUnpacked(t *testing.T) {
	const head = "-- @key k\n-- @arg a string\n-- @return none\n"
	for _, tc := range []struct {
		name, src string
		want      []string // nil: accepted
	}{
		{
			name: "unpack of a local table",
			src:  head + "local t = {ARGV[1]}\nredis.call('DEL', unpack(t))\nredis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:5:19: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
		{
			name: "varargs of a local function",
			src:  head + "local function del(...) redis.call('DEL', ...) end\ndel(ARGV[1])\nredis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:4:43: key position of DEL holds a value the checker cannot trace to KEYS (a table's field, a parameter of a function called out of its sight or given other values, a function's result)" + keysOrUnsafe},
		},
		{
			name: "unpack of a list of arguments written in place",
			src:  head + "redis.call('DEL', unpack({KEYS[1], ARGV[1]}))\n",
			want: []string{"scripts/x.lua:4:19: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
		{
			name: "unpack of keys",
			src:  head + "redis.call('DEL', unpack({KEYS[1], KEYS[1] .. ':x'}))\nredis.call('DEL', unpack(KEYS))\nredis.call('SET', KEYS[1], ARGV[1])\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

// A table local that nothing changes holds what its constructor lists: its
// fields, ipairs, pairs and unpack give those values. One the script changes
// (a field assigned, table.insert, passed on) is not followed.
func TestKeysInTables(t *testing.T) {
	const head = "-- @key k\n-- @arg a string\n-- @return none\n"
	const untraced = " the checker cannot trace to KEYS (a table's field, a parameter of a function called out of its sight or given other values, a function's result)"
	for _, tc := range []struct {
		name, src string
		want      []string // nil: accepted
	}{
		{
			name: "table of keys",
			src: head + "local keys = {KEYS[1], KEYS[1] .. ':x'}\nfor _, k in ipairs(keys) do redis.call('DEL', k) end\n" +
				"for i = 1, #keys do redis.call('DEL', keys[i]) end\nlocal t = {lock = KEYS[1]}\nredis.call('SET', t.lock, ARGV[1])\n",
		},
		{
			name: "field assigned",
			src:  head + "local t = {KEYS[1]}\nt[1] = ARGV[1]\nredis.call('DEL', t[1])\n",
			want: []string{"scripts/x.lua:6:19: key position of DEL holds a value" + untraced + keysOrUnsafe},
		},
		{
			name: "field assigned in a function",
			src:  head + "local t = {KEYS[1]}\nlocal function f() t.k = ARGV[1] end\nf()\nfor _, k in pairs(t) do redis.call('DEL', k) end\n",
			want: []string{"scripts/x.lua:7:43: key position of DEL holds k" + untraced + keysOrUnsafe},
		},
		{
			name: "table.insert",
			src:  head + "local t = {KEYS[1]}\ntable.insert(t, ARGV[1])\nredis.call('DEL', unpack(t))\n",
			want: []string{"scripts/x.lua:6:19: key position of DEL holds a value" + untraced + keysOrUnsafe},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

// a and b or c is followed: it gives b or c (or a, when it is neither nil
// nor false), so keys chosen that way are keys, and an argument among them
// is refused as one.
func TestKeysChosenWithAndOr(t *testing.T) {
	const head = "-- @key a\n-- @key b\n-- @arg x string\n-- @return none\n"
	for _, tc := range []struct {
		name, src string
		want      []string // nil: accepted
	}{
		{
			name: "keys",
			src:  head + "local k = ARGV[1] == 'a' and KEYS[1] or KEYS[2]\nredis.call('DEL', k)\nredis.call('DEL', (KEYS[1] or KEYS[2]) .. ':x')\n",
		},
		{
			name: "an argument among them",
			src:  head + "redis.call('DEL', KEYS[1] or KEYS[2])\nredis.call('DEL', ARGV[1] == 'a' and ARGV[1] or KEYS[1])\n",
			want: []string{"scripts/x.lua:6:19: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

// A local function's result is followed: what its return statements give
// (nil when it ends without one), so a helper that builds a key from KEYS
// passes and one that returns an argument is refused.
func TestKeysReturnedByFunctions(t *testing.T) {
	const head = "-- @key k\n-- @arg a string\n-- @return none\n"
	for _, tc := range []struct {
		name, src string
		want      []string // nil: accepted
	}{
		{
			name: "a key built by a helper",
			src: head + "local function key(suffix) return KEYS[1] .. suffix end\nredis.call('DEL', key(':x'))\n" +
				"local function pick(c) if c then return KEYS[1] end return key(':y') end\nredis.call('DEL', pick(ARGV[1] == '1'))\n",
		},
		{
			name: "an argument returned",
			src:  head + "local function key(s) return s end\nredis.call('DEL', key(ARGV[1]))\nredis.call('GET', KEYS[1])\n",
			want: []string{"scripts/x.lua:5:19: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(tc.src)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}
