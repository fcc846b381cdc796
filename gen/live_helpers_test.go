package gen

import (
	"context"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// commandRunner starts a test server and returns a function that runs one
// command from a script (EVAL "return redis.call(unpack(ARGV))"), the way a
// generated caller's script would, on an empty database where setup[words[0]]
// (if any) has run first. It returns Redis's error, nil for a reply,
// including nil.
func commandRunner(t *testing.T, setup map[string][]string) func(words []string) error {
	t.Helper()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	return func(words []string) error {
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if s, ok := setup[words[0]]; ok {
			if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		err := rc.Do(ctx, rc.B().Eval().Script("return redis.call(unpack(ARGV))").Numkeys(0).Arg(words...).Build()).Error()
		if rueidis.IsRedisNil(err) {
			return nil
		}
		return err
	}
}
