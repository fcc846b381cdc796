package gen

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// File is one script file given to the generator.
type File struct {
	Path   string // as shown to users and in generated headers, e.g. scripts/mutex_acquire.lua
	Source []byte
}

// scriptInfo keeps positions the package-level checks report at.
type scriptInfo struct {
	s              *Script
	namePos        parse.Pos
	errorPos       map[string]parse.Pos
	keyPos, argPos []parse.Pos // of each of s.Keys and s.Args
}

var errorCodeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// clientCodes are the starts of an error reply rueidis acts on itself
// instead of handing it to the caller, as it matches them (by prefix), and
// what it does.
var clientCodes = []struct{ prefix, does string }{
	{"NOSCRIPT", "it takes the reply for a script missing from the cache and runs the script again with EVAL, repeating its writes"},
	{"MOVED", "on a cluster client it takes the reply for a redirection and sends the script again to the node the message's third word names (it panics when there is none)"},
	{"ASK", "on a cluster client it takes the reply for a redirection and sends the script again to the node the message's third word names (it panics when there is none)"},
	{"TRYAGAIN", "on a cluster client rueidis sends the script again, repeating its writes"},
	{"CLUSTERDOWN", "on a cluster client rueidis sends the script again, repeating its writes"},
	{"LOADING", "on a cluster client, or for a @retryable or @readonly script, rueidis sends the script again, repeating its writes"},
	{"REDIRECT", "a client with Standalone.EnableRedirect (Valkey 8) takes the reply for a redirection to a new primary, the message's second word, and sends the script there again"},
}

// clientCode says why an @error code never reaches the callers as declared,
// "" when it does.
func clientCode(code string) string {
	if code == "ERR" {
		return "is Redis's generic error prefix, which rueidis takes off the message: the callers never see the code, and errors.Is never matches ErrErr"
	}
	for _, c := range clientCodes {
		if strings.HasPrefix(code, c.prefix) {
			return fmt.Sprintf("starts with %s, which rueidis acts on itself: %s", c.prefix, c.does)
		}
	}
	return ""
}

