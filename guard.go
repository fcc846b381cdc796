package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// guardWait is what a guarded write waits for: acks replicas'
// acknowledgements within timeout. The zero value is no guard.
type guardWait struct {
	timeout time.Duration
	acks    int
	want    int // WithGuardReplicas, for a write redirected to another primary
	// asked: where sendGuarded records the number its WAIT asked for, the
	// named primary's after a redirect, for the error that names it
	// (needed); nil: not recorded.
	asked *int
	// owner: on a Cluster, the node ID of the primary acks was counted
	// for ("" unknown), which the write may not reach (rerouted).
	owner string
	// hold, for an Extend: the hold whose lease the call sets. Once it
	// has ended, repeatGuarded sends no repeat: the lock is nobody's to
	// extend, and the script may reach a newer hold of its owner.
	hold *hold
	// unsure, for an Extend: where repeatGuarded records that it made the
	// call again after an attempt of unknown outcome, which may still run
	// on the server after the repeat and later calls (see leaseUnknown).
	unsure *bool
	// until, for a PermitSemaphore Extend: once it has passed,
	// repeatGuarded sends no repeat, as Extend makes none unguarded (the
	// lease asked for would have ended had the first attempt set it).
	until time.Time
}

// on reports whether the guard waits.
func (g guardWait) on() bool { return g.acks > 0 }

// needed is how many acknowledgements the write's WAIT asked for.
func (g guardWait) needed() int {
	if g.asked != nil && *g.asked > 0 {
		return *g.asked
	}
	return g.acks
}

// guarded returns the failover guard's wait for a call on key: none when the
// guard is off or the primary serving key has no replicas to wait for. With
// the guard off, the eviction policy is still looked at (checkEviction).
// On a Cluster the wait records the number its WAIT asked for (needed),
// which a write short of it fails naming: a redirect asks the named
// primary's. Elsewhere nothing redirects a write, the number is acks, and
// the hot path allocates nothing for it.
func (c *Client) guarded(ctx context.Context, cfg *config, key string) guardWait {
	if !cfg.guard {
		c.checkEviction()
		return guardWait{}
	}
	n, owner := c.replicasFor(ctx, key, cfg.guardReplicas)
	g := cfg.guardWait(n)
	if g.on() && c.rc.Mode() == rueidis.ClientModeCluster {
		g.asked = new(int)
		g.owner = owner
	}
	return g
}

// guardWait is the guard's wait on a primary with n counted replicas (none
// when n is 0).
func (cfg *config) guardWait(n int) guardWait {
	if n <= 0 {
		return guardWait{}
	}
	return guardWait{timeout: cfg.guardTimeout, acks: guardAcks(cfg.guardReplicas, n), want: cfg.guardReplicas}
}

// guardOverrun is how long a guarded attempt may wait for its replicas on
// the server (waitSpec.overrun): the guard timeout, or 0 with the guard off.
func (cfg *config) guardOverrun() time.Duration {
	if !cfg.guard {
		return 0
	}
	return cfg.guardTimeout
}

// checkingEviction is what a panic logged in the eviction-policy check
// was in.
const checkingEviction = "reading the eviction policy"

// evictionRefresh is how often checkEviction looks at the servers again.
const evictionRefresh = time.Minute

