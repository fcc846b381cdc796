package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The server's error replies can repeat what they refuse: an unknown
// command's names its first arguments, here the lock's channels, with the
// lock's name in them as it is (Redis replaces only CR and LF). The command
// prints such a refusal with the name escaped as it shows a name anywhere:
// an escape sequence in a lock's name does not reach the terminal.
func TestRefusalEchoingNamePrintable(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--rename-command", "SSUBSCRIBE", ""))
	const name = "job\x1b]0;owned\x07\x1b[2J\u009b2J\u202e\xff"
	r, exited := watchExit(t, deployment{url: "redis://" + node.Addr}, 10*time.Second, []string{"--sharded", "on"}, name)
	if !exited {
		t.Fatalf("watch still running 10s after its subscription was refused (exit %d)\n%s%s", r.code, r.out, r.errOut)
	}
	if r.code != exitFailure || !strings.Contains(r.errOut, "unknown command") {
		t.Fatalf("watch: exit %d, want %d with the server's refusal\n%s%s", r.code, exitFailure, r.out, r.errOut)
	}
	for _, line := range strings.Split(strings.TrimSuffix(r.out+r.errOut, "\n"), "\n") {
		if !utf8.ValidString(line) || strings.IndexFunc(line, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
			t.Errorf("watch printed the lock's name unescaped: %q", line)
		}
	}
}
