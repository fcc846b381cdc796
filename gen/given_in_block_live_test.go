package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGivenInBlockAgreesWithServer: a local declared without a value and
// given one in a nested block (an if's branch, a loop's body) holds it in
// the rest of that block, whatever it held before: passed to redis.call
// there it is taken, and the server runs the script. Past the block it may
// still be nil (TestGivenInIfAtBreak..., TestNilLocal...).
func TestGivenInBlockAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	for _, tc := range []struct{ name, body string }{
		{"an if", "if ARGV[1] == 'a' then\n  x = 'c'\n  redis.call('SET', KEYS[1], x)\nend"},
		{"a while true", "while true do\n  x = 'c'\n  redis.call('SET', KEYS[1], x)\n  break\nend"},
		{"a numeric for", "for i = 1, #ARGV do\n  x = ARGV[1] .. i\n  redis.call('SET', KEYS[1], x)\nend"},
		{"a nested if", "if ARGV[1] == 'a' then\n  x = 'c'\n  if ARGV[1] ~= '' then redis.call('SET', KEYS[1], x) end\nend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal x\n" + tc.body + "\nredis.call('ECHO', ARGV[1])\n"
			checkAndRun(t, rc, src, "", "", []string{"{t}k"}, "a")
		})
	}
}
