package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"strings"
	"sync"

	"github.com/redis/rueidis"
)

// shebangless hides Redis 7's script flags line ("#!lua flags=allow-oom")
// from miniredis, whose Lua compiles that line and fails. EVAL and EVAL_RO
// get the script with the line emptied (its newline kept, so error lines stay
// right), and EVALSHA and EVALSHA_RO the SHA-1 of that text once an EVAL has
// shown it. The flags only matter on a server at its maxmemory, which
// miniredis never is.
type shebangless struct {
	rueidis.Client
	sha sync.Map // SHA-1 of a flagged script → SHA-1 of the script miniredis runs
}

func (w *shebangless) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	return w.Client.Do(ctx, w.rewrite(cmd))
}

func (w *shebangless) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	out := make([]rueidis.Completed, len(cmds))
	for i, c := range cmds {
		out[i] = w.rewrite(c)
	}
	return w.Client.DoMulti(ctx, out...)
}

// Nodes: the one node, through the same rewriting.
func (w *shebangless) Nodes() map[string]rueidis.Client {
	nodes := w.Client.Nodes()
	for addr := range nodes {
		nodes[addr] = w
	}
	return nodes
}

func (w *shebangless) rewrite(cmd rueidis.Completed) rueidis.Completed {
	args := cmd.Commands()
	if len(args) < 2 {
		return cmd
	}
	switch strings.ToUpper(args[0]) {
	case "EVAL", "EVAL_RO":
		i := strings.IndexByte(args[1], '\n')
		if !strings.HasPrefix(args[1], "#!") || i < 0 {
			return cmd
		}
		body := args[1][i:]
		w.sha.Store(sha1Hex(args[1]), sha1Hex(body))
		args = slices.Clone(args)
		args[1] = body
	case "EVALSHA", "EVALSHA_RO":
		sha, ok := w.sha.Load(args[1])
		if !ok {
			return cmd // NOSCRIPT, then the EVAL that maps it
		}
		args = slices.Clone(args)
		args[1] = sha.(string)
	default:
		return cmd
	}
	return w.Client.B().Arbitrary(args[0]).Args(args[1:]...).Build()
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
