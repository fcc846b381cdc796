package parse

import "testing"

// TestSureCalls: Call.Sure is set on the calls every run makes unless it
// fails first, and on no other.
func TestSureCalls(t *testing.T) {
	src := "redis.call('SET', 'a', 1)\n" + // 1: sure
		"local v = redis.call('GET', 'a') or redis.call('GET', 'b')\n" + // 2: the first only
		"if redis.call('EXISTS', 'a') == 1 then redis.call('DEL', 'a') end\n" + // 3: the condition only
		"while redis.call('EXISTS', 'b') == 1 do redis.call('DEL', 'b') end\n" + // 4: the condition only
		"for i = 1, redis.call('LLEN', 'l') do redis.call('LPOP', 'l') end\n" + // 5: the limit only
		"repeat redis.call('INCR', 'n') until true\n" + // 6: not sure (a break may come first)
		"local function f() redis.call('INCR', 'f') end\n" + // 7: in a function
		"do redis.call('INCR', 'd') end\n" + // 8: sure
		"if v then return 1 end\n" +
		"redis.call('INCR', 'after')\n" // 10: after a return that may come first
	f, errs := Parse("x.lua", []byte(src))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := map[Pos]bool{{1, 1}: true, {2, 11}: true, {3, 4}: true, {4, 7}: true, {5, 12}: true, {8, 4}: true}
	if len(f.Calls) != 13 {
		t.Fatalf("%d calls, want 13", len(f.Calls))
	}
	for _, c := range f.Calls {
		if c.Sure != want[c.Pos] {
			t.Errorf("the call at %v (%s): Sure %v, want %v", c.Pos, c.Command, c.Sure, want[c.Pos])
		}
	}
}

// TestSureCallsLocalFunction: a call of a local function that every run
// makes runs the function's body, whose calls outside its branches are
// made on every run too; not when the name may hold another function.
func TestSureCallsLocalFunction(t *testing.T) {
	src := "local function f() redis.call('INCR', 'f') if x then return end redis.call('INCR', 'g') end\n" + // 1: INCR f (INCR g after a return that may come first)
		"local function h() redis.call('INCR', 'h') end\n" + // 2: not called on every run
		"local k = function() redis.call('INCR', 'k') end\n" + // 3: assigned below
		"local function u(f) f() redis.call('INCR', 'u') end\n" + // 4: INCR u
		"f()\n" +
		"if x then h() end\n" +
		"if x then k = nil end\n" +
		"k()\n" +
		"u(h)\n"
	f, errs := Parse("x.lua", []byte(src))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := map[Pos]bool{{1, 20}: true, {4, 25}: true}
	for _, c := range f.Calls {
		if c.Sure != want[c.Pos] {
			t.Errorf("the call at %v (%s): Sure %v, want %v", c.Pos, c.Command, c.Sure, want[c.Pos])
		}
	}
}
