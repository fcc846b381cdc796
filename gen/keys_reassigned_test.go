package gen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A key position given a call of a local function the script also assigns
// another function (f = function ... end) holds what either returns: a
// call written in a function run after the assignment runs the other. One
// that returns an argument there is refused; one whose functions all
// return keys is read as a key; one the script assigns anything else is
// refused as untraceable. Another local of that name (a parameter, one
// declared in a function) is another variable, whose values say nothing of
// the first's.
func TestKeysReassignedFunction(t *testing.T) {
	const head = "-- @key k\n-- @key k2\n-- @arg a string\n-- @return none\nredis.call('ECHO', ARGV[1] .. KEYS[2])\n"
	for _, tc := range []struct {
		name, src string
		want      []string // nil: accepted
	}{
		{
			name: "the other returns an argument",
			src:  head + "local function f() return KEYS[1] end\nlocal function g() redis.call('GET', f()) end\nf = function() return ARGV[1] end\ng()\n",
			want: []string{"scripts/x.lua:7:38: key position of GET holds ARGV[1], an argument" + keysOrUnsafe},
		},
		{
			name: "the other defined with function f()",
			src:  head + "local function f() return KEYS[1] end\nlocal function g() redis.call('DEL', f() .. ':x') end\nfunction f() return ARGV[1] end\ng()\n",
			want: []string{"scripts/x.lua:7:38: key position of DEL holds ARGV[1], an argument" + keysOrUnsafe},
		},
		{
			name: "assigned another value",
			src:  head + "local function f() return KEYS[1] end\nlocal function g() redis.call('GET', f()) end\nf = ARGV[1]\ng()\n",
			want: []string{"scripts/x.lua:7:38: key position of GET holds a value the checker cannot trace to KEYS (a table's field, a parameter of a function called out of its sight or given other values, a function's result)" + keysOrUnsafe},
		},
		// Another local of that name, in a scope of its own, is another
		// variable: what it is assigned says nothing of f.
		{
			name: "a parameter of that name assigned",
			src:  head + "local function f() return KEYS[1] end\nlocal function pad(f) f = f or ''; return f end\nredis.call('SET', f(), pad(ARGV[1]))\n",
		},
		{
			name: "a local of that name in a function assigned a function",
			src:  head + "local function f() return KEYS[1] end\nlocal function g() local f; f = function() return ARGV[1] end; return f() end\nredis.call('SET', f(), g())\n",
		},
		{
			name: "both return keys",
			src:  head + "local function f() return KEYS[1] end\nlocal function g() redis.call('DEL', f() .. ':x') end\nf = function() return KEYS[2] end\ng()\n",
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
