package gen

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/gen/parse"
)

// numericSetup makes the key of commands that read their options only when
// the key exists (a scan of a missing key answers before reading COUNT).
var numericSetup = map[string][]string{
	"HSCAN":  {"HSET", "{n}key", "f", "v"},
	"SSCAN":  {"SADD", "{n}key", "m"},
	"ZSCAN":  {"ZADD", "{n}key", "1", "m"},
	"LPOS":   {"RPUSH", "{n}key", "{n}element"},
	"LSET":   {"RPUSH", "{n}key", "a", "b"},
	"LINDEX": {"RPUSH", "{n}key", "a", "b"},
	"GETEX":  {"SET", "{n}key", "v"},
	// GEORADIUSBYMEMBER reads the radius after finding the member.
	"GEORADIUSBYMEMBER":    {"GEOADD", "{n}key", "1", "1", "{n}member"},
	"GEORADIUSBYMEMBER_RO": {"GEOADD", "{n}key", "1", "1", "{n}member"},
}

// numericFill are the words that complete the plain call of commands the
// table's words alone do not make one Redis runs (a unit; a shape, the
// center being the FROMLONLAT a token probe adds), in place of filler words.
var numericFill = map[string][]string{
	"GEORADIUS":      {"m"},
	"GEORADIUS_RO":   {"m"},
	"GEOSEARCH":      {"BYRADIUS", "1", "m"},
	"GEOSEARCHSTORE": {"BYRADIUS", "1", "m"},
	"BLMPOP":         {"{n}key", "LEFT"},
	"BZMPOP":         {"{n}key", "MIN"},
}

