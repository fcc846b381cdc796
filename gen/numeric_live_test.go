package gen

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
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
}

// TestNumericArgsAgreeWithServer checks numericArgs, which the checker's
// integer rules rest on, against the test server. For every argument the
// table places as an integer (or unix time), a script calls the command with
// plain words ("1" for numbers, a key name otherwise) and then with "x" and
// "1.5" in that place: Redis must refuse "x", and "1.5" unless fractionOK
// lists the argument. A command the plain call fails for (it needs data of
// a kind, or scripts may not run it) is left out; the common ones must be
// covered.
func TestNumericArgsAgreeWithServer(t *testing.T) {
	run := commandRunner(t, numericSetup)

	covered := map[string]bool{}
	var problems []string
	probe := func(words []string, at int, label, arg, what string) {
		if err := run(words); err != nil {
			return // the plain call fails: nothing to learn here
		}
		covered[label] = true
		for _, bad := range []string{"x", "1.5"} {
			probe := slices.Clone(words)
			probe[at] = bad
			err := run(probe)
			switch {
			case err == nil && (bad == "x" || !fractionOK[arg]):
				problems = append(problems, fmt.Sprintf("%s: Redis accepts %q as %s (%v); the checker would flag it", label, bad, what, probe))
			case err != nil && bad == "1.5" && fractionOK[arg]:
				problems = append(problems, fmt.Sprintf("%s: Redis refuses %q as %s (%v), yet fractionOK lists it: %v", label, bad, what, probe, err))
			}
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
		// Words the table does not place (the rest of the arity).
		want := info.arity
		if want < 0 {
			want = -want
		}
		for len(base) < want {
			base = append(base, "{n}more")
		}
		for i, w := range sig.fixed {
			if w.kind == 'i' || w.kind == 'u' {
				probe(base, len(cmd)+i, name+" "+w.name, name+" "+w.name, w.name)
			}
		}
		for token, vals := range sig.tokens {
			words := append(slices.Clone(base), token)
			for _, w := range vals {
				words = append(words, plain(w))
			}
			for i, w := range vals {
				if w.kind == 'i' || w.kind == 'u' {
					probe(words, len(base)+1+i, name+" "+token+" "+w.name, name+" "+w.name, w.name)
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
	} {
		if !covered[must] {
			t.Errorf("%s was not checked against the server (its plain call failed)", must)
		}
	}
	t.Logf("%d arguments checked against the server", len(covered))
}
