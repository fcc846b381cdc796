package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingSpecsFailClearly(t *testing.T) {
	var stderr bytes.Buffer
	dir := filepath.Join(t.TempDir(), "absent")
	if code := run([]string{"-in", dir, "-out", filepath.Join(t.TempDir(), "t.go")}, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "does not exist") || !strings.Contains(stderr.String(), "shared/redis-commands/json") {
		t.Errorf("stderr %q does not say where the specifications belong", stderr.String())
	}
}

func TestBuildAndCheck(t *testing.T) {
	in := t.TempDir()
	specs := map[string]string{
		"get.json": `{"GET": {"since": "1.0.0", "arity": 2, "command_flags": ["READONLY", "FAST"],
			"key_specs": [{"begin_search": {"index": {"pos": 1}}, "find_keys": {"range": {"lastkey": 0, "step": 1, "limit": 0}}}],
			"reply_schema": {"oneOf": [{"type": "string"}, {"type": "null"}]}}}`,
		"object-encoding.json": `{"ENCODING": {"since": "2.2.3", "arity": 3, "container": "OBJECT", "command_flags": ["READONLY"],
			"key_specs": [{"begin_search": {"index": {"pos": 2}}, "find_keys": {"range": {"lastkey": 0, "step": 1, "limit": 0}}}],
			"reply_schema": {"oneOf": [{"const": 0}, {"type": "string"}]}}}`,
		"setnx.json": `{"SETNX": {"since": "1.0.0", "arity": 3, "command_flags": ["WRITE"],
			"reply_schema": {"oneOf": [{"const": 0}, {"const": 1}]}}}`,
		"ttl.json": `{"TTL": {"since": "1.0.0", "arity": 2, "command_flags": ["READONLY"],
			"reply_schema": {"oneOf": [{"type": "integer", "minimum": 0}, {"const": -1}, {"const": -2}]}}}`,
		"rename.json":     `{"RENAME": {"since": "1.0.0", "arity": 3, "command_flags": ["WRITE"], "reply_schema": {"const": "OK"}}}`,
		"sentinel-x.json": `{"X": {"since": "2.8.4", "arity": 2, "container": "SENTINEL", "command_flags": ["ONLY_SENTINEL"]}}`,
	}
	for n, s := range specs {
		if err := os.WriteFile(filepath.Join(in, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "table.go")
	var stderr bytes.Buffer
	if code := run([]string{"-in", in, "-out", out}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, _ := os.ReadFile(out)
	for _, want := range []string{
		`{"GET", 2, flagFast | flagReadonly, "1.0.0", replyStr | replyNil, []keySpec{{beginIndex: 1, lastKey: 0, step: 1, limit: 0}}},`,
		`{"OBJECT|ENCODING", 3, flagReadonly, "2.2.3", replyInt | replyStr, []keySpec{{beginIndex: 2, lastKey: 0, step: 1, limit: 0}}},`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("table lacks %s:\n%s", want, b)
		}
	}
	// OBJECT ENCODING's schema above allows the integer 0 alone; TTL's any.
	if !bytes.Contains(b, []byte("var zeroOneReplies = map[string]bool{\n\t\"OBJECT|ENCODING\": true,\n\t\"SETNX\":           true,\n}")) {
		t.Errorf("zeroOneReplies is not OBJECT|ENCODING and SETNX:\n%s", b)
	}
	// RENAME's schema allows the constant "OK" alone: a status; GET's and
	// OBJECT ENCODING's strings are values.
	if !bytes.Contains(b, []byte("var statusReplies = map[string]bool{\n\t\"RENAME\": true,\n}")) {
		t.Errorf("statusReplies is not RENAME alone:\n%s", b)
	}
	if bytes.Contains(b, []byte("SENTINEL")) {
		t.Errorf("sentinel-only command in the table:\n%s", b)
	}
	if code := run([]string{"-in", in, "-out", out, "-check"}, &stderr); code != 0 {
		t.Fatalf("-check on a fresh table: exit %d: %s", code, stderr.String())
	}
	os.WriteFile(filepath.Join(in, "get.json"), []byte(strings.Replace(specs["get.json"], `"arity": 2`, `"arity": 3`, 1)), 0o644)
	stderr.Reset()
	if code := run([]string{"-in", in, "-out", out, "-check"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "stale") {
		t.Fatalf("-check on a stale table: exit %d, stderr %q; want 1 and stale", code, stderr.String())
	}
}
