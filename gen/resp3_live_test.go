package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3ReturnsAgreeWithServer runs scripts that return values after
// redis.setresp(3) (and the same without it, or switched back) through
// rueidis, as the generated callers do, and checks what the caller
// receives: the shape the checker's message says (a RESP3 boolean for Lua
// false, a map, a double, pairs in arrays, an array cut at a missing
// element), and that the checker refuses the script exactly when its
// @return does not read that shape.
func TestResp3ReturnsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	setup := [][]string{{"HSET", "{t}h", "f", "v"}, {"ZADD", "{t}z", "1.5", "a", "2", "b"}}
	isStrings := func(m *rueidis.RedisMessage) bool {
		vals, err := m.ToArray()
		for _, v := range vals {
			if !v.IsString() {
				return false
			}
		}
		return err == nil && !m.IsMap()
	}
	for _, tc := range []struct {
		name, ret, body string
		refused         bool
		reply           func(m *rueidis.RedisMessage) bool
	}{
		{"false without RESP3", "string?", "if #KEYS > 5 then return 'x' end\nreturn false", false, (*rueidis.RedisMessage).IsNil},
		{"false after RESP3", "string?", "redis.setresp(3)\nreturn false", true, func(m *rueidis.RedisMessage) bool { v, err := m.ToBool(); return m.IsBool() && err == nil && !v }},
		{"true after RESP3", "int64", "redis.setresp(3)\nreturn true", true, (*rueidis.RedisMessage).IsBool},
		{"boolean after RESP3 as bool", "bool", "redis.setresp(3)\nreturn #KEYS > 5", false, (*rueidis.RedisMessage).IsBool},
		{"false after switching back", "string?", "redis.setresp(3)\nredis.setresp(2)\nif #KEYS > 5 then return 'x' end\nreturn false", false, (*rueidis.RedisMessage).IsNil},
		{"false in a table after RESP3", "{a int64, b string?}", "redis.setresp(3)\nreturn {1, #KEYS > 5}", true, func(m *rueidis.RedisMessage) bool {
			vals, _ := m.ToArray()
			return len(vals) == 2 && vals[1].IsBool()
		}},
		{"HGETALL after RESP3", "[]string", "redis.setresp(3)\nreturn redis.call('HGETALL', KEYS[1] .. 'h')", true, (*rueidis.RedisMessage).IsMap},
		{"HGETALL after RESP3 as a map", "map[string]string", "redis.setresp(3)\nreturn redis.call('HGETALL', KEYS[1] .. 'h')", false, (*rueidis.RedisMessage).IsMap},
		{"HGETALL before RESP3", "[]string", "local h = redis.call('HGETALL', KEYS[1] .. 'h')\nredis.setresp(3)\nreturn h", false, isStrings},
		{"ZSCORE after RESP3", "string?", "redis.setresp(3)\nreturn redis.call('ZSCORE', KEYS[1] .. 'z', 'a')", true, (*rueidis.RedisMessage).IsFloat64},
		{"ZSCORE after RESP3 as float64", "float64?", "redis.setresp(3)\nreturn redis.call('ZSCORE', KEYS[1] .. 'z', 'a')", false, (*rueidis.RedisMessage).IsFloat64},
		{"ZSCORE without RESP3", "string?", "return redis.call('ZSCORE', KEYS[1] .. 'z', 'a')", false, (*rueidis.RedisMessage).IsString},
		{"ZRANGE WITHSCORES after RESP3", "[]string", "redis.setresp(3)\nreturn redis.call('ZRANGE', KEYS[1] .. 'z', 0, -1, 'WITHSCORES')", true, func(m *rueidis.RedisMessage) bool {
			vals, _ := m.ToArray()
			return len(vals) == 2 && vals[0].IsArray()
		}},
		{"ZRANGE after RESP3", "[]string", "redis.setresp(3)\nreturn redis.call('ZRANGE', KEYS[1] .. 'z', 0, -1)", false, isStrings},
		{"ZPOPMIN after RESP3", "[]string", "redis.setresp(3)\nreturn redis.call('ZPOPMIN', KEYS[1] .. 'z')", true, func(m *rueidis.RedisMessage) bool {
			vals, _ := m.ToArray()
			return len(vals) == 2 && vals[1].IsFloat64()
		}},
		{"HMGET after RESP3", "{a string?, f string?}", "redis.setresp(3)\nreturn redis.call('HMGET', KEYS[1] .. 'h', 'a', 'f')", true, func(m *rueidis.RedisMessage) bool {
			vals, err := m.ToArray()
			return err == nil && len(vals) == 0 // f's value is lost
		}},
		{"HMGET without RESP3", "{a string?, f string?}", "return redis.call('HMGET', KEYS[1] .. 'h', 'a', 'f')", false, func(m *rueidis.RedisMessage) bool {
			vals, _ := m.ToArray()
			return len(vals) == 2 && vals[0].IsNil() && vals[1].IsString()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			errs := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
			if refused := len(errs) > 0; refused != tc.refused {
				t.Errorf("checker refused %v, want %v: %s", refused, tc.refused, strings.Join(errs, "\n"))
			}
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			for _, s := range setup {
				if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			m, err := rc.Do(ctx, rc.B().Eval().Script(tc.body).Numkeys(1).Key("{t}").Build()).ToMessage()
			if err != nil && !rueidis.IsRedisNil(err) {
				t.Fatal(err)
			}
			if !tc.reply(&m) {
				t.Errorf("the caller received %s, not the shape this case expects", m.String())
			}
		})
	}
}
