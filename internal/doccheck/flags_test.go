package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flagMethods are the flag package's definers: the name is the first
// argument, or the second for the ...Var forms.
var flagMethods = map[string]int{
	"Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "String": 0, "Float64": 0, "Duration": 0, "Func": 0, "BoolFunc": 0,
	"BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "StringVar": 1, "Float64Var": 1, "DurationVar": 1,
	"TextVar": 1, "Var": 1,
}

// definedFlags returns the flag names the package in dir defines (its
// non-test files), through the flag package or a FlagSet.
func definedFlags(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files (%v)", dir, err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			i, ok := flagMethods[sel.Sel.Name]
			if !ok || len(call.Args) <= i {
				return true
			}
			if lit, ok := call.Args[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && s != "" {
					names[s] = true
				}
			}
			return true
		})
	}
	return names
}

// docCommand is one command line shown in the documentation.
type docCommand struct {
	where string // file:line
	pkg   string // the main package that runs it, relative to the module root
	args  []string
	// tool: shown as `go tool NAME`, which is the module's command only when
	// cmd/NAME exists (`go tool pprof` is not).
	tool bool
}

var (
	goRunCmd   = regexp.MustCompile(`\bgo run (?:\./|github\.com/scriptlock/scriptlock/)([\w./-]+)(.*)`)
	goToolCmd  = regexp.MustCompile(`\bgo tool ([\w-]+)(.*)`)
	makeArgs   = regexp.MustCompile(`\bmake ([\w-]+) ARGS=("[^"]*"|'[^']*'|\S+)`)
	cliCmd     = regexp.MustCompile(`^scriptlock( .*)$`)
	makeTarget = regexp.MustCompile(`(?m)^([\w-]+):.*\n(?:\t.*\n)*?\t\$\(GO\) run (\./[\w./-]+)[^\n]*\$\(ARGS\)`)
)

// shownCommands finds, in the code blocks and inline code of a Markdown
// file, the commands that run one of the module's programs: `go run ./...`,
// `go tool NAME` (a tool the module's cmd/NAME provides, as in a
// //go:generate line), `make TARGET ARGS=...` for a target that runs one, and
// `scriptlock ...`.
func shownCommands(file, text string, targets map[string]string) []docCommand {
	var cmds []docCommand
	add := func(line int, pkg, rest string, tool bool) {
		for _, end := range []string{"#", "|", "&&", ";"} { // a comment, the next command
			if i := strings.Index(rest, end); i >= 0 {
				rest = rest[:i]
			}
		}
		cmds = append(cmds, docCommand{where: file + ":" + strconv.Itoa(line), pkg: pkg, args: strings.Fields(rest), tool: tool})
	}
	scan := func(line int, code string, block bool) {
		code = strings.TrimSuffix(strings.TrimSpace(code), "\\")
		if m := goRunCmd.FindStringSubmatch(code); m != nil {
			add(line, "./"+strings.TrimSuffix(m[1], "/"), m[2], false)
		}
		if m := goToolCmd.FindStringSubmatch(code); m != nil {
			add(line, "./cmd/"+m[1], m[2], true)
		}
		if m := makeArgs.FindStringSubmatch(code); m != nil {
			if pkg, ok := targets[m[1]]; ok {
				add(line, pkg, strings.Trim(m[2], `"'`), false)
			}
		}
		if m := cliCmd.FindStringSubmatch(code); m != nil && block {
			add(line, "./cmd/scriptlock", m[1], false)
		}
	}
	in := false
	inline := regexp.MustCompile("`([^`\n]+)`")
	var cont string // a block line continued with a backslash
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if in {
			if strings.HasSuffix(l, "\\") {
				cont += strings.TrimSuffix(l, "\\") + " "
				continue
			}
			scan(i+1, cont+l, true)
			cont = ""
			continue
		}
		for _, m := range inline.FindAllStringSubmatch(l, -1) {
			scan(i+1, m[1], false)
		}
	}
	return cmds
}

var flagArg = regexp.MustCompile(`^--?([a-zA-Z][\w-]*)`)

