package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
	"github.com/google/go-cmp/cmp"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ in, camel, lower, param string }{
		{"mutex_acquire", "MutexAcquire", "mutexAcquire", "mutexAcquire"},
		{"ttl", "TTL", "ttl", "ttl"},
		{"owner_id", "OwnerID", "ownerID", "ownerID"},
		{"OVER_LIMIT", "OverLimit", "overLimit", "overLimit"},
		{"leaseMs", "LeaseMs", "leaseMs", "leaseMs"},
		{"URLPath", "URLPath", "urlPath", "urlPath"},
		{"type", "Type", "type", "type_"},
		{"ctx", "Ctx", "ctx", "ctx_"},
		{"c", "C", "c", "c_"},
		{"len", "Len", "len", "len_"},
		{"time", "Time", "time", "time_"},
		{"key-2", "Key2", "key2", "key2"},
	} {
		if got := camel(tc.in); got != tc.camel {
			t.Errorf("camel(%q) = %q, want %q", tc.in, got, tc.camel)
		}
		if got := lowerCamel(tc.in); got != tc.lower {
			t.Errorf("lowerCamel(%q) = %q, want %q", tc.in, got, tc.lower)
		}
		if got := paramName(tc.in); got != tc.param {
			t.Errorf("paramName(%q) = %q, want %q", tc.in, got, tc.param)
		}
	}
}

func TestReplyTypes(t *testing.T) {
	for _, s := range []string{
		"none", "int64", "float64", "string", "bytes", "bool", "[]string", "[]int64", "map[string]string",
		"int64?", "[]string?", "map[string]string?", "{ttl int64, owner string?}", "{a bool}?",
	} {
		typ, err := parseReplyType(s)
		if err != nil {
			t.Errorf("parseReplyType(%q): %v", s, err)
			continue
		}
		if typ.String() != s {
			t.Errorf("parseReplyType(%q).String() = %q", s, typ.String())
		}
	}
	typ, err := parseReplyType("{ ttl int64 ,owner   string? }")
	if err != nil || typ.String() != "{ttl int64, owner string?}" {
		t.Errorf("spaced record = %q, %v", typ.String(), err)
	}
}

// TestEmitConstructs renders single constructs, as they appear in the files.
func TestEmitConstructs(t *testing.T) {
	s := &Script{Name: "Get", File: "scripts/get.lua", Source: "return `x`\r\n", SHA1: "abc",
		Keys: []Param{{Name: "k", Type: Type{Kind: String}}}, Return: Type{Kind: String, Nullable: true}, ReadOnly: true, Retryable: true}
	for _, tc := range []struct {
		code jen.Code
		want string
	}{
		{emitSource(s), "// getSource is scripts/get.lua, verbatim.\nconst getSource = \"return `x`\\r\\n\""},
		{emitScriptVar(s), "var getScript = rueidis.NewLuaScriptReadOnly(getSource)"},
		{emitReplyType(s), "// GetReply is the reply to one call in GetMulti.\ntype GetReply struct {\n\tValue string\n\tOK    bool // false when the script replied nil\n\tErr   error\n}"},
		{buildCmd(s, false), "c.B().EvalshaRo().Sha1(getSHA1).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()"},
		{rawString("a\nb"), "`a\nb`"},
	} {
		if got := fmt.Sprintf("%#v", tc.code); got != tc.want {
			t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
		}
	}
	s.ReadOnly = false
	if got, want := fmt.Sprintf("%#v", emitScriptVar(s)), "var getScript = rueidis.NewLuaScriptRetryable(getSource)"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := fmt.Sprintf("%#v", buildCmd(s, true)), "c.B().Eval().Script(getSource).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build().ToRetryable()"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	files := loadCase(t, "testdata/all")
	first, err := Generate("generated", files)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		// reversed input order must not matter either
		rev := make([]File, len(files))
		for j, f := range files {
			rev[len(files)-1-j] = f
		}
		again, err := Generate("generated", rev)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("run %d differs (-first +again):\n%s", i, diff)
		}
	}
}