// buildScript parses and checks one file, building its model.
func buildScript(file File) (*scriptInfo, []Error) {
	var errs []Error
	at := func(pos parse.Pos, format string, args ...any) {
		errs = append(errs, errAt(file.Path, pos, format, args...))
	}
	pf, perrs := parse.Parse(file.Path, file.Source)
	for _, e := range perrs {
		at(e.Pos, "%s", e.Msg)
	}
	sum := sha1.Sum(file.Source)
	doc := make([]string, len(pf.Doc))
	for i, l := range pf.Doc {
		doc[i] = commentText(l)
	}
	s := &Script{
		File:   file.Path,
		Doc:    doc,
		Source: string(file.Source),
		SHA1:   hex.EncodeToString(sum[:]),
	}
	info := &scriptInfo{s: s, namePos: parse.Pos{Line: 1, Col: 1}, errorPos: map[string]parse.Pos{}}

	if msg := checkFileName(path.Base(file.Path)); msg != "" {
		at(parse.Pos{Line: 1, Col: 1}, "%s", msg)
	}
	base := strings.TrimSuffix(path.Base(file.Path), ".lua")
	s.Name = camel(base)

	rules := scriptRules{errorPos: info.errorPos}
	var (
		keyPos, argPos []parse.Pos
		seen           = map[string]parse.Pos{}
		haveName       bool
		haveReturn     bool
		// A malformed @key or @arg leaves the count unknown: its KEYS or
		// ARGV uses are then not checked, to report only the cause.
		broken = map[string]bool{}
	)
	once := func(d parse.Directive) bool {
		if p, dup := seen[d.Name]; dup {
			at(d.Pos, "duplicate @%s (first at line %d)", d.Name, p.Line)
			return false
		}
		seen[d.Name] = d.Pos
		return true
	}
	for _, d := range pf.Directives {
		ws := d.Words()
		switch d.Name {
		case "name":
			if !once(d) {
				continue
			}
			if len(ws) == 0 {
				at(d.Pos, "@name needs a name")
				continue
			}
			if !isExportedIdent(ws[0].Text) {
				at(ws[0].Pos, "invalid @name %q: want an exported Go identifier", ws[0].Text)
				continue
			}
			s.Name, info.namePos, haveName = ws[0].Text, ws[0].Pos, true
		case "key", "arg":
			if len(ws) == 0 {
				at(d.Pos, "@%s needs a name", d.Name)
				broken[d.Name] = true
				continue
			}
			name, variadic := strings.CutSuffix(ws[0].Text, "...")
			if !isIdent(name) {
				at(ws[0].Pos, "invalid %s name %q", d.Name, ws[0].Text)
				broken[d.Name] = true
				continue
			}
			if msg := goIdentErr(name); msg != "" {
				at(ws[0].Pos, "invalid %s name %q: %s", d.Name, ws[0].Text, msg)
				broken[d.Name] = true
				continue
			}
			p := Param{Name: name, Type: Type{Kind: String}, Variadic: variadic}
			descFrom := 1
			if d.Name == "arg" {
				if len(ws) < 2 {
					at(d.Pos, "@arg %s needs a type", ws[0].Text)
					broken[d.Name] = true
					continue
				}
				t, err := parseArgType(ws[1].Text)
				if err != nil {
					at(ws[1].Pos, "%v", err)
					broken[d.Name] = true
					continue
				}
				p.Type = t
				descFrom = 2
			}
			p.Doc = commentText(joinWords(ws[descFrom:]))
			if d.Name == "key" {
				if n := len(s.Keys); n > 0 && s.Keys[n-1].Variadic {
					at(keyPos[n-1], "variadic key %q must be the last key", s.Keys[n-1].Name)
					broken[d.Name] = true
				}
				s.Keys, keyPos = append(s.Keys, p), append(keyPos, ws[0].Pos)
			} else {
				if n := len(s.Args); n > 0 && s.Args[n-1].Variadic {
					at(argPos[n-1], "variadic arg %q must be the last arg", s.Args[n-1].Name)
					broken[d.Name] = true
				}
				s.Args, argPos = append(s.Args, p), append(argPos, ws[0].Pos)
			}
		case "return":
			if !once(d) {
				continue
			}
			haveReturn = true
			if d.Text == "" {
				at(d.Pos, "@return needs a type")
				continue
			}
			typ, _, err := splitReturn(d.Text)
			if err == nil {
				s.Return, err = parseReplyType(typ)
			}
			if err != nil {
				at(d.TextPos, "%v", err)
				continue
			}
			rules.ret, rules.haveReturn = s.Return, true
		case "error":
			if len(ws) == 0 {
				at(d.Pos, "@error needs a code and a message")
				continue
			}
			code := ws[0].Text
			if !errorCodeRE.MatchString(code) {
				at(ws[0].Pos, "invalid error code %q: want UPPER_SNAKE_CASE", code)
				continue
			}
			if len(ws) < 2 {
				at(d.Pos, "@error %s needs a message", code)
				continue
			}
			if why := clientCode(code); why != "" {
				at(ws[0].Pos, "@error %s %s; declare another code", code, why)
			}
			if p, dup := info.errorPos[code]; dup {
				at(ws[0].Pos, "duplicate @error %s (first at line %d)", code, p.Line)
				continue
			}
			info.errorPos[code] = ws[0].Pos
			s.Errors = append(s.Errors, ErrorDecl{Code: code, Text: joinWords(ws[1:])})
		case "commands":
			if !once(d) {
				continue
			}
			if len(ws) == 0 {
				at(d.Pos, "@commands needs the command names a dynamic redis.call may run (e.g. @commands publish spublish)")
				continue
			}
			rules.commandsPos = d.Pos
			for _, w := range ws {
				if _, ok := lookupCommand(w.Text); !ok {
					if h := splitSubcommandHint(w.Text); h != "" {
						at(w.Pos, "unknown Redis command %q in @commands: %s", w.Text, h)
					} else if s := suggestCommand(w.Text); s != "" {
						at(w.Pos, "unknown Redis command %q in @commands: did you mean %s?", w.Text, s)
					} else {
						at(w.Pos, "unknown Redis command %q in @commands", w.Text)
					}
					continue
				}
				rules.commands = append(rules.commands, w.Text)
			}
		case "cluster-unsafe":
			if once(d) {
				rules.clusterUnsafe = true
			}
		case "readonly":
			if once(d) {
				s.ReadOnly = true
			}
		case "retryable":
			if once(d) {
				s.Retryable = true
			}
		default:
			at(d.Pos, "unknown directive @%s", d.Name)
		}
	}
	if !haveName && !isExportedIdent(s.Name) {
		at(parse.Pos{Line: 1, Col: 1}, "file name %q gives no valid script name: add @name", path.Base(file.Path))
	}
	if !haveReturn {
		at(parse.Pos{Line: 1, Col: 1}, `missing @return (use "@return none" for a script without a reply)`)
	}

	// Parameter names become Go parameters and struct fields.
	goNames := map[string]string{}
	for i, p := range append(append([]Param{}, s.Keys...), s.Args...) {
		pos := append(append([]parse.Pos{}, keyPos...), argPos...)[i]
		g := camel(p.Name)
		if prev, dup := goNames[g]; dup {
			if prev == p.Name {
				at(pos, "duplicate parameter name %q", p.Name)
			} else {
				at(pos, "parameter names %q and %q are the same in Go (%s)", prev, p.Name, g)
			}
			continue
		}
		goNames[g] = p.Name
	}

	info.keyPos, info.argPos = keyPos, argPos

	if pf.Shebang != nil {
		warn := func(pos parse.Pos, format string, args ...any) {
			e := errAt(file.Path, pos, format, args...)
			e.Warning = true
			errs = append(errs, e)
		}
		flags, ok := checkShebang(pf.Shebang, at, warn)
		s.Flagged, s.Flags = true, flags
		rules.noWrites = slices.Contains(flags, "no-writes")
		rules.noCluster = slices.Contains(flags, "no-cluster")
		if ok && s.ReadOnly && !rules.noWrites {
			at(pf.Shebang.Pos, "the #!lua line has no flag no-writes, but @readonly (line %d) makes the callers use EVALSHA_RO, which Redis refuses for such a script (\"ERR Can not execute a script with write flag using *_ro command.\"): add flags=no-writes to the #!lua line, or drop the line", seen["readonly"].Line)
		}
		// Without a #! line Redis lets a script reach keys of several slots
		// (those its node serves); with one, only with allow-cross-slot-keys.
		if ok && rules.clusterUnsafe && !slices.Contains(flags, "allow-cross-slot-keys") && !slices.Contains(flags, "no-cluster") {
			warn(pf.Shebang.Pos, "the #!lua line has no flag allow-cross-slot-keys, but @cluster-unsafe (line %d) says the script reaches keys not passed in KEYS: in Redis Cluster such a script fails when they hash to another slot than its first key (\"Script attempted to access keys that do not hash to the same slot\"); add allow-cross-slot-keys (or no-cluster, for a script not run on Cluster), or keep those keys in the slot of KEYS with a hash tag", seen["cluster-unsafe"].Line)
		}
	}

	if pf.SyntaxError {
		// Everything else would be a consequence of the syntax error.
		return info, errs
	}
	if !broken["key"] {
		checkUses(file.Path, "key", "KEYS", s.Keys, keyPos, pf.Keys, &errs)
	}
	if !broken["arg"] {
		checkUses(file.Path, "arg", "ARGV", s.Args, argPos, pf.Argv, &errs)
	}
	rules.readOnly = s.ReadOnly
	if !broken["arg"] {
		rules.args = s.Args
		rules.argsKnown = true
	}
	if !broken["key"] {
		rules.keys = s.Keys
		rules.keysKnown = true
	}
	rules.changed = pf.Changed
	rules.measured = pf.Measured
	var extended []int
	rules.extended = &extended
	errs = append(errs, checkBody(file.Path, pf, rules)...)
	// An argument used as a command name may only take the @commands values:
	// the generated callers check it before sending, since a script that
	// fails half-way keeps the writes it made.
	// Any other command name (derived from an argument, read from Redis,
	// a variadic or non-string argument) could not be checked: refused.
	for _, c := range pf.Calls {
		if c.Command != "" || c.NoName != "" || c.NameNotString != "" || len(rules.commands) == 0 {
			continue // a literal name; one naming no command is refused already
		}
		if a, msg := commandArg(c.Dynamic, s.Args, broken["arg"]); msg != "" {
			at(c.CommandPos, "%s", msg)
		} else if a != nil {
			a.Commands = rules.commands
		}
	}
	markNumberArgs(s.Args, pf.NumberArgs)
	if !broken["key"] {
		markExtendedKeys(s.Keys, extended)
	}
	return info, errs
}

