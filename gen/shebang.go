package gen

import (
	"strconv"
	"strings"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// scriptFlags are the flags Redis 7.0 reads on a script's shebang line
// (#!lua flags=...), in the order of its scripts_flags_def.
var scriptFlags = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// shebangWord is one word of a shebang line as Redis splits it.
type shebangWord struct {
	text string
	off  int // byte offset in the line of its first byte
	// quoted is set when the word is written with quotes: its text is then
	// not the bytes at off, and positions inside it are not known.
	quoted bool
}

// shebangSplitError is a shebang line Redis cannot split into words.
type shebangSplitError struct {
	off      int  // of the opening quote (unclosed), or of what follows the closing one
	unclosed bool // else a closing quote is followed by more text
}

// splitShebang splits a shebang line into words as Redis 7.0 does
// (sdssplitargs): words are separated by spaces, tabs and line ends (a
// vertical tab or form feed is skipped between words but is part of a word),
// may be quoted ("..." with C escapes, '...' with \'), and the line ends at
// a NUL byte. Redis refuses a line it cannot split.
func splitShebang(line string) ([]shebangWord, *shebangSplitError) {
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' }
	var words []shebangWord
	i := 0
	for {
		for at(i) != 0 && isSpace(at(i)) {
			i++
		}
		if at(i) == 0 {
			return words, nil
		}
		w := shebangWord{off: i}
		var b []byte
		inq, insq, quote := false, false, 0
		for done := false; !done; {
			c := at(i)
			switch {
			case inq:
				switch {
				case c == '\\' && at(i+1) == 'x' && isHexDigit(at(i+2)) && isHexDigit(at(i+3)):
					b = append(b, hexValue(at(i+2))<<4|hexValue(at(i+3)))
					i += 3
				case c == '\\' && at(i+1) != 0:
					i++
					e := at(i)
					switch e {
					case 'n':
						e = '\n'
					case 'r':
						e = '\r'
					case 't':
						e = '\t'
					case 'b':
						e = '\b'
					case 'a':
						e = '\a'
					}
					b = append(b, e)
				case c == '"':
					if at(i+1) != 0 && !isSpace(at(i+1)) {
						return words, &shebangSplitError{off: i + 1}
					}
					done = true
				case c == 0:
					return words, &shebangSplitError{off: quote, unclosed: true}
				default:
					b = append(b, c)
				}
			case insq:
				switch {
				case c == '\\' && at(i+1) == '\'':
					i++
					b = append(b, '\'')
				case c == '\'':
					if at(i+1) != 0 && !isSpace(at(i+1)) {
						return words, &shebangSplitError{off: i + 1}
					}
					done = true
				case c == 0:
					return words, &shebangSplitError{off: quote, unclosed: true}
				default:
					b = append(b, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq, quote, w.quoted = true, i, true
				case '\'':
					insq, quote, w.quoted = true, i, true
				default:
					b = append(b, c)
				}
			}
			if at(i) != 0 {
				i++
			}
		}
		w.text = string(b)
		words = append(words, w)
	}
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexValue(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// checkShebang reads the flags of a shebang line as Redis 7.0 does, and
// reports what Redis would refuse at the word or flag it refuses. It returns
// the flags in file order without duplicates; ok is false when the line has
// an error (Redis would refuse the script, so its flags are not known).
func checkShebang(sh *parse.Shebang, at, warn func(parse.Pos, string, ...any)) (flags []string, ok bool) {
	pos := func(off int) parse.Pos { return parse.Pos{Line: sh.Pos.Line, Col: sh.Pos.Col + off} }
	const hint = "write the line as #!lua flags=name,name (no quotes)"
	words, serr := splitShebang(sh.Text)
	if serr != nil {
		// sdssplitargs fails: Redis takes it as no engine at all.
		what := "a closing quote is followed by more text"
		if serr.unclosed {
			what = "a quote is not closed"
		}
		at(pos(serr.off), "the #! line cannot be split into words (%s): Redis refuses the script (\"ERR Invalid engine in script shebang\"); %s", what, hint)
		return nil, false
	}
	ok = true
	engine := words[0] // the line starts with "#!": there is a word
	if engine.text != "#!lua" {
		fix := "start the line with #!lua"
		if engine.text == "#!" && len(words) > 1 && words[1].text == "lua" {
			fix = "write #!lua, without a space"
		}
		at(pos(engine.off), "%s is not a script engine Redis runs: Redis refuses the script (\"ERR Unexpected engine in script shebang: %s\"); %s", quoteWord(engine), redisText(engine.text), fix)
		// Redis reads no further, and what follows is no Lua option.
		return nil, false
	}
	first := map[string]parse.Pos{}
	for _, w := range words[1:] {
		value, isFlags := strings.CutPrefix(w.text, "flags=")
		if !isFlags {
			at(pos(w.off), "unknown option %s on the #!lua line: Redis refuses the script (\"ERR Unknown lua shebang option: %s\"); %s", quoteWord(w), redisText(w.text), optionHint(w.text))
			ok = false
			continue
		}
		if value == "" {
			continue // flags= sets no flag
		}
		off := len("flags=")
		for _, f := range strings.Split(value, ",") {
			p := pos(w.off)
			if !w.quoted {
				p = pos(w.off + off)
			}
			off += len(f) + 1
			switch {
			case f == "":
				at(p, "empty script flag in %s: Redis refuses the script (\"ERR Unexpected flag in script shebang: \"); separate flags with one comma and no spaces (flags=allow-oom,no-writes)", quoteWord(w))
				ok = false
				continue
			case !knownFlag(f):
				fix := "the flags are " + strings.Join(scriptFlags[:len(scriptFlags)-1], ", ") + " and " + scriptFlags[len(scriptFlags)-1]
				if s := suggestFlag(f); s != "" {
					fix = "did you mean " + s + "?"
				}
				at(p, "unknown script flag %q: Redis refuses the script (\"ERR Unexpected flag in script shebang: %s\"); %s", f, redisText(f), fix)
				ok = false
				continue
			}
			if prev, dup := first[f]; dup {
				// Redis accepts a flag given twice (the flags are a bit
				// set), so this is no error; it is a warning because the
				// second one does nothing and was likely meant as another
				// flag. -strict refuses it.
				warn(p, "script flag %s is given twice (first at column %d): Redis accepts it, but the second has no effect; remove it", f, prev.Col)
				continue
			}
			first[f] = p
			flags = append(flags, f)
		}
	}
	return flags, ok
}

// quoteWord is a shebang word for a message: quoted, with control
// characters escaped.
func quoteWord(w shebangWord) string { return strconv.Quote(w.text) }

// redisText is text as Redis writes it in an error reply, with control
// characters escaped for the terminal.
func redisText(s string) string {
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

func knownFlag(f string) bool {
	for _, k := range scriptFlags {
		if f == k {
			return true
		}
	}
	return false
}

// suggestFlag returns the script flag closest to f (case and _ for -
// ignored): at most two edits away, and fewer than half the name.
func suggestFlag(f string) string {
	norm := strings.ReplaceAll(strings.ToLower(f), "_", "-")
	best, bestD := "", 3
	for _, k := range scriptFlags {
		if d := editDistance(norm, k); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD > len(norm)/2 {
		return ""
	}
	return best
}

// optionHint says what to write instead of an unknown shebang option: a
// misspelt flags=, or a flag without flags= (a space after a comma ends the
// flags= word).
func optionHint(word string) string {
	const only = "the only option is flags=name,name (e.g. #!lua flags=no-writes,allow-oom)"
	if key, value, ok := strings.Cut(word, "="); ok {
		if editDistance(strings.ToLower(key), "flags") <= 2 {
			return "did you mean flags=" + value + "?"
		}
		return only
	}
	if editDistance(strings.ToLower(word), "flags") <= 2 {
		return "write flags= and the flags as one word: flags=name,name"
	}
	if s := suggestFlag(word); s != "" {
		return "did you mean flags=" + s + "? (flags are written in one flags= word, separated by commas without spaces)"
	}
	return only
}