// checkEviction starts, at the first acquisition without the failover guard
// (whose replica count reads the policy otherwise: countReplicas), a
// background look at the eviction policy of every primary, made again every
// evictionRefresh until Close: a lock key evicted under memory pressure is a
// lock lost while its holder runs, and the log must say so whatever the
// guard. After the first call it costs an atomic load.
func (c *Client) checkEviction() {
	g := &c.guard
	if g.evictionStarted.Load() || !g.evictionStarted.CompareAndSwap(false, true) {
		return
	}
	c.background(func() {
		t := time.NewTicker(g.evictionEvery)
		defer t.Stop()
		for {
			seen := c.panicPaths.eviction.begin()
			var panicked atomic.Bool
			// Every node at once, each within its own bound: a frozen node
			// must not keep the others' policies from being read.
			ctx, cancel := cancelAfter(c.ctx, 2*time.Second)
			var wg sync.WaitGroup
			nodes := c.nodesOf(checkingEviction)
			for _, n := range nodes {
				wg.Go(func() {
					// A panic of the call (a client wrapper's) has no
					// caller to reach: logged, as a node that did not
					// answer.
					var info string
					var err error
					if v, stack, p := catch(func() {
						info, err = n.Do(ctx, n.B().Info().Section("replication", "memory").Build()).ToString()
					}); p {
						panicked.Store(true)
						_ = c.callPanickedAt(checkingEviction, v, stack)
						return
					}
					if err == nil && strings.Contains(info, "role:master") {
						c.warnEviction(info)
					}
				})
			}
			wg.Wait()
			cancel()
			if nodes != nil && !panicked.Load() {
				c.panicPaths.eviction.ended(seen)
			}
			g.evictionChecks.Add(1)
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// sendGuarded sends an acquiring script call and WAIT in one pipeline on the
// same connection, so WAIT covers exactly that write, and reports whether
// g.acks replicas acknowledged it within g.timeout (sendGuardedBatch with one
// call).
func (c *Client) sendGuarded(ctx context.Context, g guardWait, build func() (rueidis.Completed, error)) (reply rueidis.RedisResult, acked bool, err error) {
	r := c.sendGuardedBatch(ctx, g.timeout, []guardedCall{{build: build, acks: g.acks, want: g.want, owner: g.owner}})[0]
	if g.asked != nil {
		*g.asked = r.acks
	}
	if r.err != nil {
		return rueidis.RedisResult{}, false, r.err
	}
	return r.reply, r.acked, nil
}

// redirect follows a MOVED or ASK the script of a guarded attempt met on a
// Cluster (out: the replies of the script and its WAIT): the script and a
// new WAIT go out together on one connection to the node the redirection
// names (after ASKING for an ASK), which the Client's slot map may not send
// it to yet. The redirected script ran nothing, so sending it again is safe.
// A node the Client has no connection to, or a command that cannot be
// built, leaves the redirection as it was: the attempt is made again
// (retryLater) once the Client knows the slot's node. The WAIT asks for the
// named primary's number of replicas (its count, with call.want), which
// acks reports: the call's was counted for the slot's old primary. A primary
// without replicas has none to wait for: the WAIT asks for none and answers
// at once, and the write stands, as one the guard sends there without WAIT.
// A MOVED gives the slot that count for the calls that follow (movedSlot).
func (c *Client) redirect(ctx context.Context, out []rueidis.RedisResult, call guardedCall, waitMs int64) ([]rueidis.RedisResult, int) {
	acks := call.acks
	re, ok := rueidis.IsRedisErr(out[0].Error())
	if !ok {
		return out, acks
	}
	addr, moved := re.IsMoved()
	asked := false
	if !moved {
		if addr, asked = re.IsAsk(); !asked {
			return out, acks
		}
	}
	n, ok := c.rc.Nodes()[addr]
	if !ok {
		return out, acks
	}
	cmd, err := call.build()
	if err != nil {
		return out, acks
	}
	if k, counted := c.replicasAt(addr); counted {
		if moved {
			c.movedSlot(cmd.Slot(), k)
		}
		acks = call.acksAt(k)
	} else if moved {
		// A primary the count has not seen (added to the Cluster since).
		c.recountSoon()
	}
	wait := n.B().Wait().Numreplicas(int64(acks)).Timeout(waitMs).Build()
	// Cut off as stalled guardStall past its WAIT's timeout (see
	// sendGuardedBatch), from when it is sent.
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, addSat(time.Duration(waitMs)*time.Millisecond, c.guardStall))
	defer cancel()
	// On a pooled connection to that node, maybe a new one: bounded by
	// ctx's cancellation too (sendBounded).
	if !asked {
		out, _ = c.sendBounded(parent, ctx, 2, func(ctx context.Context) []rueidis.RedisResult {
			return n.DoMulti(ctx, cmd, wait)
		})
		return out, acks
	}
	out, _ = c.sendBounded(parent, ctx, 2, func(ctx context.Context) []rueidis.RedisResult {
		return n.DoMulti(ctx, n.B().Asking().Build(), cmd, wait)[1:]
	})
	return out, acks
}

// sendBounded returns the n replies send gives, which sends a guarded batch
// (its calls and WAIT) with ctx, derived from parent, on a pooled or
// dedicated connection; or, as soon as ctx ends while send still runs, n
// replies holding ctx's error, with ok false. rueidis watches no
// cancellation there: it opens a new pooled connection within its dial
// timeout and ctx's deadline (a handshake with a server that accepts
// connections but never answers, SIGSTOP, a hung host, lasts that long),
// and waits for the replies on an open one until that deadline (the
// guard's stall bound, guardStall, at the latest). A guarded Lock, TryLock
// or Extend whose context was cancelled waited that long. A batch so cut
// off is one of unknown outcome, as one rueidis cuts off at its deadline,
// and its callers undo or settle it alike. send runs on a goroutine of its
// own, which ends when rueidis returns it, within its dial timeout or ctx's
// deadline; once ctx has ended rueidis writes nothing more (it checks ctx
// before writing). A goroutine per guarded call, which waits for a WAIT
// anyway; none when parent cannot be cancelled, as ctx's deadline then
// bounds it.
// A panic of send (a client wrapper's) goes on on the caller's goroutine,
// as an unbounded call's does (on send's own it crashed the process); one
// after the caller has left is logged (cuttable).
func (c *Client) sendBounded(parent, ctx context.Context, n int, send func(context.Context) []rueidis.RedisResult) (replies []rueidis.RedisResult, ok bool) {
	if parent.Done() == nil {
		return send(ctx), true
	}
	type sent struct {
		replies []rueidis.RedisResult
		ok      bool
	}
	r := cuttable(ctx, c.log, "a guarded call let go at its context's end", func() sent {
		return sent{send(ctx), true}
	}, func(err error) sent {
		replies := make([]rueidis.RedisResult, n)
		for i := range replies {
			replies[i] = rueidis.NewErrorResult(err)
		}
		return sent{replies, false}
	})
	return r.replies, r.ok
}

// rerouted checks, on a Cluster, that the calls sent with a WAIT on the
// dedicated connection d (replies: CLUSTER MYID's, the calls', the WAIT's)
// reached the primary their counts were taken for, and returns the replies
// without MYID's. The connection routes by its own slot map, which it reads
// again at any MOVED or closed connection: it may send a moved slot's calls
// to the new primary directly while the count still gives the slot to the
// old one, and no MOVED corrects it (redirect). Each call then needs the new
// primary's number (needs, from the call's acks; the slot takes that count,
// movedSlot), and when the WAIT asked for fewer than that and had fewer, a
// WAIT for it follows on d, which covers the same writes: waiting for the
// old shard's number failed every acquisition on a primary with fewer
// replicas, and granted on one with more what fewer acknowledged. Calls
// redirected are left to redirect, which asks the primary named.
func (c *Client) rerouted(ctx context.Context, d rueidis.DedicatedClient, replies []rueidis.RedisResult, calls []guardedCall, sent, needs []int, waitMs int64) []rueidis.RedisResult {
	id, err := replies[0].ToString()
	replies = replies[1:]
	if err != nil {
		return replies
	}
	for j := range sent {
		if re, ok := rueidis.IsRedisErr(replies[j].Error()); ok {
			if _, moved := re.IsMoved(); moved {
				return replies
			}
			if _, asked := re.IsAsk(); asked {
				return replies
			}
		}
	}
	off := -1 // a call whose count is of another primary than id
	for j, i := range sent {
		if o := calls[i].owner; o != "" && o != id {
			off = j
			break
		}
	}
	if off < 0 {
		return replies
	}
	k, counted := c.countOfNode(id)
	if !counted {
		return replies
	}
	if cmd, err := calls[sent[off]].build(); err == nil {
		c.movedSlot(cmd.Slot(), k)
	}
	need := 0
	for j, i := range sent {
		if o := calls[i].owner; o != "" && o != id {
			needs[j] = calls[i].acksAt(k)
		}
		need = max(need, needs[j])
	}
	last := len(replies) - 1
	if n, err := replies[last].AsInt64(); err == nil && n < int64(need) {
		replies[last] = d.Do(ctx, d.B().Wait().Numreplicas(int64(need)).Timeout(waitMs).Build())
	}
	return replies
}

// guardedCommand is call, or with eval call as EVAL with its script's source
// (generated.EvalOf), for a node that answered its EVALSHA NOSCRIPT.
func (c *Client) guardedCommand(call guardedCall, eval bool) guardedCall {
	if !eval {
		return call
	}
	build := call.build
	call.build = func() (rueidis.Completed, error) {
		cmd, err := build()
		if err != nil {
			return cmd, err
		}
		return generated.EvalOf(c.rc, cmd)
	}
	return call
}

// notReplicated is the error of an acquisition the guard undid.
func (c *Client) notReplicated(g guardWait) error {
	return c.guardFailed(g, "the acquisition was undone")
}

// guardFailed is ErrNotReplicated for a write g's WAIT did not vouch for,
// what says what became of it. When the server refused the WAIT (an ACL
// user without it), the error says so and wraps the refusal: no replica
// can vouch for any write then, and the fix is the user's permissions (or
// the guard off), not the replicas.
func (c *Client) guardFailed(g guardWait, what string) error {
	if p := c.guard.waitRefused.Load(); p != nil {
		return fmt.Errorf("%w: the server refused the failover guard's WAIT (%w); %s. Allow the user WAIT (or use a server that has it), or turn the guard off (WithFailoverGuard(false, 0))", ErrNotReplicated, *p, what)
	}
	return fmt.Errorf("%w (%d needed) within %s; %s", ErrNotReplicated, g.needed(), g.timeout, what)
}

// noteWait records whether the server refused a guarded batch's WAIT (err,
// its reply's error) for good, for guardFailed: NOPERM (an ACL user without
// WAIT), or a server or proxy that does not have the command. (A replica's
// refusal, a primary demoted in a failover, passes with the failover.)
func (c *Client) noteWait(err error) {
	if re, ok := rueidis.IsRedisErr(err); ok {
		if msg := re.Error(); strings.HasPrefix(msg, "NOPERM") || strings.Contains(msg, "unknown command") {
			c.guard.waitRefused.Store(&err)
		}
	} else if err == nil && c.guard.waitRefused.Load() != nil {
		c.guard.waitRefused.Store(nil)
	}
}

func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}

// callGuarded runs a lease-setting script (an Extend) with WAIT after it on
// the same connection (sendGuarded) and decodes its reply; acked reports
// whether g.acks replicas acknowledged the write within g.timeout. A call
// whose connection broke under it is made again within ctx (and g.until), as
// Extend makes the unguarded one (a repeat sets
// the same lease, from a moment later, past the loss deadline taken before
// the first): rueidis repeats no call sent with WAIT. One cut off as stalled is
// not made again: the primary stopped answering.
func (c *Client) callGuarded(ctx context.Context, g guardWait, build func() (rueidis.Completed, error), decode func(rueidis.RedisResult) (bool, error)) (held, acked bool, err error) {
	acked, err = c.repeatGuarded(ctx, g, build, func(reply rueidis.RedisResult) (err error) {
		held, err = decode(reply)
		return err
	})
	return held, acked, err
}

// repeatGuarded is callGuarded for any reply: decode keeps what it reads.
func (c *Client) repeatGuarded(ctx context.Context, g guardWait, build func() (rueidis.Completed, error), decode func(rueidis.RedisResult) error) (acked bool, err error) {
	for i := range guardedRepeats {
		if i > 0 {
			if g.hold != nil && g.hold.released() {
				break // ended meanwhile: err is the broken attempt's
			}
			if !g.until.IsZero() && !time.Now().Before(g.until) {
				break // past the lease asked for: err is the broken attempt's
			}
			if g.unsure != nil {
				*g.unsure = true
			}
		}
		var reply rueidis.RedisResult
		reply, acked, err = c.sendGuarded(ctx, g, build)
		if err != nil {
			return false, err // not built: nothing sent
		}
		err = decode(reply)
		if err == nil || !brokenConn(err) || errors.Is(err, errGuardStalled) || ctx.Err() != nil {
			break
		}
	}
	return acked, err
}

// guardedRepeats is how many times in all a guarded Extend is sent while
// its connection breaks under it (callGuarded).
const guardedRepeats = 3

// guardedCall is one call of sendGuardedBatch: acks replicas must
// acknowledge the write build makes; want is WithGuardReplicas, for a call
// redirected to another primary (redirect).
type guardedCall struct {
	build func() (rueidis.Completed, error)
	acks  int
	want  int
	owner string // guardWait.owner
}

// acksAt is how many acknowledgements the call needs on a primary with k
// counted replicas: none without replicas, else its WithGuardReplicas's
// share of k (acks when it has none).
func (call guardedCall) acksAt(k int) int {
	switch {
	case k == 0:
		return 0
	case call.want != 0:
		return guardAcks(call.want, k)
	}
	return call.acks
}

// guardedReply is the reply to one call of sendGuardedBatch.
type guardedReply struct {
	reply rueidis.RedisResult
	err   error // the call could not be built (reply unset)
	acked bool  // the call's acks replicas acknowledged the write within the timeout
	acks  int   // the replicas its WAIT asked for: the call's, or the named primary's after a redirect
}

// guardStall is how long past its WAIT's timeout a guarded call, from when
// it is sent, waits for its reply before it is cut off as stalled
// (errGuardStalled): rueidis's
// default ConnWriteTimeout, past Redis's default busy-reply-threshold (5 s),
// before which a server running a long script answers nobody.
const guardStall = 10 * time.Second // the Client's guardStall, shorter in tests

// errGuardStalled is a guarded call cut off without a reply (guardStall):
// the server or its connection stalled, and the call may have run.
var errGuardStalled = errors.New("scriptlock: no reply to a guarded call within its WAIT's timeout and 10s (the server or its connection stalled)")

// guardedGroups bounds how many slots' calls a Cluster client's guarded batch
// sends at once, each group on a dedicated connection of its own.
const guardedGroups = 16

// sendGuardedBatch sends the calls (an acquisition, an Extend, a round of
// watchdog renewals) followed by one WAIT on one connection, so the WAIT
// covers every one of them, and reports per call whether its acks replicas
// acknowledged it within timeout. The WAIT asks for the most any call sent
// with it needs, and its reply (how many replicas acknowledged) is compared
// with each call's own. On a Cluster the calls go out per hash
// slot, each slot's with a WAIT of its own on a dedicated connection, after
// CLUSTER MYID, which tells whether they reached the primary counted for
// them (rerouted), and a redirected call is sent again with a WAIT of its
// own to the node named (redirect). The calls answered NOSCRIPT, which ran nothing, are sent
// again with a WAIT of their own as EVAL (generated.EvalOf) the same way,
// so to the primary that answered, which caches the scripts as it runs
// them: loading the scripts on every node of the client would wait for each
// of them under the caller's context, a stalled replica included, for the
// one primary that needs them.
func (c *Client) sendGuardedBatch(ctx context.Context, timeout time.Duration, calls []guardedCall) []guardedReply {
	out := make([]guardedReply, len(calls))
	waitMs := max(timeout.Milliseconds(), 1)
	cluster := c.rc.Mode() == rueidis.ClientModeCluster
	// WAIT makes the batch a blocking call, which rueidis sends on a pooled
	// connection with the caller's deadline alone: no ConnWriteTimeout cuts
	// it, and a Sentinel or Cluster client that leaves the node (a failover)
	// does not close it while in use. Against a primary that stopped
	// answering it waited until the caller's deadline (or for good),
	// however soon the failover was over. The server answers WAIT within
	// its timeout: calls with no reply guardStall after that, counted from
	// when they were sent (a Cluster's later groups wait for a place, and
	// a redirected or NOSCRIPT call goes out again with a WAIT of its own),
	// are cut off as a stalled connection (errGuardStalled), which an
	// acquisition's wait settles and goes on from.
	parent := ctx
	stall := addSat(timeout, c.guardStall)
	stalled := func(err error) bool {
		// Cut off here, or under the call (rueidis reports a connection
		// closed or timed out under a call with a deadline as that
		// deadline), while the caller's own deadline has not passed.
		if !errors.Is(err, context.DeadlineExceeded) || parent.Err() != nil {
			return false
		}
		d, ok := parent.Deadline()
		return !ok || time.Now().Before(d)
	}
	// send sends the calls at idx together with their WAIT.
	send := func(idx []int) {
		eval := false // the calls at idx were answered NOSCRIPT
		waitMs := waitMs
		start := time.Now()
		for {
			if eval {
				// The WAIT sent with the refused scripts covered none of
				// them, yet waited for any earlier write on its pooled
				// connection no replica acknowledged: up to the whole
				// timeout. The EVAL's WAIT gets what is left of it, so the
				// guard waits no longer than its timeout in all (an
				// acquisition's wait lets its attempt run that long past
				// its end, waitSpec.overrun, and cut off the attempt as a
				// wait that ran out when it waited twice). At least 1 ms:
				// WAIT 0 would wait for good.
				waitMs = max((timeout - time.Since(start)).Milliseconds(), 1)
			}
			cmds := make(rueidis.Commands, 0, len(idx)+2)
			if cluster {
				// Which primary the calls reach (rerouted).
				cmds = append(cmds, c.rc.B().ClusterMyid().Build())
			}
			sent := make([]int, 0, len(idx))
			acks := 1
			for _, i := range idx {
				cmd, err := c.guardedCommand(calls[i], eval).build()
				if err != nil {
					out[i] = guardedReply{err: err}
					continue
				}
				cmds = append(cmds, cmd)
				sent = append(sent, i)
				acks = max(acks, calls[i].acks)
			}
			if len(sent) == 0 {
				return
			}
			cmds = append(cmds, c.rc.B().Wait().Numreplicas(int64(acks)).Timeout(waitMs).Build())
			var replies []rueidis.RedisResult
			var needs []int // on a Cluster, each call's acks where its WAIT went (rerouted)
			if cluster {
				needs = make([]int, len(sent))
				for j, i := range sent {
					needs[j] = calls[i].acks
				}
			}
			sctx, cancel := context.WithTimeout(parent, stall)
			if cluster {
				// needs of its own: a call cut off (sendBounded) may
				// still be setting them when the replies are read.
				own, waitMs := slices.Clone(needs), waitMs
				var ok bool
				replies, ok = c.sendBounded(parent, sctx, len(cmds)-1, func(ctx context.Context) (replies []rueidis.RedisResult) {
					_ = c.rc.Dedicated(func(d rueidis.DedicatedClient) error {
						replies = d.DoMulti(ctx, cmds...)
						replies = c.rerouted(ctx, d, replies, calls, sent, own, waitMs)
						return nil
					})
					return replies
				})
				if ok {
					needs = own
				}
			} else {
				replies, _ = c.sendBounded(parent, sctx, len(cmds), func(ctx context.Context) []rueidis.RedisResult {
					return c.rc.DoMulti(ctx, cmds...)
				})
			}
			cancel()
			wait := replies[len(replies)-1]
			var noScript []int
			for j, i := range sent {
				r := []rueidis.RedisResult{replies[j], wait}
				acks := calls[i].acks
				if needs != nil {
					acks = needs[j]
				}
				if cluster {
					// A Cluster client follows a MOVED or ASK for the script
					// alone and keeps the old node's WAIT reply, which then
					// vouches for a write it never saw (and rueidis fails on
					// an ASK in such a pipeline). A dedicated connection
					// follows no redirection: the redirected reply comes
					// back, and the script and its WAIT are sent together to
					// the node it names.
					call := c.guardedCommand(calls[i], eval)
					call.acks = acks
					r, acks = c.redirect(parent, r, call, waitMs)
				}
				if stalled(r[0].Error()) {
					r[0] = rueidis.NewErrorResult(errGuardStalled)
				}
				n, werr := r[1].AsInt64()
				c.noteWait(werr)
				// acks 0: a primary without replicas (redirect), where the
				// write stands whatever WAIT answers.
				out[i] = guardedReply{reply: r[0], acked: acks == 0 || werr == nil && n >= int64(acks), acks: acks}
				if werr == nil && n < int64(acks) {
					c.recountSoon()
				}
				if isNoScript(r[0].Error()) {
					noScript = append(noScript, i)
				}
			}
			if len(noScript) == 0 || eval {
				return
			}
			idx, eval = noScript, true
		}
	}
	if !cluster || len(calls) == 1 {
		all := make([]int, len(calls))
		for i := range all {
			all[i] = i
		}
		send(all)
		return out
	}
	// A dedicated Cluster connection serves one slot.
	var order []uint16
	slots := map[uint16][]int{}
	for i, call := range calls {
		cmd, err := call.build()
		if err != nil {
			out[i] = guardedReply{err: err}
			continue
		}
		s := cmd.Slot()
		if _, seen := slots[s]; !seen {
			order = append(order, s)
		}
		slots[s] = append(slots[s], i)
	}
	sem := make(chan struct{}, guardedGroups)
	var wg sync.WaitGroup
	// A panic of a group's send (a client wrapper's) goes on on the
	// caller's goroutine once every group is done, as a single group's
	// does: on the group's own it crashed the process. So does a Goexit
	// there, which left the group's calls with no replies.
	var caught firstPanic
	for _, s := range order {
		sem <- struct{}{}
		wg.Add(1)
		go func(idx []int) {
			defer func() { <-sem; wg.Done() }()
			caught.runIn(ctx, func() { send(idx) })
		}(slots[s])
	}
	wg.Wait()
	if caught.set {
		caught.goOn()
	}
	return out
}
