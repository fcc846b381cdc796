package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// crlfScript has a #!lua line, annotations and a multi-line long string, so
// every part the generator reads is seen with CRLF line ends.
const crlfScript = "#!lua flags=no-writes\n" +
	"-- Get reads k.\n" +
	"-- @key    k\n" +
	"-- @arg    field string  the field\n" +
	"-- @return string?\n" +
	"-- @readonly\n" +
	"local unused = [[a\nb]]\n" +
	"return redis.call('HGET', KEYS[1], ARGV[1])\n"

func toCRLF(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }

// A checkout with core.autocrlf=true turns scripts and generated files into
// CRLF: the generator gives the same package from it, and -check agrees.
func TestCRLFCheckout(t *testing.T) {
	workspace(t, map[string]string{"get.lua": crlfScript})
	if code, stderr := scriptgen(t, genArgs...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lf := snapshot(t, "generated")

	// The same scripts with CRLF give the same Go code.
	if err := os.WriteFile("scripts/get.lua", toCRLF([]byte(crlfScript)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := scriptgen(t, "-in", "scripts", "-out", "fromcrlf", "-pkg", "generated"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fromCRLF := map[string]string{}
	for p, b := range snapshot(t, "fromcrlf") {
		fromCRLF[filepath.Join("generated", filepath.Base(p))] = b
	}
	if diff := cmp.Diff(lf, fromCRLF); diff != "" {
		t.Errorf("CRLF scripts give other Go code (-LF +CRLF):\n%s", diff)
	}

	// Generated files with CRLF are current, and are not rewritten.
	for p, b := range lf {
		if err := os.WriteFile(p, toCRLF([]byte(b)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, stderr := scriptgen(t, append(genArgs, "-check")...); code != 0 || stderr != "" {
		t.Errorf("-check on a CRLF checkout: exit %d, stderr:\n%s", code, stderr)
	}
	before := snapshot(t, "generated")
	if code, stderr := scriptgen(t, genArgs...); code != 0 {
		t.Errorf("regenerating a CRLF checkout: exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(before, snapshot(t, "generated")); diff != "" {
		t.Errorf("regenerating a CRLF checkout changed it (-before +after):\n%s", diff)
	}
}