// markExtendedKeys sets Tagged on the keys the script extends on the right
// (KEYS[1] .. ':x'): the result stays in the key's slot only when the key
// has a hash tag, so on a Cluster the callers refuse a key without one
// (the script would fail at the extended key, after its earlier writes,
// or work only while both slots are on one node). An index the checker
// cannot tell (0) marks every key, and so does a dynamic one (-1): KEYS[i]
// and ipairs(KEYS) reach the fixed keys too.
func markExtendedKeys(keys []Param, uses []int) {
	for _, n := range uses {
		switch {
		case n <= 0:
			for i := range keys {
				keys[i].Tagged = true
			}
		case n > 0 && n <= len(keys) && !keys[n-1].Variadic:
			keys[n-1].Tagged = true
		case len(keys) > 0 && keys[len(keys)-1].Variadic:
			keys[len(keys)-1].Tagged = true
		}
	}
}

// markNumberArgs sets Number on the int64 and time (unix milliseconds)
// arguments the script reads as Lua numbers (doubles), whose callers then
// refuse a value an exact double cannot hold: the script would go on with
// other digits, silently. An index the walker cannot tell (0) marks every
// int64 and time argument.
func markNumberArgs(args []Param, uses []int) {
	mark := func(i int) {
		if k := args[i].Type.Kind; k == Int64 || k == Time {
			args[i].Number = true
		}
	}
	for _, n := range uses {
		switch {
		case n <= 0:
			for i := range args {
				mark(i)
			}
		case n <= len(args) && !args[n-1].Variadic:
			mark(n - 1)
		case len(args) > 0 && args[len(args)-1].Variadic:
			mark(len(args) - 1)
		}
	}
}