// TestDocCommandFlags: every flag a documented command line passes to one of
// the module's programs (`go run ./examples/recharge/cmd/demo -orders 500`,
// `make demo ARGS=-postgres`, `scriptlock list --prefix order:`), and every
// `--flag` named in the text, is a flag that program defines.
func TestDocCommandFlags(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{}
	for _, m := range makeTarget.FindAllStringSubmatch(string(makefile), -1) {
		targets[m[1]] = m[2]
	}
	if targets["demo"] == "" {
		t.Fatal("Makefile: no demo target running a program with $(ARGS)")
	}
	flags := map[string]map[string]bool{}
	lookup := func(pkg string) (map[string]bool, bool) {
		if f, ok := flags[pkg]; ok {
			return f, f != nil
		}
		// A page may show a command run from a module of its own (bench/).
		for _, base := range []string{"", "bench", "otel"} {
			dir := filepath.Join(root, base, pkg)
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				flags[pkg] = definedFlags(t, dir)
				return flags[pkg], true
			}
		}
		flags[pkg] = nil
		return nil, false
	}
	checked := 0
	for _, f := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range shownCommands(f, string(text), targets) {
			defined, ok := lookup(c.pkg)
			if !ok && c.tool {
				continue // another tool than the module's
			}
			if !ok {
				t.Errorf("%s: runs %s, which is not a directory of the module", c.where, c.pkg)
				continue
			}
			for _, a := range c.args {
				m := flagArg.FindStringSubmatch(a)
				if m == nil {
					continue
				}
				checked++
				if !defined[m[1]] {
					t.Errorf("%s: %s has no flag -%s (shown as %q)", c.where, c.pkg, m[1], a)
				}
			}
		}
		// Double-dash flags named in the text are the scriptlock command's.
		cli, _ := lookup("./cmd/scriptlock")
		for _, m := range regexp.MustCompile("`--([a-z][a-z0-9-]*)").FindAllStringSubmatchIndex(string(text), -1) {
			name := string(text[m[2]:m[3]])
			checked++
			if !cli[name] {
				line := strings.Count(string(text[:m[0]]), "\n") + 1
				t.Errorf("%s:%d: `--%s`: the scriptlock command has no such flag", f, line, name)
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked %d flags in the documentation; expected the demo's, the recharge service's and the scriptlock command's", checked)
	}
	t.Logf("checked %d documented flags", checked)
}

// The checker finds a flag a program does not define.
func TestDocCommandFlagsFindsDrift(t *testing.T) {
	text := "```sh\ngo run ./examples/recharge/cmd/demo -orders 5 -orderz 6   # comment -nope\nscriptlock list --json | jq -r .\n```\n" +
		"Run `make demo ARGS=\"-postgres -fast\"`.\n" +
		"```go\n//go:generate go tool scriptgen -in scripts -output gen -pkg gen\n```\n"
	cmds := shownCommands("x.md", text, map[string]string{"demo": "./examples/recharge/cmd/demo"})
	if len(cmds) != 4 || strings.Join(cmds[1].args, " ") != "list --json" ||
		cmds[3].pkg != "./cmd/scriptgen" || !cmds[3].tool {
		t.Fatalf("found %+v; want the demo, scriptlock list --json, make demo and go tool scriptgen", cmds)
	}
	gen := cmds[3]
	cmds = append(cmds[:1], cmds[2])
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	defined := definedFlags(t, filepath.Join(root, "examples", "recharge", "cmd", "demo"))
	var unknown []string
	for _, c := range cmds {
		for _, a := range c.args {
			if m := flagArg.FindStringSubmatch(a); m != nil && !defined[m[1]] {
				unknown = append(unknown, m[1])
			}
		}
	}
	if strings.Join(unknown, " ") != "orderz fast" {
		t.Errorf("unknown flags %q; want orderz and fast", unknown)
	}
	defined = definedFlags(t, filepath.Join(root, "cmd", "scriptgen"))
	unknown = nil
	for _, a := range gen.args {
		if m := flagArg.FindStringSubmatch(a); m != nil && !defined[m[1]] {
			unknown = append(unknown, m[1])
		}
	}
	if strings.Join(unknown, " ") != "output" {
		t.Errorf("unknown scriptgen flags %q; want output", unknown)
	}
}

// TestCLIFlagsDocumented: every flag of the scriptlock command is named
// (`--flag`) on its page, docs/operations.md.
func TestCLIFlagsDocumented(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	defined := definedFlags(t, filepath.Join(root, "cmd", "scriptlock"))
	if len(defined) < 10 {
		t.Fatalf("found %d flags of the scriptlock command; expected its common and command flags", len(defined))
	}
	for name := range defined {
		if !strings.Contains(string(page), "`--"+name+"`") && !regexp.MustCompile("`[^`\n]*--"+regexp.QuoteMeta(name)+`\b[^`+"`"+`\n]*`+"`").Match(page) {
			t.Errorf("docs/operations.md never names the scriptlock flag --%s", name)
		}
	}
}
