package gen

import (
	"strings"
	"testing"
)

// TestErrorCodeFromParam: an error reply whose message is a parameter of a
// local function (local function fail(msg) return redis.error_reply(msg)
// end) is read at each call of it, as the message the call passes written
// in place: an undeclared code is refused at the call. Before, such a
// message was taken for one the checker cannot read, and any code passed.
func TestErrorCodeFromParam(t *testing.T) {
	head := "-- X fails.\n-- @key k\n-- @return int64\n-- @error OUT_OF_STOCK nothing left\n"
	const gone = "error code GONE, in the message passed to fail, is not declared with @error (-- @error GONE <message>; callers get ErrGone)"
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"error_reply",
			"local function fail(msg)\n  return redis.error_reply(msg)\nend\nif redis.call('INCR', KEYS[1]) > 5 then return fail('GONE ' .. KEYS[1]) end\nreturn fail('OUT_OF_STOCK ' .. KEYS[1])\n",
			[]string{"scripts/x.lua:8:48: " + gone}},
		{"code and value, err table",
			"local function fail(code, v)\n  return {err = code .. ' ' .. v}\nend\nif redis.call('INCR', KEYS[1]) > 5 then return fail('GONE', KEYS[1]) end\nreturn fail('OUT_OF_STOCK', KEYS[1])\n",
			[]string{"scripts/x.lua:8:48: " + gone}},
		{"error() of an err table",
			"local function fail(msg)\n  error({err = msg})\nend\nif redis.call('INCR', KEYS[1]) > 5 then fail('GONE x') end\nfail('OUT_OF_STOCK x')\nreturn 1\n",
			[]string{"scripts/x.lua:8:41: " + gone}},
		{"format passed",
			"local function fail(msg)\n  return redis.error_reply(msg)\nend\nif redis.call('INCR', KEYS[1]) > 5 then return fail(string.format('GONE %s', KEYS[1])) end\nreturn fail(string.format('OUT_OF_STOCK %s', KEYS[1]))\n",
			[]string{"scripts/x.lua:8:48: " + gone}},
		{"format of the parameter",
			"local function fail(f, v)\n  return redis.error_reply(string.format(f, v))\nend\nif redis.call('INCR', KEYS[1]) > 5 then return fail('GONE %s', KEYS[1]) end\nreturn fail('OUT_OF_STOCK %s', KEYS[1])\n",
			[]string{"scripts/x.lua:8:48: " + gone}},
		{"constant local passed",
			"local GONE = 'GONE it is gone'\nlocal function fail(msg)\n  return redis.error_reply(msg)\nend\nif redis.call('INCR', KEYS[1]) > 5 then return fail(GONE) end\nreturn fail('OUT_OF_STOCK x')\n",
			[]string{"scripts/x.lua:9:48: " + gone}},
		{"prefix in the function",
			"local function fail(p)\n  return redis.error_reply('OUT_' .. p)\nend\nif redis.call('INCR', KEYS[1]) > 5 then return fail('GONE x') end\nreturn fail('OF_STOCK x')\n",
			[]string{"scripts/x.lua:8:48: error code OUT_GONE, in the message passed to fail, is not declared with @error (-- @error OUT_GONE <message>; callers get ErrOutGone)"}},
		{"error() of a declared code",
			"local function fail(msg)\n  error(msg)\nend\nif redis.call('INCR', KEYS[1]) > 5 then fail('OUT_OF_STOCK x') end\nreturn redis.error_reply('OUT_OF_STOCK y')\n",
			[]string{`scripts/x.lua:8:41: error("OUT_OF_STOCK x"), in the message passed to fail, reaches the caller as "ERR user_script:...: OUT_OF_STOCK x" and matches no sentinel: use return redis.error_reply("OUT_OF_STOCK x")`}},
		// A call that cannot reach the reply (the function returns before
		// it for what the call passes) raises nothing.
		{"not reached",
			"local function out(mode, msg)\n  if mode == 'ok' then return 1 end\n  return redis.error_reply(msg)\nend\nif redis.call('INCR', KEYS[1]) > 5 then return out('ok', 'NOPE x') end\nif redis.call('INCR', KEYS[1]) > 6 then return out('no', 'OUT_OF_STOCK x') end\nreturn out('no', 'GONE x')\n",
			[]string{"scripts/x.lua:11:8: error code GONE, in the message passed to out, is not declared with @error (-- @error GONE <message>; callers get ErrGone)"}},
		// One call's message unread leaves the others read.
		{"one argument unread",
			"local function fail(msg)\n  return redis.error_reply(msg)\nend\nif redis.call('INCR', KEYS[1]) > 5 then return fail(ARGV[1]) end\nreturn fail('GONE x')\n",
			[]string{"scripts/x.lua:10:8: " + gone}},
		// What the checker cannot follow stays unread, as before.
		{"reassigned",
			"local function fail(msg)\n  return redis.error_reply(msg)\nend\nif redis.call('INCR', KEYS[1]) > 5 then fail = function(m) return redis.error_reply('OUT_OF_STOCK ' .. m) end end\nreturn fail('GONE x')\n",
			nil},
		{"passed around",
			"local function fail(msg)\n  return redis.error_reply(msg)\nend\nlocal ok, e = pcall(fail, 'OUT_OF_STOCK x')\nreturn fail('GONE ' .. KEYS[1])\n",
			nil},
		{"parameter assigned",
			"local function fail(msg)\n  msg = 'OUT_OF_STOCK ' .. msg\n  return redis.error_reply(msg)\nend\nreturn fail('GONE ' .. KEYS[1])\n",
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body
			if strings.Contains(tc.body, "ARGV") {
				src = head + "-- @arg a string\n" + tc.body
			}
			got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("checker:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestErrorCodeFromParamReturned: a declared code passed to such a function
// counts as returned, and once every call's message is read a declared code
// never passed is reported (before, the unread message in the function
// kept the warning back for every code). One call whose message cannot be
// read keeps it back still.
func TestErrorCodeFromParamReturned(t *testing.T) {
	const fail = "local function fail(msg)\n  return redis.error_reply(msg)\nend\n"
	head := "-- X fails.\n-- @key k\n-- @return int64\n-- @error OUT_OF_STOCK nothing left\n-- @error GONE gone\n"
	checkWarnings(t, head+fail+"if redis.call('INCR', KEYS[1]) > 5 then return fail('OUT_OF_STOCK x') end\nreturn 1\n",
		[]string{"scripts/x.lua:5:11: warning: @error GONE is declared but the script never returns it (return redis.error_reply('GONE ...'))"})
	checkWarnings(t, head+fail+"if redis.call('INCR', KEYS[1]) > 5 then return fail('OUT_OF_STOCK x') end\nreturn fail('GONE ' .. KEYS[1])\n", nil)
	checkWarnings(t, head+"-- @arg a string\n"+fail+"if redis.call('INCR', KEYS[1]) > 5 then return fail('OUT_OF_STOCK x') end\nreturn fail(ARGV[1])\n", nil)
}