func TestEmptyPackage(t *testing.T) {
	out, err := Generate("redisscripts", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !strings.Contains(string(out[SharedFile]), "var Scripts = []Script{}") {
		t.Errorf("empty package = %v", out)
	}
}

// FuzzGenerate checks that any script either is rejected with checker
// errors or yields Go source that parses.
func FuzzGenerate(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/scripts/*.lua")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("--\xe6 invalid UTF-8 in the doc\n-- @return {a bytes}\n"))
	f.Add([]byte("-- @key a...\n-- @arg b... bytes\n-- @return {x bytes?, y float64}?\nreturn {KEYS[1], ARGV[1]}\n"))
	// Inputs that once slipped through: uncheckable command names, names
	// without a Go identifier or hiding helpers, comments that were code,
	// redis.call used as a value.
	f.Add([]byte("-- @key k\n-- @arg cmd string\n-- @commands get\n-- @return none\nredis.call(string.lower(ARGV[1]), KEYS[1])\n"))
	f.Add([]byte("-- @key k\n-- @arg cmd... string\n-- @commands get\n-- @return none\nredis.call(ARGV[1], KEYS[1])\n"))
	f.Add([]byte("-- @key k\n-- @arg cmd bytes\n-- @commands get\n-- @return none\nredis.call(ARGV[1], KEYS[1])\n"))
	f.Add([]byte("-- @key check_slots\n-- @key other\n-- @return none\nreturn redis.call('MGET', KEYS[1], KEYS[2])\n"))
	f.Add([]byte("-- @arg bool_arg string\n-- @arg flag bool\n-- @return none\nreturn ARGV[1] .. ARGV[2]\n"))
	f.Add([]byte("-- @key fuzz_script\n-- @return none\nreturn redis.call('GET', KEYS[1])\n"))
	// The result of a redis.call called in turn: a call without arguments
	// whose function holds the redis.call.
	f.Add([]byte("redis.call('000'%A000[0])()"))
	f.Add([]byte("-- /* legacy note\n-- @key k /* x */ func init() { panic(1) }\n-- @return none\nreturn redis.call('GET', KEYS[1])\n"))
	f.Add([]byte("-- /* x */ func init() { panic(\"injected\") }\n-- @return none\nreturn 'OK'\n"))
	f.Add([]byte("-- @key _\n-- @return {_1 string}\nreturn redis.call('GET', KEYS[1])\n"))
	f.Add([]byte("-- @readonly\n-- @key k\n-- @return none\npcall(redis.call, 'DEL', KEYS[1])\n"))
	f.Add([]byte("-- @return none\nlocal call = redis.call\ncall('SET', 'not_a_key', 'x')\n"))
	f.Add([]byte("-- @readonly\n-- @return none\n_G.redis.call('DEL', 'x')\n"))
	f.Add([]byte("-- @readonly\n-- @key k\n-- @arg sub string\n-- @return none\nredis.call('XGROUP', ARGV[1], KEYS[1], 'g', '$')\n"))
	f.Add([]byte("#!lua \"flags=no-\\x77rites\" 'x\\'y' flags=a,,b\n-- @readonly\n-- @return none\n"))
	f.Add([]byte("#!lua flags=no-writes\r\n-- @key k\r\n-- @return none\r\nredis.pcall('SET', KEYS[1], '*/')\r\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		out, err := Generate("generated", []File{{Path: "scripts/fuzz.lua", Source: src}})
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("non-checker error: %v", err)
			}
			return
		}
		for name, b := range out {
			f, err := parser.ParseFile(token.NewFileSet(), name, b, parser.AllErrors)
			if err != nil {
				t.Fatalf("%s does not parse: %v\n%s", name, err, b)
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "init" {
					t.Fatalf("%s declares func init: script text became code\n%s", name, b)
				}
			}
		}
	})
}

// BenchmarkGenerate generates a package of 100 scripts.
func BenchmarkGenerate(b *testing.B) {
	var files []File
	for i := range 100 {
		src := fmt.Sprintf(`-- Script%d does things number %d.
-- @key lock
-- @key others...
-- @arg owner string
-- @arg lease duration
-- @arg n int64
-- @return {ttl int64, owner string?}
-- @error NOT_HELD the lock is not held
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then
  return redis.error_reply("NOT_HELD " .. ARGV[1])
end
for i = 2, #KEYS do redis.call("PEXPIRE", KEYS[i], ARGV[2]) end
return {redis.call("PTTL", KEYS[1]) + tonumber(ARGV[3]), redis.call("HGET", KEYS[1], ARGV[1])}
`, i, i)
		files = append(files, File{Path: fmt.Sprintf("scripts/script_%03d.lua", i), Source: []byte(src)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate("generated", files); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBytesArgsNotCopied: []byte arguments are sent as rueidis.BinaryString,
// which does not copy them: the doc of every function that takes them says
// they must be left unmodified after the call. It said "until the call
// returns", but a call whose context ends returns at once while rueidis may
// still write the command: a buffer reused then ran the script with bytes
// the caller never sent.
func TestBytesArgsNotCopied(t *testing.T) {
	src := "-- Put stores a value.\n-- @key k\n-- @arg value bytes\n-- @arg tags... bytes\n-- @return none\nreturn redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL', unpack(ARGV, 2))\n"
	out, err := Generate("generated", []File{{Path: "scripts/put.lua", Source: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	code := string(out["put.lua.go"])
	for _, want := range []string{
		"// Put stores a value.\n//\n// The []byte arguments value and tags are sent without a copy: do not modify\n// them after the call, even once Put has returned (a call whose context ends\n// returns at once, and the command may be written after that).\nfunc Put(",
		"// The []byte fields Value and Tags are sent without a copy: do not modify them\n// after the call, even once PutMulti has returned (a call whose context ends\n// returns at once, and the commands may be written after that).\ntype PutArgs struct",
		"// The []byte arguments value and tags are not copied: the command refers to\n// them, so do not modify them once the command is made (a Do whose context ends\n// returns at once, and the command may be written after that).\nfunc PutCommand(",
	} {
		if !strings.Contains(code, want) {
			t.Errorf("put.lua.go lacks\n%s\n--- generated:\n%s", want, code)
		}
	}
	src = "-- @arg raw bytes\n-- @return none\nreturn ARGV[1]\n"
	out, err = Generate("generated", []File{{Path: "scripts/echo.lua", Source: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "// The []byte argument raw is sent without a copy: do not modify it after the\n// call, even once Echo has returned (a call whose context ends returns at once,\n// and the command may be written after that).\nfunc Echo("; !strings.Contains(string(out["echo.lua.go"]), want) {
		t.Errorf("echo.lua.go lacks\n%s\n--- generated:\n%s", want, out["echo.lua.go"])
	}
}