// TestNumericArgsAgreeWithServer checks numericArgs, which the checker's
// number rules rest on, against the test server. For every argument the
// table places as a number, a script calls the command with plain words ("1"
// for numbers, a key name otherwise) and then with other words in that place.
// Where the table says integer (or unix time), Redis must refuse "x", and
// "1.5" unless fractionOK lists the argument. Where it says double, Redis
// must refuse "x" and accept "1.5", and take "(1" exactly when openRangeOK
// lists the argument. A command that repeats a group of words after its
// options (ZADD) is called with one group, and with each of its options
// before it; Redis must accept each, and refuse an unknown word there. A
// command the plain call fails for (it needs data of a kind, or scripts may
// not run it) is left out; the common ones must be covered.
func TestNumericArgsAgreeWithServer(t *testing.T) {
	run := commandRunner(t, numericSetup)

	covered := map[string]bool{}
	var problems []string
	probe := func(words []string, at int, label, arg string, w argWord) {
		if err := run(words); err != nil {
			return // the plain call fails: nothing to learn here
		}
		covered[label] = true
		try := func(word string) ([]string, error) {
			probe := slices.Clone(words)
			probe[at] = word
			return probe, run(probe)
		}
		if probe, err := try("x"); err == nil {
			problems = append(problems, fmt.Sprintf("%s: Redis accepts %q as %s (%v); the checker would flag it", label, "x", w.name, probe))
		}
		if w.kind == 'd' || fractionOK[arg] {
			// Numbers strtod reads beyond a double, or too small for
			// one: Redis refuses them where it reads a double, and
			// takes them where it reads a long double or a score range.
			wd := w
			wd.kind = 'd'
			name := strings.TrimSuffix(arg, " "+w.name)
			for _, word := range []string{"1e400", "-1e400", "1e-400", "2e-324", "3e-324", "1e-310"} {
				lit := word
				var refused bool
				checkDouble(parse.Arg{Literal: &lit, Exact: true}, wd, label, name, nil, func(parse.Pos, string, ...any) { refused = true }, nil)
				probe, err := try(word)
				if refused != (err != nil) {
					problems = append(problems, fmt.Sprintf("%s: the checker refuses %q as %s: %v, Redis answers %v (%v)", label, word, w.name, refused, err, probe))
				}
			}
			covered[label+" double range"] = true
		}
		if w.kind == 'd' {
			if probe, err := try("1.5"); err != nil {
				problems = append(problems, fmt.Sprintf("%s: Redis refuses %q as %s (%v), which the table types as a double: %v", label, "1.5", w.name, probe, err))
			}
			if r, ok := coordRange[w.name]; ok && coordCommands[strings.TrimSuffix(arg, " "+w.name)] {
				for _, v := range []float64{r[0], r[1], r[0] - 1e-7, r[1] + 1e-7} {
					word := strconv.FormatFloat(v, 'f', -1, 64)
					lit := word
					var refused bool
					checkDouble(parse.Arg{Literal: &lit, Exact: true}, w, label, strings.TrimSuffix(arg, " "+w.name), nil, func(parse.Pos, string, ...any) { refused = true }, nil)
					probe, err := try(word)
					if refused != (err != nil) {
						problems = append(problems, fmt.Sprintf("%s: the checker refuses %q as %s: %v, Redis answers %v (%v)", label, word, w.name, refused, err, probe))
					}
				}
				covered[label+" range"] = true
			}
			if w.name == "timeout" {
				// Each side of the ends checkTimeout finds: whole
				// milliseconds below 0, and 2^63 of them (as Lua numbers:
				// TestLiteralsAgreeWithServer).
				for _, word := range []string{"0", "-0", "-0.001", "-0.0011", "-1", "-inf", "9223372036854775", "1e16", "inf"} {
					lit := word
					var refused bool
					checkTimeout(parse.Arg{Literal: &lit, Exact: true}, label, func(parse.Pos, string, ...any) { refused = true })
					probe, err := try(word)
					if refused != (err != nil) || err != nil && !strings.Contains(err.Error(), "timeout is negative") {
						problems = append(problems, fmt.Sprintf("%s: the checker refuses %q as %s: %v, Redis answers %v (%v)", label, word, w.name, refused, err, probe))
					}
				}
				covered[label+" range"] = true
			}
			// Go's number syntax (ParseInt's base 0) that strtod does
			// not read: an underscore, a 0b or 0o prefix.
			for _, word := range []string{"1_0", "0b1", "0o7", "0x1_0"} {
				probe, err := try(word)
				if numberText(word, openRangeOK[arg]) != (err == nil) {
					problems = append(problems, fmt.Sprintf("%s: the checker reads %q as a number: %v, Redis answers %v (%v)", label, word, numberText(word, openRangeOK[arg]), err, probe))
				}
			}
			switch probe, err := try("(1"); {
			case err == nil && !openRangeOK[arg]:
				problems = append(problems, fmt.Sprintf("%s: Redis accepts %q as %s (%v); list it in openRangeOK", label, "(1", w.name, probe))
			case err != nil && openRangeOK[arg]:
				problems = append(problems, fmt.Sprintf("%s: Redis refuses %q as %s (%v), yet openRangeOK lists it: %v", label, "(1", w.name, probe, err))
			}
			return
		}
		// Words string2ll refuses: the checker refuses each (as a string
		// literal) unless looseIntegers or fractionOK lists the argument,
		// and Redis must then refuse it too.
		loose := false
		for _, word := range []string{"01", "+1", "1.0", " 1", "1 ", "-0", "1e0"} {
			lit := word
			a := parse.Arg{Literal: &lit, Exact: true}
			probe, err := try(word)
			if err == nil && refusesInteger(strings.TrimSuffix(arg, " "+w.name), w.name, a) {
				problems = append(problems, fmt.Sprintf("%s: Redis accepts %q as %s (%v), which the checker refuses; list it in looseIntegers", label, word, w.name, probe))
			}
			loose = loose || err == nil && (word == "01" || word == "+1")
		}
		if looseIntegers[arg] && !loose {
			problems = append(problems, fmt.Sprintf("%s: Redis refuses \"01\" and \"+1\" as %s, yet looseIntegers lists it", label, w.name))
		}
		switch probe, err := try("1.5"); {
		case err == nil && !fractionOK[arg]:
			problems = append(problems, fmt.Sprintf("%s: Redis accepts %q as %s (%v); the checker would flag it", label, "1.5", w.name, probe))
		case err != nil && fractionOK[arg]:
			problems = append(problems, fmt.Sprintf("%s: Redis refuses %q as %s (%v), yet fractionOK lists it: %v", label, "1.5", w.name, probe, err))
		}
	}

	for _, name := range slices.Sorted(maps.Keys(numericArgs)) {
		info, ok := commandIndex[name]
		if !ok {
			t.Fatalf("%s is in numericArgs but not in the command table", name)
		}
		if info.flags&flagNoscript != 0 || noscriptOn70[name] || newerThan70(info.since) {
			continue
		}
		sig := numericArgs[name]
		cmd := strings.Split(name, "|")
		plain := func(w argWord) string {
			if w.kind != 0 || w.name == "min" || w.name == "max" {
				return "1" // a score range's min and max are typed strings for BYLEX's sake
			}
			return "{n}" + w.name
		}
		base := slices.Clone(cmd)
		for _, w := range sig.fixed {
			base = append(base, plain(w))
		}
		if sig.repeat != nil {
			group := slices.Clone(base)
			for _, w := range sig.repeat {
				group = append(group, plain(w))
			}
			for i, w := range sig.repeat {
				if w.kind != 0 {
					probe(group, len(base)+i, name+" "+w.name, name+" "+w.name, w)
				}
			}
			if run(group) != nil {
				continue
			}
			for _, kw := range append(slices.Clone(sig.pre), "NXX") {
				words := slices.Concat(base, []string{kw}, group[len(base):])
				switch err := run(words); {
				case kw == "NXX" && err == nil:
					problems = append(problems, fmt.Sprintf("%s: Redis accepts %v, an unknown word where its options go", name, words))
				case kw != "NXX" && err != nil:
					problems = append(problems, fmt.Sprintf("%s: Redis refuses its option %s (%v): %v", name, kw, words, err))
				case kw != "NXX":
					covered[name+" "+kw] = true
				}
			}
			// Every pair of options: Redis refuses exactly the pairs the
			// checker calls exclusive.
			for i, a := range sig.pre {
				for _, b := range sig.pre[i+1:] {
					words := slices.Concat(base, []string{a, b}, group[len(base):])
					ex, _ := excludes(name, sig, a, b)
					switch err := run(words); {
					case ex && err == nil:
						problems = append(problems, fmt.Sprintf("%s: Redis accepts %s and %s together (%v), which the checker refuses", name, a, b, words))
					case !ex && err != nil:
						problems = append(problems, fmt.Sprintf("%s: Redis refuses %s and %s together (%v): %v; list the pair in extraExclusive", name, a, b, words, err))
					case ex:
						covered[name+" "+a+" "+b] = true
					}
				}
			}
			// Words that are no whole number of groups (wholeGroups): one
			// group and part of another, or an option and part of a group;
			// Redis must refuse them with a syntax error.
			for _, words := range [][]string{
				slices.Concat(group, group[len(base):len(group)-1]),
				slices.Concat(base, sig.pre[:1], group[len(base):len(group)-1]),
			} {
				if err := run(words); err == nil || !strings.Contains(err.Error(), "syntax error") {
					problems = append(problems, fmt.Sprintf("%s: Redis does not refuse %v, which is no whole number of groups, with a syntax error: %v", name, words, err))
				} else {
					covered[name+" incomplete group"] = true
				}
			}
			if w := singleGroupWith[name]; w != "" {
				words := slices.Concat(base, []string{w}, group[len(base):], group[len(base):])
				if err := run(words); err == nil {
					problems = append(problems, fmt.Sprintf("%s: Redis accepts %s with two groups (%v)", name, w, words))
				} else {
					covered[name+" "+w+" twice"] = true
				}
			}
			continue
		}
		// Words the table does not place (the rest of the arity).
		want := info.arity
		if want < 0 {
			want = -want
		}
		fill, filled := numericFill[name]
		base = append(base, fill...)
		for len(base) < want && !filled {
			base = append(base, "{n}more")
		}
		for i, w := range sig.fixed {
			if w.kind != 0 {
				probe(base, len(cmd)+i, name+" "+w.name, name+" "+w.name, w)
			}
		}
		for token, vals := range sig.tokens {
			words := append(slices.Clone(base), token)
			for _, w := range vals {
				words = append(words, plain(w))
			}
			for i, w := range vals {
				if w.kind != 0 {
					probe(words, len(base)+1+i, name+" "+token+" "+w.name, name+" "+w.name, w)
				}
			}
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
	for _, must := range []string{
		"EXPIRE seconds", "PEXPIRE milliseconds", "EXPIREAT unix-time-seconds", "PEXPIREAT unix-time-milliseconds",
		"SETEX seconds", "PSETEX milliseconds", "SET EX seconds", "SET PX milliseconds", "SET EXAT unix-time-seconds",
		"SET PXAT unix-time-milliseconds", "GETEX EX seconds", "GETEX PX milliseconds", "INCRBY increment",
		"DECRBY decrement", "HINCRBY increment", "LRANGE start", "LRANGE stop", "ZINCRBY increment", "SCAN COUNT count",
		"ZRANGEBYSCORE LIMIT offset", "ZRANGEBYSCORE LIMIT count", "HSCAN COUNT count", "LPOS RANK rank",
		"ZADD score", "ZADD NX", "ZADD GT", "ZADD CH", "ZADD INCR", "GEOADD longitude", "GEOADD latitude",
		"ZADD NX XX", "ZADD GT LT", "ZADD GT NX", "ZADD LT NX", "ZADD INCR twice", "GEOADD NX XX",
		"ZADD incomplete group", "ZUNIONSTORE numkeys", "GEOADD longitude range", "GEOADD latitude range", "GEOADD incomplete group",
		"BLMPOP timeout range", "BZMPOP timeout range",
		"GEORADIUS longitude range", "GEORADIUS latitude range", "GEORADIUS_RO longitude range", "GEORADIUS_RO latitude range",
		"GEOSEARCH FROMLONLAT longitude range", "GEOSEARCH FROMLONLAT latitude range",
		"GEOSEARCHSTORE FROMLONLAT longitude range", "GEOSEARCHSTORE FROMLONLAT latitude range",
		"INCRBYFLOAT increment", "HINCRBYFLOAT increment", "ZCOUNT min", "ZRANGEBYSCORE max", "ZREMRANGEBYSCORE min",
	} {
		if !covered[must] {
			t.Errorf("%s was not checked against the server (its plain call failed)", must)
		}
	}
	t.Logf("%d arguments checked against the server", len(covered))
}
