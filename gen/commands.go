package gen

//go:generate go run ./internal/cmdtable -in ../../shared/redis-commands/json -out commands_table.go

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// commandFlag is a command flag of Redis's command table.
type commandFlag uint32

// The flags cmdtable knows, in its order (gen/internal/cmdtable flagNames).
const (
	flagWrite commandFlag = 1 << iota
	flagReadonly
	flagNoscript
	flagMayReplicate
	flagPubsub
	flagBlocking
	flagDenyoom
	flagFast
	flagAdmin
	flagLoading
	flagStale
	flagNoMulti
	flagAllowBusy
	flagNoMandatoryKeys
	flagSkipMonitor
	flagSkipSlowlog
	flagNoAuth
	flagNoAsyncLoading
	flagAsking
	flagProtected
	flagTouchesArbitraryKeys
)

// flagWords are the flag names COMMAND INFO reports, by flag.
var flagWords = map[commandFlag]string{
	flagWrite: "write", flagReadonly: "readonly", flagNoscript: "noscript",
	flagMayReplicate: "may_replicate", flagPubsub: "pubsub", flagBlocking: "blocking",
	flagDenyoom: "denyoom", flagFast: "fast", flagAdmin: "admin", flagLoading: "loading",
	flagStale: "stale", flagNoMulti: "no_multi", flagAllowBusy: "allow_busy",
	flagNoMandatoryKeys: "no_mandatory_keys", flagSkipMonitor: "skip_monitor",
	flagSkipSlowlog: "skip_slowlog", flagNoAuth: "no_auth", flagNoAsyncLoading: "no_async_loading",
	flagAsking: "asking", flagProtected: "protected", flagTouchesArbitraryKeys: "touches_arbitrary_keys",
}

// replyKind is a set of RESP2 reply shapes a command may answer in a script.
type replyKind uint8

const (
	replyInt replyKind = 1 << iota
	replyStr           // bulk or status string (doubles arrive as strings)
	replyNil
	replyArr // arrays and maps (flat arrays)

	replyUnknown replyKind = 0 // no reply schema: nothing is checked
)

