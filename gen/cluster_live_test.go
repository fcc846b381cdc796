package gen

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/gen/parse"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClusterUnsafeAgreesWithServer runs a @cluster-unsafe script that
// reaches a key of another slot (served by the same node) on a Redis
// Cluster: Redis refuses it, with the answer the checker's warning quotes,
// exactly when the checker warns.
func TestClusterUnsafeAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	cluster := redistest.Cluster(t, 3)
	node := cluster.Nodes[0]
	// Two keys of different slots that node 0 serves (no MOVED).
	prefix := redistest.Prefix(t)
	var keys []string
	var slots []int64
	for i := 0; len(keys) < 2 && i < 1000; i++ {
		k := prefix + strconv.Itoa(i)
		if err := node.Do(t, "GET", k).Error(); err != nil && !rueidis.IsRedisNil(err) {
			continue // MOVED: another node's slot
		}
		slot, err := node.Do(t, "CLUSTER", "KEYSLOT", k).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if len(slots) == 0 || slots[0] != slot {
			keys, slots = append(keys, k), append(slots, slot)
		}
	}
	if len(keys) < 2 {
		t.Fatalf("no two keys of different slots on node 0: %v", keys)
	}
	const body = "-- @key k\n-- @arg other string\n-- @cluster-unsafe\n-- @return int64\nredis.call('DEL', KEYS[1])\nreturn redis.call('DEL', ARGV[1])\n"
	for _, tc := range []struct{ name, src string }{
		{"flags without allow-cross-slot-keys", "#!lua flags=allow-oom\n" + body},
		{"bare #!lua line", "#!lua\n" + body},
		{"allow-cross-slot-keys", "#!lua flags=allow-oom,allow-cross-slot-keys\n" + body},
		{"no #! line", body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warnings, err := GenerateWarnings("generated", []File{{Path: "scripts/x.lua", Source: []byte(tc.src)}}, false)
			if err != nil {
				t.Fatal(err)
			}
			err = node.Do(t, "EVAL", tc.src, "1", keys[0], keys[1]).Error()
			switch {
			case len(warnings) == 0 && err != nil:
				t.Fatalf("the checker does not warn, but Redis answers %v", err)
			case len(warnings) > 0 && err == nil:
				t.Fatalf("Redis runs the script, but the checker warns: %v", warnings[0])
			case len(warnings) > 0:
				// Redis names the script and line after " script: ".
				answer, _, _ := strings.Cut(err.Error(), " script: ")
				if !strings.Contains(warnings[0].Error(), `("`+answer+`")`) {
					t.Fatalf("Redis answers %q, not what the warning quotes: %v", err, warnings[0])
				}
			}
		})
	}
}

// TestSortClusterAgreesWithServer runs SORT and SORT_RO calls on a Redis
// Cluster from a script on a key its node serves: Redis refuses each call
// checkSortCluster refuses, with the answer its message quotes, and runs
// each it takes.
func TestSortClusterAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	cluster := redistest.Cluster(t, 3)
	node := cluster.Nodes[0]
	prefix := redistest.Prefix(t)
	key := ""
	for i := 0; key == "" && i < 1000; i++ {
		k := prefix + strconv.Itoa(i)
		if err := node.Do(t, "GET", k).Error(); err == nil || rueidis.IsRedisNil(err) {
			key = k // node 0's slot (no MOVED)
		}
	}
	if key == "" {
		t.Fatal("no key that node 0 serves")
	}
	for _, words := range [][]string{
		{"SORT", "BY", "w_*"},
		{"SORT", "GET", "#"},
		{"SORT", "ALPHA", "GET", "o_*"},
		{"SORT_RO", "LIMIT", "0", "1", "GET", "#"},
		{"SORT_RO", "BY", "w_*", "ALPHA"},
		{"SORT", "BY", "nosort"},
		{"SORT", "BY", "nosort", "LIMIT", "0", "1", "DESC", "ALPHA"},
		{"SORT_RO", "BY", "x"},
		{"SORT", "ALPHA"},
	} {
		var msg string
		call := literalCall(append([]string{words[0], key}, words[1:]...))
		checkSortCluster(call, words[0], func(_ parse.Pos, format string, args ...any) {
			msg = fmt.Sprintf(format, args...)
		})
		args := append([]string{"EVAL", "return redis.call(unpack(ARGV))", "1", key, words[0], key}, words[1:]...)
		err := node.Do(t, args...).Error()
		if rueidis.IsRedisNil(err) {
			err = nil
		}
		switch {
		case msg == "" && err != nil:
			t.Errorf("%v: the checker takes it, but Redis answers %v", words, err)
		case msg != "" && err == nil:
			t.Errorf("%v: Redis runs it, but the checker refuses it: %s", words, msg)
		case msg != "":
			answer, _, _ := strings.Cut(err.Error(), " script: ")
			if !strings.Contains(msg, `("ERR `+answer+`")`) {
				t.Errorf("%v: Redis answers %q, not what the message quotes: %s", words, err, msg)
			}
		}
	}
}

// TestDBClusterAgreesWithServer runs MOVE, SWAPDB, SELECT and COPY ... DB
// on a Redis Cluster from a script on a key its node serves: Redis refuses
// each call checkDBCluster refuses, with the answer its message quotes, and
// runs each it takes (database 0).
func TestDBClusterAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	cluster := redistest.Cluster(t, 3)
	node := cluster.Nodes[0]
	prefix := redistest.Prefix(t)
	key := ""
	for i := 0; key == "" && i < 1000; i++ {
		k := prefix + strconv.Itoa(i)
		if err := node.Do(t, "GET", k).Error(); err == nil || rueidis.IsRedisNil(err) {
			key = k // node 0's slot (no MOVED)
		}
	}
	if key == "" {
		t.Fatal("no key that node 0 serves")
	}
	if err := node.Do(t, "SET", key, "v").Error(); err != nil {
		t.Fatal(err)
	}
	dst := "{" + key + "}:copy"
	for _, words := range [][]string{
		{"MOVE", key, "1"},
		{"SWAPDB", "0", "1"},
		{"SELECT", "1"},
		{"SELECT", "0"},
		{"COPY", key, dst, "DB", "1"},
		{"COPY", key, dst, "DB", "0", "REPLACE"},
		{"COPY", key, dst, "REPLACE"},
	} {
		var msg string
		checkDBCluster(literalCall(words), words[0], func(_ parse.Pos, format string, args ...any) {
			msg = fmt.Sprintf(format, args...)
		})
		args := append([]string{"EVAL", "return redis.call(unpack(ARGV))", "1", key}, words...)
		err := node.Do(t, args...).Error()
		if rueidis.IsRedisNil(err) {
			err = nil
		}
		switch {
		case msg == "" && err != nil:
			t.Errorf("%v: the checker takes it, but Redis answers %v", words, err)
		case msg != "" && err == nil:
			t.Errorf("%v: Redis runs it, but the checker refuses it: %s", words, msg)
		case msg != "":
			answer, _, _ := strings.Cut(err.Error(), " script: ")
			if !strings.Contains(msg, `("ERR `+answer+`")`) {
				t.Errorf("%v: Redis answers %q, not what the message quotes: %s", words, err, msg)
			}
		}
	}
}
