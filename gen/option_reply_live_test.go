package gen

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/gen/parse"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestOptionRepliesAgreeWithServer runs each command of optionReplies from
// a script, on a key that holds values and on a missing one, with and
// without its count and its pairs option, and checks the reply against
// shapeOfCall: its shapes (a string or nil without a count, an array with
// one), its length within the most values it says, and pairs.
func TestOptionRepliesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	setup := [][]string{
		{"RPUSH", "l", "a", "b", "c", "d", "e"}, {"SADD", "s", "a", "b", "c", "d", "e"},
		{"HSET", "h", "a", "1", "b", "2", "c", "3"}, {"ZADD", "z", "1", "a", "2", "b", "3", "c"},
	}
	keyOf := map[string]string{"LPOP": "l", "RPOP": "l", "SPOP": "s", "SRANDMEMBER": "s", "HRANDFIELD": "h"}
	shapeOf := func(m *rueidis.RedisMessage) replyKind {
		switch {
		case m.IsNil():
			return replyNil
		case m.IsString():
			return replyStr
		case m.IsInt64():
			return replyInt
		case m.IsArray():
			return replyArr
		}
		return replyUnknown
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range optionReplies {
			if !yield(n) {
				return
			}
		}
	}) {
		o := optionReplies[name]
		key := keyOf[name]
		if key == "" {
			key = "z"
		}
		var calls [][]string
		fixed := map[string][]string{"ZRANGE": {"0", "-1"}, "ZREVRANGE": {"0", "-1"}, "ZRANGEBYSCORE": {"-inf", "+inf"}, "ZREVRANGEBYSCORE": {"+inf", "-inf"}}
		for _, k := range []string{key, "missing"} {
			switch {
			case strings.HasPrefix(name, "ZUNION") || strings.HasPrefix(name, "ZINTER") || strings.HasPrefix(name, "ZDIFF"):
				calls = append(calls, []string{name, "1", k}, []string{name, "1", k, o.pairs})
			case o.count == 0:
				calls = append(calls, append([]string{name, k}, fixed[name]...), append(append([]string{name, k}, fixed[name]...), o.pairs))
			default:
				calls = append(calls, []string{name, k}, []string{name, k, "2"}, []string{name, k, "1"})
				if o.pairs != "" {
					calls = append(calls, []string{name, k, "2", o.pairs}, []string{name, k, "-3", strings.ToLower(o.pairs)})
				}
			}
		}
		for _, words := range calls {
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			for _, s := range setup {
				if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			m, err := rc.Do(ctx, rc.B().Eval().Script("return redis.call(unpack(ARGV))").Numkeys(0).Arg(words...).Build()).ToMessage()
			if err != nil && !rueidis.IsRedisNil(err) {
				t.Errorf("%v: %v", words, err)
				continue
			}
			call := parse.Call{Command: words[0]}
			for _, w := range words[1:] {
				call.Args = append(call.Args, parse.Arg{Literal: &w, Exact: true})
			}
			s := shapeOfCall(name, &call)
			want := s.kind
			if !s.known {
				want = replyArr // the commands without a count always reply a list
			}
			if got := shapeOf(&m); got&want == 0 {
				t.Errorf("%v replied %s, but shapeOfCall says %s", words, got, want)
				continue
			}
			vals, _ := m.ToArray()
			if s.max > 0 && len(vals) > s.max {
				t.Errorf("%v replied %d values, but shapeOfCall says at most %d", words, len(vals), s.max)
			}
			if m.IsArray() && s.pairsKnown && s.pairs != (strings.EqualFold(words[len(words)-1], o.pairs) || o.always) {
				t.Errorf("%v: shapeOfCall says pairs %v", words, s.pairs)
			}
			if m.IsArray() && s.pairs && len(vals)%2 != 0 {
				t.Errorf("%v replied %d values, not pairs", words, len(vals))
			}
		}
	}
}

