package gen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCommandTableMatchesServer compares the command table with what the
// test server reports through COMMAND: arity, flags and key specs of every
// command and subcommand the server has. Commands newer than the server are
// left out of the comparison (they stay in the table).
func TestCommandTableMatchesServer(t *testing.T) {
	redistest.RequireBinaries(t)
	node := redistest.Server(t)
	version := node.Do(t, "INFO", "server")
	info, err := version.ToString()
	if err != nil {
		t.Fatal(err)
	}
	serverVersion := ""
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			serverVersion = v
		}
	}
	if serverVersion == "" {
		t.Fatalf("no redis_version in INFO server:\n%s", info)
	}
	msg, err := node.Do(t, "COMMAND").ToMessage()
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]serverCommand{}
	list, err := msg.ToArray()
	if err != nil {
		t.Fatal(err)
	}
	for i := range list {
		collectServerCommands(t, &list[i], server)
	}

	compared := 0
	var problems []string
	for _, c := range commandTable {
		if !versionAtMost(c.since, serverVersion) {
			continue
		}
		s, ok := server[c.name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s (since %s) is in the table but not on Redis %s", c.name, c.since, serverVersion))
			continue
		}
		compared++
		if s.arity != c.arity {
			problems = append(problems, fmt.Sprintf("%s: arity %d in the table, %d on the server", c.name, c.arity, s.arity))
		}
		var want []string
		for f, w := range flagWords {
			if c.flags&f != 0 {
				want = append(want, w)
			}
		}
		var got []string
		for _, f := range s.flags {
			for _, w := range flagWords {
				if f == w {
					got = append(got, f)
				}
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(want, " ") != strings.Join(got, " ") {
			problems = append(problems, fmt.Sprintf("%s: flags [%s] in the table, [%s] on the server", c.name, strings.Join(want, " "), strings.Join(got, " ")))
		}
		var keys []string
		for _, k := range c.keys {
			keys = append(keys, k.describe())
		}
		if strings.Join(keys, "; ") != strings.Join(s.keys, "; ") {
			problems = append(problems, fmt.Sprintf("%s: key specs [%s] in the table, [%s] on the server", c.name, strings.Join(keys, "; "), strings.Join(s.keys, "; ")))
		}
	}
	// Differences the specifications (Redis 7.2+/Valkey) have with Redis
	// 7.0: each must show up, so the list stays true. Flags added after 7.0
	// only make the checker stricter; the commands 7.0 refuses in scripts
	// are in noscriptOn70 and stay refused.
	known := map[string]bool{}
	for _, l := range knownDifferencesWith70 {
		known[l] = true
	}
	for name := range noscriptOn70 {
		c := commandIndex[name]
		var want []string
		for f, w := range flagWords {
			if c.flags&f != 0 {
				want = append(want, w)
			}
		}
		got := append(append([]string{}, want...), "noscript")
		if name == "WAIT" {
			got = []string{"noscript"} // 7.0 has no blocking flag on WAIT
		}
		sort.Strings(want)
		sort.Strings(got)
		known[fmt.Sprintf("%s: flags [%s] in the table, [%s] on the server", name, strings.Join(want, " "), strings.Join(got, " "))] = true
	}
	seen := map[string]bool{}
	for _, p := range problems {
		seen[p] = true
		if !versionAtMost("7.1", serverVersion) && known[p] {
			continue
		}
		t.Error(p)
	}
	if !versionAtMost("7.1", serverVersion) {
		for l := range known {
			if !seen[l] {
				t.Errorf("listed difference with Redis 7.0 does not show: %s", l)
			}
		}
	}
	// The comparison must have covered the commands scripts use.
	if compared < 200 {
		t.Errorf("compared %d commands with Redis %s; want at least 200", compared, serverVersion)
	}
	t.Logf("compared %d commands and subcommands with Redis %s", compared, serverVersion)
}

// knownDifferencesWith70 are the differences between the table and Redis
// 7.0 other than noscriptOn70: flags added later (all make the checker
// stricter or do not concern scripts) and arities that grew (ZRANK
// WITHSCORE, 7.2).
var knownDifferencesWith70 = []string{
	"CLUSTER|INFO: flags [loading stale] in the table, [stale] on the server",
	"CLUSTER|MYID: flags [loading stale] in the table, [stale] on the server",
	"CLUSTER|NODES: flags [loading stale] in the table, [stale] on the server",
	"CLUSTER|SETSLOT: flags [admin may_replicate no_async_loading stale] in the table, [admin no_async_loading stale] on the server",
	"CLUSTER|SHARDS: flags [loading stale] in the table, [stale] on the server",
	"CLUSTER|SLOTS: flags [loading stale] in the table, [stale] on the server",
	"COMMAND|GETKEYS: arity -3 in the table, -4 on the server",
	"COMMAND|GETKEYSANDFLAGS: arity -3 in the table, -4 on the server",
	"DEBUG: flags [admin loading noscript protected stale] in the table, [admin loading noscript stale] on the server",
	"EVAL: flags [may_replicate no_mandatory_keys noscript skip_monitor stale] in the table, [no_mandatory_keys noscript skip_monitor stale] on the server",
	"EVALSHA: flags [may_replicate no_mandatory_keys noscript skip_monitor stale] in the table, [no_mandatory_keys noscript skip_monitor stale] on the server",
	"FCALL: flags [may_replicate no_mandatory_keys noscript skip_monitor stale] in the table, [no_mandatory_keys noscript skip_monitor stale] on the server",
	"MODULE|LOAD: flags [admin no_async_loading noscript protected] in the table, [admin no_async_loading noscript] on the server",
	"MODULE|LOADEX: flags [admin no_async_loading noscript protected] in the table, [admin no_async_loading noscript] on the server",
	"MODULE|UNLOAD: flags [admin no_async_loading noscript protected] in the table, [admin no_async_loading noscript] on the server",
	"MULTI: flags [allow_busy fast loading no_multi noscript stale] in the table, [allow_busy fast loading noscript stale] on the server",
	"PFCOUNT: flags [may_replicate readonly] in the table, [readonly] on the server",
	"PUBLISH: flags [fast loading may_replicate pubsub stale] in the table, [fast loading pubsub stale] on the server",
	"RANDOMKEY: flags [readonly touches_arbitrary_keys] in the table, [readonly] on the server",
	"SCAN: flags [readonly touches_arbitrary_keys] in the table, [readonly] on the server",
	"SPUBLISH: flags [fast loading may_replicate pubsub stale] in the table, [fast loading pubsub stale] on the server",
	"WATCH: flags [allow_busy fast loading no_multi noscript stale] in the table, [allow_busy fast loading noscript stale] on the server",
	"ZRANK: arity -3 in the table, 3 on the server",
	"ZREVRANK: arity -3 in the table, 3 on the server",
}

type serverCommand struct {
	arity int
	flags []string
	keys  []string // keySpec.describe form
}

// collectServerCommands reads one COMMAND entry (and its subcommands):
// name, arity, flags, first, last, step, ACL categories, tips, key specs,
// subcommands.
func collectServerCommands(t *testing.T, m *rueidis.RedisMessage, into map[string]serverCommand) {
	t.Helper()
	fields, err := m.ToArray()
	if err != nil || len(fields) < 10 {
		t.Fatalf("COMMAND entry %v: %v", m, err)
	}
	name, _ := fields[0].ToString()
	arity, _ := fields[1].ToInt64()
	var c serverCommand
	c.arity = int(arity)
	flags, _ := fields[2].ToArray()
	for _, f := range flags {
		s, _ := f.ToString()
		c.flags = append(c.flags, s)
	}
	specs, _ := fields[8].ToArray()
	for i := range specs {
		spec := asMap(t, &specs[i])
		c.keys = append(c.keys, describeServerSpec(t, spec))
	}
	into[strings.ToUpper(name)] = c
	subs, _ := fields[9].ToArray()
	for i := range subs {
		collectServerCommands(t, &subs[i], into)
	}
}

// asMap reads a RESP3 map or a RESP2 flat array of pairs.
func asMap(t *testing.T, m *rueidis.RedisMessage) map[string]rueidis.RedisMessage {
	t.Helper()
	if mm, err := m.AsMap(); err == nil {
		return mm
	}
	t.Fatalf("not a map: %v", m)
	return nil
}

func describeServerSpec(t *testing.T, spec map[string]rueidis.RedisMessage) string {
	t.Helper()
	part := func(key string) (string, map[string]rueidis.RedisMessage) {
		v := spec[key]
		m := asMap(t, &v)
		typ := m["type"]
		s, _ := typ.ToString()
		sp := m["spec"]
		if s == "unknown" {
			return s, nil
		}
		return s, asMap(t, &sp)
	}
	num := func(m map[string]rueidis.RedisMessage, k string) int {
		v := m[k]
		n, err := v.ToInt64()
		if err != nil {
			t.Fatalf("key spec field %s: %v", k, err)
		}
		return int(n)
	}
	var ks keySpec
	switch typ, m := part("begin_search"); typ {
	case "index":
		ks.beginIndex = num(m, "index")
	case "keyword":
		kw := m["keyword"]
		ks.beginKeyword, _ = kw.ToString()
		ks.startFrom = num(m, "startfrom")
	default:
		ks.unknownBegin = true
	}
	switch typ, m := part("find_keys"); typ {
	case "range":
		ks.lastKey, ks.step, ks.limit = num(m, "lastkey"), num(m, "keystep"), num(m, "limit")
	case "keynum":
		ks.keynum = true
		ks.keynumIdx, ks.firstKey, ks.step = num(m, "keynumidx"), num(m, "firstkey"), num(m, "keystep")
	default:
		ks.unknownFind = true
	}
	return ks.describe()
}

// describe renders a key spec for comparisons.
func (k keySpec) describe() string {
	var b string
	switch {
	case k.unknownBegin:
		b = "begin unknown"
	case k.beginKeyword != "":
		b = "begin keyword " + k.beginKeyword + " from " + strconv.Itoa(k.startFrom)
	default:
		b = "begin index " + strconv.Itoa(k.beginIndex)
	}
	switch {
	case k.unknownFind:
		return b + ", find unknown"
	case k.keynum:
		return fmt.Sprintf("%s, keynum at %d first %d step %d", b, k.keynumIdx, k.firstKey, k.step)
	}
	return fmt.Sprintf("%s, range last %d step %d limit %d", b, k.lastKey, k.step, k.limit)
}

// versionAtMost reports whether dotted version a <= b.
func versionAtMost(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return true
}
