package gen

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// optionSetup makes the key of commands that read their options only when
// the key exists (a scan of a missing key answers before reading them).
var optionSetup = map[string][]string{
	"HSCAN": {"HSET", "1", "f", "v"},
	"SSCAN": {"SADD", "1", "m"},
	"ZSCAN": {"ZADD", "1", "1", "m"},
}

// TestOptionArgsAgreeWithServer checks optionArgs and tokensNewerThan70,
// which checkOptions rests on, against the test server (Redis 7.0). For each
// command a script may run, a call with plain words ("1") must succeed, and
// then:
//   - with an unknown word where options go, Redis must refuse it, as the
//     checker says;
//   - with each keyword the checker takes as Redis 7.0's, Redis must not
//     refuse it the way it refuses an unknown word;
//   - with each keyword the checker says 7.0 lacks, Redis must refuse it;
//   - with two alternatives of one group, Redis must refuse the call unless
//     compatibleOptions lists the pair.
func TestOptionArgsAgreeWithServer(t *testing.T) {
	runErr := commandRunner(t, optionSetup)
	run := func(words []string) string {
		if err := runErr(words); err != nil {
			return err.Error()
		}
		return ""
	}

	names := slices.Sorted(maps.Keys(optionArgs))
	covered := map[string]bool{}
	var problems []string
	for _, name := range names {
		info, ok := commandIndex[name]
		if !ok {
			t.Fatalf("%s is in optionArgs but not in the command table", name)
		}
		if info.flags&flagNoscript != 0 || noscriptOn70[name] || newerThan70(info.since) {
			continue
		}
		sig := optionArgs[name]
		base := strings.Split(name, "|")
		for i := range sig.fixed {
			base = append(base, strconv.Itoa(i+1)) // distinct: COPY refuses a key onto itself
		}
		if want := info.arity; want > len(base) || -want > len(base) {
			continue // a keyword is required after the fixed words (GEORADIUS's unit): no plain call
		}
		if msg := run(base); msg != "" {
			continue // the plain call fails: nothing to learn here
		}
		unknown := run(append(slices.Clone(base), "NOSUCHOPTION"))
		if unknown == "" {
			if !looseOptions[name] {
				problems = append(problems, fmt.Sprintf("%s: Redis accepts the unknown option NOSUCHOPTION (%v); list it in looseOptions", name, base))
			}
			continue
		}
		if looseOptions[name] {
			problems = append(problems, fmt.Sprintf("%s: Redis refuses the unknown option NOSUCHOPTION (%s), yet looseOptions lists it", name, unknown))
		}
		covered[name] = true
		shown := strings.ReplaceAll(name, "|", " ")
		for token, tok := range sig.tokens {
			words := append(slices.Clone(base), token)
			for range tok.values {
				words = append(words, "1")
			}
			msg := run(words)
			since := tok.since
			if v, ok := tokensNewerThan70[shown+" "+token]; ok {
				since = v
			}
			switch {
			case newerThan70(since) && msg == "":
				problems = append(problems, fmt.Sprintf("%s %s: the checker says Redis 7.0 lacks it (since %s), but it accepts %v", shown, token, since, words))
			case !newerThan70(since) && msg == unknown:
				problems = append(problems, fmt.Sprintf("%s %s: Redis refuses %v as it refuses an unknown option (%s); list it in tokensNewerThan70", shown, token, words, msg))
			}
		}
	}
	// Alternatives of one group: Redis must refuse any two together, unless
	// compatibleOptions lists the pair.
	pairs := 0
	for _, name := range names {
		if !covered[name] {
			continue
		}
		sig := optionArgs[name]
		shown := strings.ReplaceAll(name, "|", " ")
		base := strings.Split(name, "|")
		for i := range sig.fixed {
			base = append(base, strconv.Itoa(i+1))
		}
		withValues := func(words []string, token string) []string {
			words = append(words, token)
			for range sig.tokens[token].values {
				words = append(words, "1")
			}
			return words
		}
		for a, ta := range sig.tokens {
			for b, tb := range sig.tokens {
				if a >= b || ta.group == 0 || ta.group != tb.group || newerThan70(ta.since) || newerThan70(tb.since) {
					continue
				}
				pairs++
				words := withValues(withValues(slices.Clone(base), a), b)
				msg := run(words)
				listed := compatibleOptions[optionPair(shown, a, b)]
				switch {
				case msg == "" && !listed:
					problems = append(problems, fmt.Sprintf("%s: Redis accepts %s and %s together (%v); list the pair in compatibleOptions", shown, a, b, words))
				case msg != "" && listed:
					problems = append(problems, fmt.Sprintf("%s: Redis refuses %s and %s together (%s), yet compatibleOptions lists them", shown, a, b, msg))
				}
			}
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
	for _, must := range []string{"SET", "GETEX", "EXPIRE", "PEXPIRE", "SCAN", "HSCAN", "ZSCAN", "ZRANGE", "ZRANGEBYSCORE", "LPOS", "COPY"} {
		if !covered[must] {
			t.Errorf("%s was not checked against the server (its plain call failed)", must)
		}
	}
	var grouped []string
	for _, name := range names {
		for _, tok := range optionArgs[name].tokens {
			if covered[name] && tok.group != 0 {
				grouped = append(grouped, name)
				break
			}
		}
	}
	t.Logf("alternatives checked for %v", grouped)
	for name := range exclusiveChecked {
		if !slices.Contains(grouped, name) {
			t.Errorf("exclusiveChecked lists %s, whose alternatives were not run against the server", name)
		}
	}
	t.Logf("%d commands' options and %d pairs of alternatives checked against the server", len(covered), pairs)
}