// TestWordRepliesAgreeWithServer runs each command of wordReplies from a
// script, with and without the options that choose its reply, on keys that
// hold values and on missing ones, and checks the reply against wordShape.
func TestWordRepliesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	setup := [][]string{
		{"RPUSH", "{k}l", "a", "b", "a"}, {"SET", "{k}s", "abcd"}, {"SET", "{k}t", "xbcy"},
		{"GEOADD", "{k}g", "13.36", "38.11", "a", "15.08", "37.50", "b"},
	}
	calls := [][]string{
		{"ZADD", "{k}z", "1", "a"}, {"ZADD", "{k}z", "INCR", "1", "a"}, {"ZADD", "{k}z", "incr", "NX", "1", "a"},
		{"ZADD", "{k}z", "XX", "INCR", "1", "a"}, {"ZADD", "{k}z", "CH", "GT", "1", "INCR"},
		{"LPOS", "{k}l", "a"}, {"LPOS", "{k}l", "x"}, {"LPOS", "{k}l", "a", "COUNT", "0"}, {"LPOS", "{k}l", "x", "RANK", "-1", "count", "2"},
		{"LPOS", "{k}m", "a", "COUNT", "1"}, {"LPOS", "{k}m", "a"},
		{"SORT", "{k}l", "ALPHA"}, {"SORT", "{k}l", "ALPHA", "STORE", "{k}d"}, {"SORT", "{k}l", "LIMIT", "0", "1", "ALPHA", "store", "{k}d"},
		{"SORT", "{k}m"}, {"SORT", "{k}m", "STORE", "{k}d"},
		{"GEORADIUS", "{k}g", "15", "37", "200", "km"}, {"GEORADIUS", "{k}g", "15", "37", "200", "km", "STORE", "{k}d"},
		{"GEORADIUS", "{k}g", "15", "37", "200", "km", "COUNT", "1", "STOREDIST", "{k}d"},
		{"GEORADIUSBYMEMBER", "{k}g", "a", "200", "km", "WITHDIST"}, {"GEORADIUSBYMEMBER", "{k}g", "a", "200", "km", "STORE", "{k}d"},
		{"GEORADIUSBYMEMBER", "{k}g", "a", "200", "km", "ASC", "STOREDIST", "{k}d"},
		{"LCS", "{k}s", "{k}t"}, {"LCS", "{k}s", "{k}t", "LEN"}, {"LCS", "{k}s", "{k}t", "IDX", "MINMATCHLEN", "1", "WITHMATCHLEN"},
		{"LCS", "{k}m", "{k}n"}, {"LCS", "{k}m", "{k}n", "len"},
	}
	shapeOf := func(m *rueidis.RedisMessage) replyKind {
		switch {
		case m.IsNil():
			return replyNil
		case m.IsString():
			return replyStr
		case m.IsInt64():
			return replyInt
		case m.IsArray():
			return replyArr
		}
		return replyUnknown
	}
	tried := map[string]bool{}
	for _, words := range calls {
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		for _, s := range setup {
			if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		m, err := rc.Do(ctx, rc.B().Eval().Script("return redis.call(unpack(ARGV))").Numkeys(0).Arg(words...).Build()).ToMessage()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Errorf("%v: %v", words, err)
			continue
		}
		call := parse.Call{Command: words[0]}
		for _, w := range words[1:] {
			call.Args = append(call.Args, parse.Arg{Literal: &w, Exact: true})
		}
		kind, note, ok := wordShape(words[0], &call)
		if !ok {
			t.Errorf("%v: wordShape cannot tell", words)
			continue
		}
		if got := shapeOf(&m); got&kind == 0 {
			t.Errorf("%v replied %s, but wordShape says %s%s", words, got, words[0]+note, kind)
		}
		tried[words[0]+note] = true
	}
	for name, o := range wordReplies {
		for opt := range o.options {
			if !tried[name+" with "+opt] {
				t.Errorf("no call of %s with %s", name, opt)
			}
		}
	}
}

