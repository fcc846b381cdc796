package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNameCollisions: names that would be declared twice in the generated
// package, or a parameter hiding a package-level name its function uses,
// are checker errors rather than Go that does not compile.
func TestNameCollisions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []File
		want  []string
	}{
		{
			name: "names differing in case",
			files: []File{
				{Path: "scripts/a.lua", Source: []byte("-- @name ABC\n-- @return none\n")},
				{Path: "scripts/b.lua", Source: []byte("-- @name Abc\n-- @return none\n")},
			},
			want: []string{`scripts/b.lua:1:10: generated name abcSource of script "Abc" clashes with generated name abcSource of script "ABC" (scripts/a.lua:1)`},
		},
		{
			name: "script named like a sentinel",
			files: []File{
				{Path: "scripts/a.lua", Source: []byte("-- @error NOT_HELD not held\n-- @return none\nreturn redis.error_reply('NOT_HELD x')\n")},
				{Path: "scripts/err_not_held.lua", Source: []byte("-- @return none\n")},
			},
			want: []string{`scripts/err_not_held.lua:1:1: generated name ErrNotHeld of script "ErrNotHeld" clashes with sentinel ErrNotHeld of @error NOT_HELD (scripts/a.lua:1)`},
		},
		{
			name: "script named like a shared type",
			files: []File{
				{Path: "scripts/a.lua", Source: []byte("-- @name Error\n-- @return none\n")},
			},
			want: []string{`scripts/a.lua:1:10: generated name DecodeError of script "Error" clashes with DecodeError of the generated package`},
		},
		{
			name: "key hides checkSlots",
			files: []File{
				{Path: "scripts/x.lua", Source: []byte("-- @key check_slots\n-- @key other\n-- @return none\nredis.call('MGET', KEYS[1], KEYS[2])\n")},
			},
			want: []string{`scripts/x.lua:1:9: @key check_slots is the Go parameter checkSlots, which would hide checkSlots of the generated package: rename it`},
		},
		{
			name: "arg hides boolArg",
			files: []File{
				{Path: "scripts/x.lua", Source: []byte("-- @arg bool_arg string\n-- @arg flag bool\n-- @return none\nreturn ARGV[1] .. ARGV[2]\n")},
			},
			want: []string{`scripts/x.lua:1:9: @arg bool_arg is the Go parameter boolArg, which would hide boolArg of the generated package: rename it`},
		},
		{
			name: "arg hides msArg",
			files: []File{
				{Path: "scripts/x.lua", Source: []byte("-- @arg ms_arg string\n-- @arg ttl duration\n-- @return none\nreturn ARGV[1] .. ARGV[2]\n")},
			},
			want: []string{`scripts/x.lua:1:9: @arg ms_arg is the Go parameter msArg, which would hide msArg of the generated package: rename it`},
		},
		{
			name: "key hides the script's own names",
			files: []File{
				{Path: "scripts/x.lua", Source: []byte("-- @key x_script\n-- @arg x_decode string\n-- @return none\nreturn redis.call('GET', KEYS[1]) .. ARGV[1]\n")},
			},
			want: []string{
				`scripts/x.lua:1:9: @key x_script is the Go parameter xScript, which would hide generated name xScript of script "X" (scripts/x.lua:1): rename it`,
				`scripts/x.lua:2:9: @arg x_decode is the Go parameter xDecode, which would hide generated name xDecode of script "X" (scripts/x.lua:1): rename it`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkFiles(t, tc.files...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checker output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeclaredNames keeps the names the checker reserves (scriptDecls,
// sharedDecls) in step with what the emitter declares.
func TestDeclaredNames(t *testing.T) {
	files := loadCase(t, "testdata/all")
	files = append(files, File{Path: "scripts/dyn.lua", Source: []byte("-- @key k\n-- @arg cmd string\n-- @arg b bool\n-- @arg d duration\n-- @commands get\n-- @error NOPE no\n-- @return {a string, b int64?}\nif ARGV[2] == '1' then return redis.error_reply('NOPE x') end\nredis.call(ARGV[1], KEYS[1] .. ARGV[3])\nreturn {'a', 1}\n")})
	var infos []*scriptInfo
	for _, f := range files {
		info, errs := buildScript(f)
		for _, e := range errs {
			if !e.Warning {
				t.Fatalf("%s: %v", f.Path, e)
			}
		}
		infos = append(infos, info)
	}
	pkg, errs := checkPackage("generated", infos)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	e := &emitter{pkg: pkg, helpers: map[string]bool{}}
	for _, h := range helperOrder {
		e.helpers[h] = true // every helper, used or not
	}
	declared := func(body []byte) []string {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", body, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					ids = append(ids, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						ids = append(ids, sp.Name.Name)
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							ids = append(ids, n.Name)
						}
					}
				}
			}
		}
		sort.Strings(ids)
		return ids
	}
	reserved := map[string]bool{}
	for _, s := range pkg.Scripts {
		for _, id := range scriptDecls(s) {
			reserved[id] = true
		}
		b, err := e.render(s.File, e.emitScriptFile(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range declared(b) {
			if !reserved[id] {
				t.Errorf("%s declares %s, missing from scriptDecls", s.File, id)
			}
		}
	}
	b, err := e.render("", e.emitSharedFile())
	if err != nil {
		t.Fatal(err)
	}
	want := sharedDecls()
	for _, s := range pkg.Scripts {
		for _, d := range s.Errors {
			want = append(want, sentinelName(d.Code))
		}
	}
	sort.Strings(want)
	want = dedup(want)
	if diff := cmp.Diff(want, declared(b)); diff != "" {
		t.Errorf("shared file declarations (-sharedDecls and sentinels +emitted):\n%s", diff)
	}
}

func dedup(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