// commandArg returns the argument a dynamic command name is, when it is
// exactly one non-variadic string @arg, or why the generated callers could
// not check it against @commands. With brokenArgs (a malformed @arg, already
// reported) an index it cannot resolve gives neither.
func commandArg(v parse.Value, args []Param, brokenArgs bool) (*Param, string) {
	const how = "the generated callers can check a command name against @commands only when it is exactly one string @arg, passed as it is (redis.call(ARGV[n], ...))"
	idx, ok := strings.CutPrefix(v.Text, "ARGV[")
	n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
	if v.Source != parse.SourceArgv || v.Derived || !ok || err != nil || n < 1 {
		what := "command name " + v.Text
		if v.Source == parse.SourceUnknown {
			what = "the command name (" + v.Text + ")"
		}
		return nil, fmt.Sprintf("%s is not exactly one argument: %s", what, how)
	}
	if brokenArgs {
		return nil, ""
	}
	var a *Param
	switch {
	case n <= len(args):
		a = &args[n-1]
	case len(args) > 0 && args[len(args)-1].Variadic:
		a = &args[len(args)-1]
	default:
		return nil, "" // ARGV[n] beyond the declared args is reported with the uses
	}
	if a.Variadic {
		return nil, fmt.Sprintf("command name %s is part of the variadic @arg %s: %s; declare the command name as its own @arg before it", v.Text, a.Name, how)
	}
	if a.Type.Kind != String {
		return nil, fmt.Sprintf("command name %s is @arg %s %s: %s; declare it as @arg %s string", v.Text, a.Name, a.Type.String(), how, a.Name)
	}
	return a, ""
}

// commentText makes text safe for a Go line comment: valid UTF-8 without
// control characters.
func commentText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func joinWords(ws []parse.Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

// checkUses checks KEYS or ARGV uses against the declared keys or args.
func checkUses(file, what, table string, params []Param, pos []parse.Pos, uses []parse.Use, errs *[]Error) {
	n := len(params)
	variadic := n > 0 && params[n-1].Variadic
	used := make([]bool, n)
	useAll := func() {
		for i := range used {
			used[i] = true
		}
	}
	for _, u := range uses {
		switch {
		case u.BadLiteral != "":
			*errs = append(*errs, errAt(file, u.Pos, "%s[%s] is not a valid index: Lua arrays start at 1", table, u.BadLiteral))
		case u.Dynamic:
			if !variadic {
				*errs = append(*errs, errAt(file, u.Pos, "dynamic %s index needs a variadic @%s", table, what))
			}
			useAll()
		case u.Bare:
			useAll()
		case u.Index > n && !variadic:
			*errs = append(*errs, errAt(file, u.Pos, "%s[%d] is used but %s", table, u.Index, declared(what, n)))
		default:
			used[min(u.Index, n)-1] = true
		}
	}
	for i, p := range params {
		if used[i] {
			continue
		}
		ref := fmt.Sprintf("%s[%d]", table, i+1)
		if p.Variadic {
			ref += "..."
		}
		*errs = append(*errs, errAt(file, pos[i], "%s %q (%s) is declared but never used", what, p.Name, ref))
	}
}

func declared(what string, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("no %ss are declared", what)
	case 1:
		return fmt.Sprintf("only 1 %s is declared", what)
	}
	return fmt.Sprintf("only %d %ss are declared", n, what)
}