// TestItemRepliesAgreeWithServer runs a call of each command of
// intItemReplies and strItemReplies (but container subcommands, whose
// replies the return checks do not read) from a script, on keys that hold
// values, and checks that each element of the reply is of the kind the
// table says, or nil.
func TestItemRepliesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	setup := [][]string{
		{"RPUSH", "{k}l", "a", "b", "a"}, {"SADD", "{k}s", "a", "b"}, {"SADD", "{k}t", "b", "c"},
		{"HSET", "{k}h", "a", "1", "b", "x"}, {"ZADD", "{k}z", "1.5", "a", "2", "b"}, {"SET", "{k}v", "1"},
		{"GEOADD", "{k}g", "13.36", "38.11", "a"},
	}
	calls := map[string][]string{
		"BITFIELD":       {"BITFIELD", "{k}v", "GET", "u8", "0", "INCRBY", "u8", "0", "1"},
		"BITFIELD_RO":    {"BITFIELD_RO", "{k}v", "GET", "u8", "0"},
		"LPOS":           {"LPOS", "{k}l", "a", "COUNT", "0"},
		"SMISMEMBER":     {"SMISMEMBER", "{k}s", "a", "x"},
		"GEOHASH":        {"GEOHASH", "{k}g", "a", "x"},
		"HKEYS":          {"HKEYS", "{k}h"},
		"HMGET":          {"HMGET", "{k}h", "a", "x"},
		"HVALS":          {"HVALS", "{k}h"},
		"KEYS":           {"KEYS", "*"},
		"LPOP":           {"LPOP", "{k}l", "2"},
		"RPOP":           {"RPOP", "{k}l", "2"},
		"LRANGE":         {"LRANGE", "{k}l", "0", "-1"},
		"MGET":           {"MGET", "{k}v", "{k}x"},
		"SDIFF":          {"SDIFF", "{k}s", "{k}t"},
		"SINTER":         {"SINTER", "{k}s", "{k}t"},
		"SUNION":         {"SUNION", "{k}s", "{k}t"},
		"SMEMBERS":       {"SMEMBERS", "{k}s"},
		"SPOP":           {"SPOP", "{k}s", "2"},
		"SORT":           {"SORT", "{k}l", "ALPHA"},
		"SORT_RO":        {"SORT_RO", "{k}l", "ALPHA"},
		"TIME":           {"TIME"},
		"ZMSCORE":        {"ZMSCORE", "{k}z", "a", "x"},
		"ZRANGEBYLEX":    {"ZRANGEBYLEX", "{k}z", "-", "+"},
		"ZREVRANGEBYLEX": {"ZREVRANGEBYLEX", "{k}z", "+", "-"},
	}
	check := func(table map[string]bool, want func(*rueidis.RedisMessage) bool, kind string) {
		for name := range table {
			if strings.Contains(name, "|") {
				continue
			}
			words, ok := calls[name]
			if !ok {
				t.Errorf("no call of %s", name)
				continue
			}
			if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			for _, s := range setup {
				if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			// The elements as a script returns them: a nil ends a Lua array,
			// so each is returned alone.
			script := "local r = redis.call(unpack(ARGV))\nlocal out = {}\nfor i = 1, table.maxn(r) do out[i] = r[i] or 'nil' end\nreturn out"
			vals, err := rc.Do(ctx, rc.B().Eval().Script(script).Numkeys(0).Arg(words...).Build()).ToArray()
			if err != nil || len(vals) == 0 {
				t.Errorf("%v: %d values, %v", words, len(vals), err)
				continue
			}
			for i := range vals {
				if s, _ := vals[i].ToString(); s != "nil" && !want(&vals[i]) {
					t.Errorf("%v: element %d is no %s", words, i+1, kind)
				}
			}
		}
	}
	check(intItemReplies, (*rueidis.RedisMessage).IsInt64, "integer")
	check(strItemReplies, (*rueidis.RedisMessage).IsString, "string")
}

// TestNestedRepliesAgreeWithServer runs a call of each command of
// nestedReplies from a script, on keys that hold values, and checks that
// its reply holds an array.
func TestNestedRepliesAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	setup := [][]string{
		{"RPUSH", "{k}l", "a", "b"}, {"SADD", "{k}s", "a", "b"}, {"HSET", "{k}h", "a", "1"},
		{"ZADD", "{k}z", "1", "a"}, {"XADD", "{k}x", "1-1", "f", "v"}, {"XGROUP", "CREATE", "{k}x", "g", "0"},
		{"GEOADD", "{k}g", "13.36", "38.11", "a"},
	}
	calls := map[string][]string{
		"XRANGE":     {"XRANGE", "{k}x", "-", "+"},
		"XREVRANGE":  {"XREVRANGE", "{k}x", "+", "-"},
		"XREAD":      {"XREAD", "COUNT", "1", "STREAMS", "{k}x", "0"},
		"XREADGROUP": {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "{k}x", ">"},
		"GEOPOS":     {"GEOPOS", "{k}g", "a"},
		"SCAN":       {"SCAN", "0", "COUNT", "1"},
		"SSCAN":      {"SSCAN", "{k}s", "0"},
		"HSCAN":      {"HSCAN", "{k}h", "0"},
		"ZSCAN":      {"ZSCAN", "{k}z", "0"},
		"LMPOP":      {"LMPOP", "1", "{k}l", "LEFT"},
		"ZMPOP":      {"ZMPOP", "1", "{k}z", "MIN"},
		"XAUTOCLAIM": {"XAUTOCLAIM", "{k}x", "g", "c", "0", "0", "JUSTID"},
	}
	for name := range nestedReplies {
		words, ok := calls[name]
		if !ok {
			t.Errorf("no call of %s", name)
			continue
		}
		if err := rc.Do(ctx, rc.B().Flushall().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		for _, s := range setup {
			if err := rc.Do(ctx, rc.B().Arbitrary(s[0]).Args(s[1:]...).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		vals, err := rc.Do(ctx, rc.B().Eval().Script("return redis.call(unpack(ARGV))").Numkeys(0).Arg(words...).Build()).ToArray()
		if err != nil {
			t.Errorf("%v: %v", words, err)
			continue
		}
		if !slices.ContainsFunc(vals, func(m rueidis.RedisMessage) bool { return m.IsArray() }) {
			t.Errorf("%v: the reply holds no array", words)
		}
	}
}
