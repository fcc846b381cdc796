package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Redis 7.2 and later word their ACL refusals otherwise than 7.0 (the
// server the harness runs): a key refused to EVALSHA_RO is "NOPERM No
// permissions to access a key", a command refused inside the script "ERR
// ACL failure in script: User ... has no permissions to run the 'time'
// command". The server here replies those very texts (redis.error_reply),
// and they are judged as the ones the harness's server gives: the refused
// keys named, TIME named, a watch ended (no later read does better).
func TestACLRefusalsOfNewerServers(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	ctx := testCtx(t, 30*time.Second)
	rc := node.Client(t)
	reply := func(msg string) error {
		return rc.Do(ctx, rc.B().Eval().Script("return redis.error_reply(ARGV[1])").Numkeys(0).Arg(msg).Build()).Error()
	}
	k := layout.For("app:order:1", false)
	for _, msg := range []string{
		"NOPERM No permissions to access a key",
		"ERR ACL failure in script: No permissions to access a key script: 0123456789abcdef0123456789abcdef01234567, on @user_script:120.",
	} {
		err := reply(msg)
		if h := scriptACLHint(err, "app:order:1", false); !strings.Contains(h, strconv.Quote(k.Fence)) || !strings.Contains(h, strconv.Quote(k.FairQueue)) {
			t.Errorf("refusal %q: hint %q, want the keys beside the lock named (%s, %s, ...)", msg, h, k.Fence, k.FairQueue)
		}
		if !isNoPerm(err) {
			t.Errorf("refusal %q not taken for the ACL's", msg)
		}
	}
	msg := "ERR ACL failure in script: User reader has no permissions to run the 'time' command script: 0123456789abcdef0123456789abcdef01234567, on @user_script:93."
	err := reply(msg)
	if h := scriptACLHint(err, "app:order:1", false); !strings.Contains(h, "+time") {
		t.Errorf("refusal %q: hint %q, want +time named", msg, h)
	}
	if !isNoPerm(err) {
		t.Errorf("refusal %q not taken for the ACL's", msg)
	}
}