func (k replyKind) String() string {
	var parts []string
	for _, p := range []struct {
		k replyKind
		s string
	}{{replyInt, "an integer"}, {replyStr, "a string"}, {replyArr, "an array"}, {replyNil, "nil"}} {
		if k&p.k != 0 {
			parts = append(parts, p.s)
		}
	}
	switch len(parts) {
	case 0:
		return "an unknown reply"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// resp3Shape says how a command's reply differs when the script switched to
// RESP3 with redis.setresp(3): Redis then hands it to Lua, and from a return
// to the caller, in its RESP3 shape.
type resp3Shape uint8

const (
	resp3Map       resp3Shape = 1 << iota // a map, not a flat array (HGETALL)
	resp3Double                           // a double, not a string (ZSCORE)
	resp3Elems                            // an array of doubles or of arrays, not a flat one of strings (ZPOPMIN, ZMSCORE)
	resp3ElemsWith                        // that too, with an option (ZRANGE ... WITHSCORES)
)

// keySpec is one key specification of a command (Redis 7 key specs): where
// the search for keys begins and how keys are found from there. Positions
// count the command name as 0, as COMMAND INFO does.
type keySpec struct {
	// begin_search: index (beginIndex > 0), keyword, or unknown.
	beginIndex   int
	beginKeyword string
	startFrom    int
	unknownBegin bool
	// find_keys: range (lastKey, step, limit) or keynum, or unknown.
	lastKey, step, limit int
	keynum               bool
	keynumIdx, firstKey  int
	unknownFind          bool
}

// commandInfo is one row of the command table.
type commandInfo struct {
	name  string // upper case; subcommands as "CONTAINER|SUB"
	arity int    // N: exactly N words with the name; -N: at least N
	flags commandFlag
	since string
	reply replyKind
	keys  []keySpec
}

// argWord is one argument word of a command, as its specification types it.
type argWord struct {
	kind byte   // 'i' an integer, 'u' a unix time, 'd' a double, 0 anything else
	name string // the specification's name for it (milliseconds, unix-time-seconds)
}

// argSig places the number arguments (integers, unix times, doubles) of a
// command (or of a subcommand, after its name): fixed are the words after the
// name up to the first optional, repeated or keyword argument; tokens, the
// words each keyword takes after it (nil when the command has a repeated
// argument, in which a keyword's text could be data). A command that ends in
// a repeated group after optional keywords alone (ZADD key [NX|XX] ... score
// member [score member ...]) has those keywords in pre (alts, the groups of
// them that exclude each other) and the group's words in repeat instead.
type argSig struct {
	fixed  []argWord
	tokens map[string][]argWord
	pre    []string
	repeat []argWord
	alts   [][]string // the keywords of pre that exclude each other, by group
}

// groupSig says that a command's words after its fixed ones (after the
// name, and the subcommand's) are one group of words repeated; the names
// of the fixed words and of the group's are for messages.
type groupSig struct {
	fixed []string
	words []string
}

// optionSig says what may follow a command's fixed words (its first fixed
// words after the name, and the subcommand's): keywords only, each with its
// values.
type optionSig struct {
	fixed  int
	tokens map[string]optionToken
}

// optionToken is a keyword: how many values follow it, the version that
// added it ("" when the command always had it), and the group of
// alternatives it is one of (0: none), of which a call may give one.
type optionToken struct {
	values int
	since  string
	group  int
}

// argNode is one argument of a command's specification (its "arguments"),
// as checkGrammar matches a call's words against it.
type argNode struct {
	name  string // the specification's display name, else its name
	kind  byte   // 't' a pure token, 'i' an integer, 'w' another word, 'o' one of args, 'b' a block of args
	token string // the keyword before it ("" for none)
	// optional: it may be left out; multiple: it may repeat (multiToken:
	// with its keyword each time).
	optional, multiple, multiToken bool
	args                           []argNode
}

// noscriptOn70 are the commands Redis 7.0 refuses in scripts that the
// specifications (Redis 7.2 and later) allow: scripts must run on both.
// TestCommandTableMatchesServer checks the list against a 7.0 server.
var noscriptOn70 = map[string]bool{
	"BLMOVE":     true,
	"BLPOP":      true,
	"BRPOP":      true,
	"BRPOPLPUSH": true,
	"BZPOPMAX":   true,
	"BZPOPMIN":   true,
	"WAIT":       true,
}

// arityOn70 are the arities Redis 7.0 has where the specifications (Redis
// 7.2 and later) allow more arguments (ZRANK ... WITHSCORE): the arity
// differences TestCommandTableMatchesServer knows of.
var arityOn70 = map[string]int{
	"ZRANK":    3,
	"ZREVRANK": 3,
}

// newerThan70 reports whether a command added in version since (major.minor.patch)
// is missing from Redis 7.0.
func newerThan70(since string) bool {
	parts := strings.SplitN(since, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 7 || major == 7 && minor > 0
}

var commandIndex = func() map[string]*commandInfo {
	m := make(map[string]*commandInfo, len(commandTable))
	for i := range commandTable {
		m[commandTable[i].name] = &commandTable[i]
	}
	for name, k := range replyFixes {
		m[name].reply |= k
	}
	return m
}()

// replyFixes are replies Redis gives that the reply schemas of the
// specifications leave out: LMOVE replies nil for an empty source list (as
// RPOPLPUSH does, whose schema says so), and OBJECT FREQ, IDLETIME and
// REFCOUNT reply nil for a missing key (as OBJECT ENCODING does).
var replyFixes = map[string]replyKind{
	"LMOVE":           replyNil,
	"OBJECT|FREQ":     replyNil,
	"OBJECT|IDLETIME": replyNil,
	"OBJECT|REFCOUNT": replyNil,
}

// hasSubcommands reports whether name is a container command (OBJECT, XGROUP).
var hasSubcommands = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range commandTable {
		if i := strings.IndexByte(c.name, '|'); i > 0 {
			m[c.name[:i]] = true
		}
	}
	return m
}()

// lookupCommand finds a command by name, case-insensitively. A subcommand
// written as one name (OBJECT|ENCODING, the table's key for it) is no
// command Redis knows.
func lookupCommand(name string) (*commandInfo, bool) {
	if strings.Contains(name, "|") {
		return nil, false
	}
	c, ok := commandIndex[strings.ToUpper(name)]
	return c, ok
}

// splitSubcommandHint explains a name that joins a command and its
// subcommand (OBJECT|ENCODING); "" for any other name.
func splitSubcommandHint(name string) string {
	cmd, sub, ok := strings.Cut(strings.ToUpper(name), "|")
	if _, known := commandIndex[cmd+"|"+sub]; !ok || !known {
		return ""
	}
	return fmt.Sprintf("write the subcommand as its own argument: redis.call('%s', '%s', ...)", cmd, sub)
}

// arityOK reports whether a call of n words (name included) fits arity;
// atLeast means the count is a minimum (the last argument expands to one or
// more values).
func arityOK(arity, n int, atLeast bool) bool {
	switch {
	case arity >= 0 && atLeast:
		return n <= arity
	case arity >= 0:
		return n == arity
	case atLeast:
		return true
	default:
		return n >= -arity
	}
}

// arityText describes an arity for messages.
func arityText(arity int) string {
	if arity >= 0 {
		return strconv.Itoa(arity-1) + " argument" + plural(arity-1)
	}
	return "at least " + strconv.Itoa(-arity-1) + " argument" + plural(-arity-1)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// keyPositions returns the argument positions (1-based, the command name
// being 0) that hold keys in a call of n words. words[i] is the literal text
// of word i when it is a literal ("" otherwise). complete is false when a
// position could not be worked out (a key count or a keyword that is not a
// literal, or an unknown key spec): the positions found are still returned.
func (c *commandInfo) keyPositions(words []string, literal []bool) (pos []int, complete bool) {
	n := len(words)
	if c.name == "MIGRATE" {
		return migrateKeys(words, literal)
	}
	complete = true
	for _, ks := range c.keys {
		begin := -1
		switch {
		case ks.unknownBegin:
			complete = false
			continue
		case ks.beginKeyword != "":
			var unread int
			if begin, unread = ks.findKeyword(words, literal); unread > 0 {
				complete = false
			}
			if begin < 0 {
				continue
			}
		default:
			begin = ks.beginIndex
		}
		switch {
		case ks.unknownFind:
			complete = false
		case ks.keynum:
			ki := begin + ks.keynumIdx
			if ki >= n || !literal[ki] {
				complete = false
				continue
			}
			count, ok := string2ll(words[ki])
			if !ok || count < 0 {
				complete = false
				continue
			}
			first := begin + ks.firstKey
			for i := 0; int64(i) < count && first+i*max(ks.step, 1) < n; i++ {
				pos = append(pos, first+i*max(ks.step, 1))
			}
		default:
			last := ks.lastKey
			if last < 0 {
				last = n + last // -1: the last word, -2: the one before
				if ks.limit > 1 {
					// keys are 1/limit of what remains (XREAD STREAMS k1 k2 id1 id2)
					last = begin + (n-begin)/ks.limit - 1
				}
			} else {
				last = begin + last
			}
			for p := begin; p <= last && p < n; p += max(ks.step, 1) {
				pos = append(pos, p)
			}
		}
	}
	if c.name == "SORT" {
		// The spec leaves STORE's key unknown ("the keyword can appear
		// anywhere"); Redis finds it as sortGetKeys does: the word after
		// the last STORE, skipping LIMIT's two words and BY's and GET's
		// one. A word the checker cannot read where an option may be could
		// be another STORE: then no position is given.
		if store, unread := sortStore(words, literal); unread > 0 {
			complete = false
		} else if store > 0 {
			pos = append(pos, store)
		}
	}
	sort.Ints(pos)
	return pos, complete
}

// findKeyword looks for the keyword of a key spec that begins at one
// (beginKeyword) as Redis does: from startFrom on, or back from the end for
// a negative one. begin is the word after it (-1: not found); unread the
// word the checker cannot read where the search stopped (0: none), which may
// be the keyword.
func (ks keySpec) findKeyword(words []string, literal []bool) (begin, unread int) {
	n := len(words)
	step, i := 1, ks.startFrom
	if ks.startFrom < 0 {
		step, i = -1, n+ks.startFrom
	}
	for ; i < n && (step > 0 || i > 0); i += step {
		if !literal[i] {
			return -1, i
		}
		if strings.EqualFold(words[i], ks.beginKeyword) {
			return i + 1, 0
		}
	}
	return -1, 0
}

// sortStore finds SORT's STORE key as sortGetKeys does: the word after the
// last STORE, skipping LIMIT's two words and BY's and GET's one (0: none).
// unread is a word the checker cannot read where an option may be (0:
// none), which could be another STORE: then no position is known.
func sortStore(words []string, literal []bool) (store, unread int) {
	n := len(words)
	store = -1
	for i := 2; i < n; i++ {
		if i == store && !literal[i] {
			continue // the key itself
		}
		if !literal[i] {
			return -1, i
		}
		switch w := strings.ToUpper(words[i]); {
		case w == "LIMIT":
			i += 2
		case w == "GET" || w == "BY":
			i++
		case w == "STORE" && i+1 < n:
			store = i + 1
		}
	}
	return max(store, 0), 0
}

// migrateKeys is keyPositions of MIGRATE, whose key specs are incomplete:
// Redis finds its keys as migrateGetKeys does, the key (word 3) or, with
// KEYS among the options (which the key must then leave empty), the words
// after KEYS, skipping AUTH's one value and AUTH2's two.
func migrateKeys(words []string, literal []bool) (pos []int, complete bool) {
	n := len(words)
	for i := 6; i < n; i++ {
		if !literal[i] {
			return nil, false // it may be KEYS
		}
		switch strings.ToUpper(words[i]) {
		case "KEYS":
			if !literal[3] || words[3] != "" {
				return nil, false // Redis refuses the call
			}
			for p := i + 1; p < n; p++ {
				pos = append(pos, p)
			}
			return pos, true
		case "AUTH":
			i++
		case "AUTH2":
			i += 2
		}
	}
	if n > 3 {
		pos = append(pos, 3)
	}
	return pos, true
}

// suggestCommand returns the known command closest to name, or "".
func suggestCommand(name string) string {
	return suggest(name, "")
}

// suggestSubcommand returns the subcommand of container closest to sub, or "".
func suggestSubcommand(container, sub string) string {
	return suggest(sub, container+"|")
}

// suggest returns the closest table name with prefix (the prefix removed):
// at most two edits away, and fewer than half the name.
func suggest(name, prefix string) string {
	up := strings.ToUpper(name)
	best, bestD := "", 3
	for _, c := range commandTable {
		rest, ok := strings.CutPrefix(c.name, prefix)
		if !ok || strings.Contains(rest, "|") {
			continue
		}
		if d := editDistance(up, rest); d < bestD {
			best, bestD = rest, d
		}
	}
	if bestD > len(up)/2 {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