// reservedNames are the package-level names of the generated package's
// shared file.
var reservedNames = func() map[string]bool {
	m := map[string]bool{}
	for _, id := range sharedDecls() {
		m[id] = true
	}
	return m
}()

// checkPackage runs the checks that span scripts and returns the package
// sorted by script name.
func checkPackage(pkg string, infos []*scriptInfo) (*Package, []Error) {
	var errs []Error
	sort.Slice(infos, func(i, j int) bool { return infos[i].s.File < infos[j].s.File })

	type owner struct {
		what string
		file string
		pos  parse.Pos
	}
	// Every package-level identifier: exported and unexported ones share
	// one scope (ABC and Abc both declare abcSource).
	idents := map[string]owner{}
	for _, id := range sharedDecls() {
		idents[id] = owner{what: id + " of the generated package"}
	}
	describe := func(o owner) string {
		if o.file == "" {
			return o.what
		}
		return fmt.Sprintf("%s (%s:%d)", o.what, o.file, o.pos.Line)
	}
	claim := func(ident, what, file string, pos parse.Pos) bool {
		if prev, taken := idents[ident]; taken {
			errs = append(errs, errAt(file, pos, "%s clashes with %s", what, describe(prev)))
			return false
		}
		idents[ident] = owner{what, file, pos}
		return true
	}
	names := map[string]*scriptInfo{}
	type errOwner struct {
		code, text, file string
		pos              parse.Pos
	}
	codes := map[string]errOwner{}
	sentinels := map[string]errOwner{}
	for _, in := range infos {
		s := in.s
		if prev, dup := names[s.Name]; dup {
			errs = append(errs, errAt(s.File, in.namePos, "duplicate script name %q (also in %s:%d)", s.Name, prev.s.File, prev.namePos.Line))
			continue
		}
		names[s.Name] = in
		if reservedNames[s.Name] {
			errs = append(errs, errAt(s.File, in.namePos, "script name %q is reserved by the generated package", s.Name))
			continue
		}
		for _, id := range scriptDecls(s) {
			if !claim(id, fmt.Sprintf("generated name %s of script %q", id, s.Name), s.File, in.namePos) {
				break // one clash says it
			}
		}
		for _, e := range s.Errors {
			pos := in.errorPos[e.Code]
			if prev, ok := codes[e.Code]; ok {
				if prev.text != e.Text {
					errs = append(errs, errAt(s.File, pos, "@error %s has a different message in %s:%d: %q", e.Code, prev.file, prev.pos.Line, prev.text))
				}
				continue
			}
			codes[e.Code] = errOwner{e.Code, e.Text, s.File, pos}
			sentinel := "Err" + camel(e.Code)
			if reservedNames[sentinel] {
				errs = append(errs, errAt(s.File, pos, "@error %s is reserved by the generated package (%s)", e.Code, sentinel))
				continue
			}
			if prev, ok := sentinels[sentinel]; ok {
				errs = append(errs, errAt(s.File, pos, "@error codes %s and %s both become %s", prev.code, e.Code, sentinel))
				continue
			}
			sentinels[sentinel] = errOwner{e.Code, e.Text, s.File, pos}
			claim(sentinel, fmt.Sprintf("sentinel %s of @error %s", sentinel, e.Code), s.File, pos)
		}
	}
	// A parameter named like a package-level identifier would hide it in
	// the generated function that uses it (checkSlots, boolArg, the
	// script's own fooScript and fooDecode).
	for _, in := range infos {
		s := in.s
		for i, p := range append(append([]Param{}, s.Keys...), s.Args...) {
			what, pos := "@key", in.keyPos
			if i >= len(s.Keys) {
				what, pos, i = "@arg", in.argPos, i-len(s.Keys)
			}
			g := paramName(p.Name)
			if prev, taken := idents[g]; taken {
				errs = append(errs, errAt(s.File, pos[i], "%s %s is the Go parameter %s, which would hide %s: rename it", what, p.Name, g, describe(prev)))
			}
		}
	}
	p := &Package{Name: pkg}
	for _, in := range infos {
		p.Scripts = append(p.Scripts, in.s)
	}
	sort.SliceStable(p.Scripts, func(i, j int) bool { return p.Scripts[i].Name < p.Scripts[j].Name })
	return p, errs
}
