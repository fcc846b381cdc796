package scriptlock

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// readPrimary sends a read-only script's call, built by build (an
// EVALSHA_RO), as EVALSHA, and returns its reply. A rueidis client told to
// send read-only commands to replicas (SendToReplicas, as for a cloud
// vendor's reader endpoint or with Sentinel or Cluster replicas) sends an
// EVALSHA_RO there, and a replica behind its primary answers for a state the
// primary has left: a latch it has not seen set yet reads as open, and an
// acquisition it has not seen yet as nothing to undo. The reads a decision
// is made on (Await's count, an undo's hold count) go where the writes go.
// The script only reads, so the call is retryable, as an EVALSHA_RO is.
func (c *Client) readPrimary(ctx context.Context, build func() (rueidis.Completed, error)) (rueidis.RedisResult, error) {
	res, err := c.readWith(ctx, func() (rueidis.Completed, error) { return primaryCommand(c.rc, build) })
	if err == nil && isNoPerm(res.Error()) {
		// An ACL user allowed the read-only script commands alone (a
		// process that only awaits a latch): the read goes out as built,
		// where rueidis sends it, as it did before it went to the primary.
		return c.readWith(ctx, build)
	}
	return res, err
}

// readWith sends the script call build makes, and as EVAL (EVAL_RO) when
// the node answers NOSCRIPT.
func (c *Client) readWith(ctx context.Context, build func() (rueidis.Completed, error)) (rueidis.RedisResult, error) {
	cmd, err := build()
	if err != nil {
		return rueidis.RedisResult{}, err
	}
	res := c.rc.Do(ctx, cmd)
	if !isNoScript(res.Error()) {
		return res, nil
	}
	// Not loaded on that node (a new primary, a restarted server): EVAL,
	// built again (rueidis recycles a command once it is answered).
	if cmd, err = build(); err == nil {
		cmd, err = generated.EvalOf(c.rc, cmd)
	}
	if err != nil {
		return rueidis.RedisResult{}, err
	}
	return c.rc.Do(ctx, cmd), nil
}

// isNoPerm reports a call the server's ACL refused.
func isNoPerm(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && strings.HasPrefix(re.Error(), "NOPERM")
}

// primaryCommand is build's EVALSHA_RO as EVALSHA (see readPrimary); any
// other call as built.
func primaryCommand(rc rueidis.Client, build func() (rueidis.Completed, error)) (rueidis.Completed, error) {
	ro, err := build()
	if err != nil {
		return ro, err
	}
	t := ro.Commands()
	if len(t) < 3 || t[0] != "EVALSHA_RO" {
		return ro, nil // sent where writes go already
	}
	n, err := strconv.Atoi(t[2])
	if err != nil || n < 0 || n > len(t)-3 {
		return rueidis.Completed{}, fmt.Errorf("scriptlock: read-only script call with numkeys %q", t[2])
	}
	return rc.B().Evalsha().Sha1(t[1]).Numkeys(int64(n)).Key(t[3 : 3+n]...).Arg(t[3+n:]...).Build().ToRetryable(), nil
}

// readPrimaryAs is readPrimary decoded by decode (the script's DecodeX).
func readPrimaryAs[T any](ctx context.Context, c *Client, build func() (rueidis.Completed, error), decode func(rueidis.RedisResult) (T, error)) (T, error) {
	res, err := c.readPrimary(ctx, build)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(res)
}
